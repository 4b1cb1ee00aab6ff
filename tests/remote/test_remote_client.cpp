// The remote client and load generator over loopback: against our own `serve` (greedy text equal
// to the local engine's, the server recognised, the benchmark's counts), against a small
// fault-injecting server in this test (a stream dropped mid-way, a stall, 429, 500, broken SSE,
// the wrong content type, a refused connection), and `bench --remote` as a user runs it.
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <thread>

#include "remote/openai_client.h"
#include "remote/serve_benchmark.h"
#include "tests/app/server/serve_process.h"
#include "tests/remote/loopback_http.h"
#include "workbench/chat_reply.h"
#include "tests/skip_missing.h"
#include "workbench/engine.h"
#include "workbench/chat_reply.h"
#include "workbench/json.h"
#include "workbench/store.h"

using namespace wbremote;
using workbench::Json;

namespace {

std::string chunk(const std::string& text, const char* finish = nullptr) {
    Json j = {{"id", "x"}, {"object", "chat.completion.chunk"}, {"choices", {{{"index", 0}, {"delta", {{"content", text}}},
                                                                               {"finish_reason", finish ? Json(finish) : Json(nullptr)}}}}};
    return "data: " + workbench::dump_json(j) + "\n\n";
}

// Serves /v1/models and /v1/chat/completions; the requested model picks the fault.
class FaultServer {
public:
    FaultServer() {
        httplib::Server& http_ = server_.http;
        http_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(R"({"object":"list","data":[{"id":"faulty","object":"model","owned_by":"vllm"}]})", "application/json");
        });
        http_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
            const std::string model = workbench::parse_json(req.body)->value("model", "");
            ++requests_;
            if (model == "429") {
                res.status = 429;
                res.set_content(R"({"error":{"message":"rate limited, slow down","type":"rate_limit"}})", "application/json");
            } else if (model == "500") {
                res.status = 500;
                res.set_content("upstream exploded", "text/plain");
            } else if (model == "html") {
                res.set_content("<html>hello</html>", "text/html");
            } else if (model == "every-other" && requests_ % 2 == 0) {
                res.status = 503;
                res.set_content(R"({"error":{"message":"overloaded"}})", "application/json");
            } else {
                res.set_chunked_content_provider("text/event-stream", [model](size_t, httplib::DataSink& sink) {
                    auto send = [&](const std::string& s) { return sink.write(s.data(), s.size()); };
                    if (model == "thinks-and-calls") {
                        // vLLM's shape: reasoning deltas, then a call whose arguments come in fragments.
                        auto delta = [](const workbench::Json& d, const char* finish = nullptr) {
                            workbench::Json j = {{"choices", {{{"index", 0}, {"delta", d}}}}};
                            if (finish) j["choices"][0]["finish_reason"] = finish;
                            return "data: " + workbench::dump_json(j) + "\n\n";
                        };
                        send(delta({{"reasoning_content", "Paris, "}}) + delta({{"reasoning_content", "so weather."}}));
                        send(delta({{"tool_calls", {{{"index", 0}, {"id", "call_7"}, {"type", "function"},
                                                     {"function", {{"name", "get_weather"}, {"arguments", "{\"ci"}}}}}}}));
                        send(delta({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "ty\": \"Paris\"}"}}}}}}}));
                        send(delta(workbench::Json::object(), "tool_calls") + "data: [DONE]\n\n");
                    } else if (model == "bad-sse") {
                        send("garbage line\n" + chunk("Hel") + "data: {not json\n\n" + chunk("lo", "stop") + "data: [DONE]\n\n");
                    } else {
                        send(chunk("Hel"));
                        send(chunk("lo"));
                        if (model == "drop") return false;   // the connection ends mid-stream
                        if (model == "stall") std::this_thread::sleep_for(std::chrono::seconds(3));
                        send(chunk("!", "stop") + "data: [DONE]\n\n");
                    }
                    sink.done();
                    return true;
                });
            }
        });
        server_.start();
    }
    std::string url() const { return server_.url(); }

private:
    std::atomic<int> requests_{0};
    wbtest::LoopbackHttp server_;   // last: stopped first, while requests_ still exists
};

RemoteCompletion ask(const std::string& url, const std::string& model, int read_timeout_s = 10) {
    RemoteEndpoint e{url, "", 2, read_timeout_s};
    RemoteRequest r;
    r.model = model;
    r.messages = {{"user", "hi"}};
    return stream_completion(e, r);
}

}  // namespace

class TestRemoteClient : public QObject {
    Q_OBJECT
private slots:
    void faults_are_reported_with_what_arrived() {
        FaultServer server;
        const RemoteCompletion fine = ask(server.url(), "fine");
        QVERIFY2(fine.ok, fine.error.c_str());
        QCOMPARE(fine.text, std::string("Hello!"));
        QCOMPARE(fine.finish_reason, std::string("stop"));
        QCOMPARE(fine.metrics.n_output_tokens, 3);
        QCOMPARE(fine.metrics.itl_ms.size(), size_t(2));

        const RemoteCompletion drop = ask(server.url(), "drop");
        QVERIFY(!drop.ok && drop.partial);
        QCOMPARE(drop.text, std::string("Hello"));   // kept, and marked partial
        QVERIFY2(drop.error.find("the text so far is kept") != std::string::npos, drop.error.c_str());

        const auto t0 = std::chrono::steady_clock::now();
        const RemoteCompletion stall = ask(server.url(), "stall", 1);
        QVERIFY(!stall.ok && stall.partial);
        QCOMPARE(stall.text, std::string("Hello"));
        QVERIFY2(stall.error.find("stalled") != std::string::npos, stall.error.c_str());
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2900));   // the read timeout, not the stall, ended it

        // A cancel while the server is silent ends the call at once, keeping what came.
        std::atomic<bool> cancel{false};
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            cancel = true;
        });
        const auto t1 = std::chrono::steady_clock::now();
        RemoteRequest stalled;
        stalled.model = "stall";
        stalled.messages = {{"user", "hi"}};
        const RemoteCompletion cancelled = stream_completion({server.url(), "", 2, 10}, stalled, {}, &cancel);
        canceller.join();
        QVERIFY(std::chrono::steady_clock::now() - t1 < std::chrono::milliseconds(1500));
        QVERIFY(!cancelled.ok && cancelled.partial);
        QCOMPARE(cancelled.text, std::string("Hello"));
        QCOMPARE(cancelled.error, std::string("cancelled"));

        const RemoteCompletion limited = ask(server.url(), "429");
        QVERIFY(!limited.ok && !limited.partial);
        QCOMPARE(limited.http_status, 429);
        QCOMPARE(limited.error, std::string("HTTP 429: rate limited, slow down"));

        const RemoteCompletion broken = ask(server.url(), "500");
        QCOMPARE(broken.http_status, 500);
        QCOMPARE(broken.error, std::string("HTTP 500: upstream exploded"));

        const RemoteCompletion html = ask(server.url(), "html");
        QVERIFY(!html.ok);
        QVERIFY2(html.error.find("not an event stream") != std::string::npos, html.error.c_str());

        const RemoteCompletion bad = ask(server.url(), "bad-sse");
        QVERIFY2(bad.ok, bad.error.c_str());
        QCOMPARE(bad.text, std::string("Hello"));
        QCOMPARE(bad.n_malformed_lines, 2);   // the junk line and the event that is not JSON

        const RemoteCompletion refused = ask("http://127.0.0.1:1/v1", "x");
        QVERIFY(!refused.ok);
        QCOMPARE(refused.http_status, 0);
        QVERIFY2(refused.error.find("cannot connect") != std::string::npos, refused.error.c_str());
        QVERIFY(!ask("not a url", "x").ok);
    }

    // Thinking and calls arrive in their own delta fields; the text reads them in the chat's
    // Hermes form, the call whole with the server's id, and each delta counts as an arrival.
    void reasoning_and_tool_call_deltas_become_text() {
        FaultServer server;
        std::string pieces;
        RemoteRequest r;
        r.model = "thinks-and-calls";
        r.messages = {{"user", "weather in Paris?"}};
        const RemoteCompletion c = stream_completion({server.url(), "", 2, 10}, r, [&](std::string_view t, double) { pieces += t; });
        QVERIFY2(c.ok, c.error.c_str());
        QCOMPARE(c.text, pieces);
        QCOMPARE(c.finish_reason, std::string("tool_calls"));
        QCOMPARE(c.metrics.n_output_tokens, 4);
        const workbench::ChatFormat hermes{workbench::ToolCallFormat::hermes, false, true};
        const workbench::ChatReply reply = workbench::parse_chat_reply(hermes, c.text, true, false);
        QCOMPARE(reply.reasoning, std::string("Paris, so weather."));
        QCOMPARE(reply.tool_calls.size(), size_t(1));
        QCOMPARE(reply.tool_calls[0].id, std::string("call_7"));
        QCOMPARE(reply.tool_calls[0].name, std::string("get_weather"));
        QCOMPARE(workbench::parse_json(reply.tool_calls[0].arguments)->value("city", ""), std::string("Paris"));
        QVERIFY2(reply.content.find_first_not_of(" \n") == std::string::npos, reply.content.c_str());
    }

    void a_benchmark_counts_failures_and_finishes() {
        FaultServer server;
        ServeBenchmarkOptions o;
        o.model = "every-other";
        o.num_prompts = 10;
        o.concurrency = 1;
        RemoteRequest r;
        r.messages = {{"user", "hi"}};
        o.prompts = {r};
        auto result = run_serve_benchmark({server.url(), "", 2, 10}, o);
        QVERIFY(result.ok());
        QCOMPARE(result->server, ServerKind::vllm);   // from owned_by
        QCOMPARE(result->batch.metrics.n_completed + result->batch.metrics.n_failed, 10);
        QCOMPARE(result->batch.metrics.n_failed, 5);
        QCOMPARE(result->errors.size(), size_t(5));
        QVERIFY2(result->errors[0].find("HTTP 503: overloaded") != std::string::npos, result->errors[0].c_str());
        // Nothing listening: an error before anything is sent.
        QVERIFY(!run_serve_benchmark({"http://127.0.0.1:1/v1", "", 2, 5}, o).ok());
    }

    void our_serve_through_the_remote_client_equals_the_local_engine() {
        if (!QFile::exists(QStringLiteral(WB_DEFAULT_MODEL_PATH))) WB_SKIP_MISSING("the default model is not installed (installer/bootstrap.sh)");
        wbtest::ServeProcess serve;
        QVERIFY2(serve.start({}), serve.log.c_str());
        const RemoteEndpoint e{"http://127.0.0.1:" + std::to_string(serve.port), "", 5, 60};   // /v1 added
        auto models = list_models(e);
        QVERIFY(models.ok());
        QCOMPARE(models->front().id, std::string("SmolLM2-135M-Instruct.Q4_1"));
        QCOMPARE(models->front().max_model_len, int64_t(8192));
        QCOMPARE(detect_server_kind(e, *models), ServerKind::workbench);
        QVERIFY(!remote_token_count(e, models->front().id, "hello").has_value());   // our server has no /tokenize

        workbench::EngineConfig config;
        config.model_path = WB_DEFAULT_MODEL_PATH;
        auto engine = workbench::Engine::load(config);
        QVERIFY(engine.ok());
        for (bool chat : {true, false}) {
            RemoteRequest r;
            r.chat = chat;
            r.messages = {{"user", "Name the largest planet."}};
            r.prompt = "The largest planet in the solar system is";
            r.generation.max_tokens = 24;
            r.generation.sampling.temperature = 0;
            std::string streamed;
            const RemoteCompletion got = stream_completion(e, r, [&](std::string_view t, double) { streamed += t; });
            QVERIFY2(got.ok, got.error.c_str());
            QCOMPARE(streamed, got.text);
            const std::string text = chat ? (*engine)->render_chat(r.messages, true) : r.prompt;
            workbench::BatchRequest local;
            local.prompt = (*engine)->tokenize(text, true, true);
            local.generation.max_tokens = 24;
            local.generation.sampling.temperature = 0;
            auto expected = (*engine)->run_batch({local}, {});
            QVERIFY(expected.ok());
            QCOMPARE(got.text, expected->completions[0].text);
            QCOMPARE(got.metrics.n_prompt_tokens, static_cast<int32_t>(local.prompt.size()));
            QCOMPARE(got.metrics.n_output_tokens, static_cast<int32_t>(expected->completions[0].tokens.size()));
            QVERIFY(got.metrics.ttft_ms > 0 && got.metrics.e2e_ms >= got.metrics.ttft_ms);
        }

        // The load generator: random prompts sized from the server's usage counts.
        ServeBenchmarkOptions o;
        o.num_prompts = 8;
        o.input_len = 48;
        o.output_len = 16;
        o.concurrency = 4;
        auto bench = run_serve_benchmark(e, o);
        QVERIFY(bench.ok());
        const workbench::BatchMetrics& m = bench->batch.metrics;
        QCOMPARE(m.n_completed, 8);
        QCOMPARE(m.n_output_tokens, int64_t(8 * 16));   // ignore_eos
        QVERIFY2(m.n_prompt_tokens >= 8 * 40 && m.n_prompt_tokens <= 8 * 56, std::to_string(m.n_prompt_tokens).c_str());
        QVERIFY(m.ttft_ms.mean > 0 && m.tpot_ms.mean > 0 && m.itl_ms.n >= 8 * 15 && m.output_tok_s > 0);

        // bench --remote as a user runs it: vllm bench serve's block, and the runs in a database.
        QTemporaryDir dir;
        const QString db = dir.filePath("history.db");
        QProcess cli;
        cli.start(QStringLiteral(WB_CLI_PATH), {"bench", "--remote", QString::fromStdString(e.base_url), "--num-prompts", "6", "--input-len",
                                                "32", "--output-len", "8", "--concurrency", "3", "--db", db});
        QVERIFY(cli.waitForFinished(120000));
        QCOMPARE(cli.exitCode(), 0);
        const QString out = QString::fromUtf8(cli.readAllStandardOutput());
        for (const char* line : {"Successful requests:                     6", "Failed requests:                         0",
                                 "Total generated tokens:                  48", "Benchmark duration (s):", "Request throughput (req/s):",
                                 "Output token throughput (tok/s):", "Total token throughput (tok/s):", "Mean TTFT (ms):",
                                 "Median TPOT (ms):", "P99 ITL (ms):", "Mean E2EL (ms):", "Server:                                  workbench"})
            QVERIFY2(out.contains(QString::fromUtf8(line)), qPrintable(out));
        workbench::StoreOptions options;
        options.path = db.toStdString();
        auto store = workbench::Store::open(options);
        QVERIFY(store.ok());
        auto configurations = (*store)->list_configurations();
        QVERIFY(configurations.ok());
        QCOMPARE(configurations->size(), size_t(1));
        const workbench::ConfigurationRecord& c = configurations->front();
        QCOMPARE(c.backend, std::string("remote"));
        QCOMPARE(c.variant, std::string("workbench"));
        QCOMPARE(c.model, std::string("SmolLM2-135M-Instruct.Q4_1"));
        QVERIFY(c.config_json.find(e.base_url) != std::string::npos);
        auto sessions = (*store)->list_sessions();
        QVERIFY(sessions.ok());
        QCOMPARE(sessions->size(), size_t(1));
        auto runs = (*store)->load_runs(sessions->front().id);
        QVERIFY(runs.ok());
        QCOMPARE(runs->size(), size_t(6));
        for (const auto& run : *runs) {
            QCOMPARE(run.provenance.backend, std::string("remote"));
            QCOMPARE(run.n_tokens_generated, 8);
            QVERIFY(run.ttft_ms && *run.ttft_ms > 0);
        }
        auto benchmarks = (*store)->list_benchmarks();
        QVERIFY(benchmarks.ok());
        QCOMPARE(benchmarks->size(), size_t(1));
        QCOMPARE(benchmarks->front().test_name, std::string("serve c=3 rate=inf"));
        QVERIFY(benchmarks->front().avg_ts > 0);

        // A list of levels: one benchmark each (--json: a line each), a curve in one command.
        QProcess sweep;
        sweep.start(QStringLiteral(WB_CLI_PATH), {"bench", "--remote", QString::fromStdString(e.base_url), "--num-prompts", "4", "--input-len",
                                                  "16", "--output-len", "4", "--concurrency", "1,2", "--json"});
        QVERIFY(sweep.waitForFinished(120000));
        QCOMPARE(sweep.exitCode(), 0);
        const QList<QByteArray> lines = sweep.readAllStandardOutput().trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        for (int i = 0; i < 2; ++i) {
            auto j = workbench::parse_json(lines[i].toStdString());
            QVERIFY(j.ok());
            QCOMPARE((*j)["concurrency"].get<int>(), i + 1);
            QCOMPARE((*j)["completed"].get<int>(), 4);
        }
        QProcess bad;
        bad.start(QStringLiteral(WB_CLI_PATH), {"bench", "--remote", QString::fromStdString(e.base_url), "--concurrency", "1,x"});
        QVERIFY(bad.waitForFinished(30000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(bad.readAllStandardError().contains("'x' is not a whole number"));
        QCOMPARE(serve.stop(), 0);
    }
};

QTEST_APPLESS_MAIN(TestRemoteClient)
#include "test_remote_client.moc"
