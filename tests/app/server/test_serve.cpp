// `workbench-cli serve` on the real default model, over loopback: streamed and whole answers
// equal the engine's own greedy output, the documented fields (n, seed, stop, logprobs, usage),
// /metrics, a client that disconnects mid-stream freeing its KV, a table of malformed and
// hostile HTTP requests each answered with its documented status while the server stays up,
// the API key and the connection limit.
#include <QFile>
#include <QTest>

#include <chrono>
#include <cmath>
#include <thread>

#include "serve_process.h"
#include "sse_stream.h"
#include "tests/skip_missing.h"
#include "workbench/engine.h"
#include "workbench/json.h"

using workbench::Json;
// nlohmann values compared through their text (QCOMPARE cannot print them).
#define QCOMPARE_JSON(a, b) QCOMPARE(workbench::dump_json(a), workbench::dump_json(b))

using wbtest::ServeProcess;
using wbtest::Streamed;
using wbtest::parse;
using wbtest::parse_stream;

namespace {

std::string post(const ServeProcess& server, const char* path, const Json& body, int* status = nullptr) {
    auto cli = server.client();
    auto res = cli.Post(path, workbench::dump_json(body), "application/json");
    if (!res) return "";
    if (status) *status = res->status;
    return res->body;
}

std::string get(const ServeProcess& server, const char* path, int* status = nullptr) {
    auto cli = server.client();
    auto res = cli.Get(path);
    if (!res) return "";
    if (status) *status = res->status;
    return res->body;
}

// What the engine itself generates greedily for these prompt tokens.
std::string in_process_greedy(workbench::Engine& engine, const std::vector<workbench::TokenId>& prompt, int max_tokens) {
    workbench::BatchRequest r;
    r.prompt = prompt;
    r.generation.max_tokens = max_tokens;
    r.generation.sampling.temperature = 0;
    auto result = engine.run_batch({r}, {});
    if (!result.ok() || result->completions.empty() || !result->completions[0].ok) return "<failed>";
    return result->completions[0].text;
}

// A raw exchange: sends `bytes`, returns the answer (head and body).
std::string exchange(int port, const std::string& bytes, int timeout_ms = 5000) { return wbtest::round_trip(port, bytes, timeout_ms); }

}  // namespace

class TestServe : public QObject {
    Q_OBJECT
    ServeProcess server_;
    std::unique_ptr<workbench::Engine> engine_;

private slots:
    void initTestCase() {
        if (!QFile::exists(QStringLiteral(WB_DEFAULT_MODEL_PATH))) WB_SKIP_MISSING("the default model is not installed (installer/bootstrap.sh)");
        QVERIFY2(server_.start({"--timeout", "2"}), server_.log.c_str());
        engine_ = wbtest::load_default_engine();
        QVERIFY(engine_);
    }
    void cleanupTestCase() { QCOMPARE(server_.stop(), 0); }

    void health_models_and_unknown_model() {
        int status = 0;
        QCOMPARE_JSON(parse(get(server_, "/health", &status))["status"], Json("ok"));
        QCOMPARE(status, 200);
        const Json models = parse(get(server_, "/v1/models", &status));
        QCOMPARE(status, 200);
        QCOMPARE_JSON(models["data"][0]["id"], Json("SmolLM2-135M-Instruct.Q4_1"));
        const Json e = parse(post(server_, "/v1/completions", {{"prompt", "x"}, {"model", "gpt-4"}}, &status));
        QCOMPARE(status, 404);
        QCOMPARE_JSON(e["error"]["code"], Json("model_not_found"));
        QCOMPARE_JSON(e["error"]["param"], Json("model"));
    }

    void streamed_and_whole_greedy_text_equal_the_engines() {
        const std::vector<workbench::ChatMessage> chat = {{"user", "What is the capital of France? Answer in one sentence."}};
        const auto chat_tokens = engine_->tokenize(engine_->render_chat(chat, true), true, true);
        const std::string chat_expected = in_process_greedy(*engine_, chat_tokens, 32);
        const auto text_tokens = engine_->tokenize("The three primary colours are", true, true);
        const std::string text_expected = in_process_greedy(*engine_, text_tokens, 32);
        QVERIFY(!chat_expected.empty() && !text_expected.empty());
        for (bool stream : {false, true}) {
            const Json chat_body = {{"messages", {{{"role", "user"}, {"content", chat[0].content}}}}, {"max_tokens", 32}, {"temperature", 0},
                                    {"stream", stream}, {"model", "SmolLM2-135M-Instruct.Q4_1"}};
            const Json text_body = {{"prompt", "The three primary colours are"}, {"max_tokens", 32}, {"temperature", 0}, {"stream", stream}};
            const std::string chat_out = post(server_, "/v1/chat/completions", chat_body);
            const std::string text_out = post(server_, "/v1/completions", text_body);
            if (stream) {
                const Streamed c = parse_stream(chat_out, true, 1), t = parse_stream(text_out, false, 1);
                QVERIFY2(c.error.empty(), c.error.c_str());
                QVERIFY2(t.error.empty(), t.error.c_str());
                QCOMPARE(c.text[0], chat_expected);
                QCOMPARE(t.text[0], text_expected);
                QVERIFY(c.n_chunks >= 3);
                QVERIFY(c.usage.is_null());   // not asked for
            } else {
                const Json c = parse(chat_out), t = parse(text_out);
                QCOMPARE_JSON(c["object"], Json("chat.completion"));
                QCOMPARE_JSON(c["choices"][0]["message"]["role"], Json("assistant"));
                QCOMPARE(c["choices"][0]["message"]["content"].get<std::string>(), chat_expected);
                QCOMPARE(c["usage"]["prompt_tokens"].get<size_t>(), chat_tokens.size());
                QCOMPARE_JSON(t["object"], Json("text_completion"));
                QCOMPARE(t["choices"][0]["text"].get<std::string>(), text_expected);
                QCOMPARE(t["usage"]["total_tokens"].get<int>(), t["usage"]["prompt_tokens"].get<int>() + t["usage"]["completion_tokens"].get<int>());
            }
        }
        // Token ids as the prompt give the same text as the string they came from.
        Json ids = Json::array();
        for (auto t : text_tokens) ids.push_back(t);
        const Json t = parse(post(server_, "/v1/completions", {{"prompt", ids}, {"max_tokens", 32}, {"temperature", 0}}));
        QCOMPARE(t["choices"][0]["text"].get<std::string>(), text_expected);
    }

    void n_seed_stop_usage_and_logprobs() {
        // n samples, reproducible with a seed, each its own index.
        const Json body = {{"prompt", "My favourite animal is"}, {"max_tokens", 12}, {"n", 3}, {"seed", 42}, {"temperature", 1.0}};
        const Json a = parse(post(server_, "/v1/completions", body)), b = parse(post(server_, "/v1/completions", body));
        QCOMPARE(a["choices"].size(), size_t(3));
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(a["choices"][i]["index"].get<int>(), i);
            QCOMPARE_JSON(a["choices"][i]["text"], b["choices"][i]["text"]);
        }
        QVERIFY(a["choices"][0]["text"] != a["choices"][1]["text"] || a["choices"][1]["text"] != a["choices"][2]["text"]);
        // A stop string cuts the greedy text before it, with finish_reason stop.
        const auto tokens = engine_->tokenize("The three primary colours are", true, true);
        const std::string full = in_process_greedy(*engine_, tokens, 32);
        const std::string stop = full.substr(full.size() / 2, 3);
        const std::string before = full.substr(0, full.find(stop));
        for (bool stream : {false, true}) {
            const std::string out = post(server_, "/v1/completions",
                                         {{"prompt", "The three primary colours are"}, {"max_tokens", 32}, {"temperature", 0}, {"stop", {stop}},
                                          {"stream", stream}, {"stream_options", stream ? Json{{"include_usage", true}} : Json(nullptr)}});
            if (stream) {
                const Streamed s = parse_stream(out, false, 1);
                QVERIFY2(s.error.empty(), s.error.c_str());
                QCOMPARE(s.text[0], before);
                QCOMPARE(s.finish[0], std::string("stop"));
                QVERIFY(s.usage["completion_tokens"].get<int>() > 0);
            } else {
                const Json j = parse(out);
                QCOMPARE(j["choices"][0]["text"].get<std::string>(), before);
                QCOMPARE_JSON(j["choices"][0]["finish_reason"], Json("stop"));
            }
        }
        // Length: finish_reason length, completion_tokens = max_tokens.
        const Json len = parse(post(server_, "/v1/completions", {{"prompt", "Count: 1, 2, 3,"}, {"max_tokens", 5}, {"temperature", 0}, {"ignore_eos", true}}));
        QCOMPARE_JSON(len["choices"][0]["finish_reason"], Json("length"));
        QCOMPARE(len["usage"]["completion_tokens"].get<int>(), 5);
        // Chat logprobs: one entry per token, greedy picks the top alternative.
        const Json lp = parse(post(server_, "/v1/chat/completions",
                                   {{"messages", {{{"role", "user"}, {"content", "Say hello."}}}}, {"max_tokens", 6}, {"temperature", 0},
                                    {"logprobs", true}, {"top_logprobs", 3}}));
        const Json& content = lp["choices"][0]["logprobs"]["content"];
        QCOMPARE(content.size(), lp["usage"]["completion_tokens"].get<size_t>());
        for (const Json& e : content) {
            QCOMPARE(e["top_logprobs"].size(), size_t(3));
            QVERIFY(e["logprob"].get<double>() <= 0);
            QCOMPARE_JSON(e["top_logprobs"][0]["token"], e["token"]);
            QVERIFY(std::abs(e["top_logprobs"][0]["logprob"].get<double>() - e["logprob"].get<double>()) < 1e-6);
        }
        // Completions logprobs: tokens, token_logprobs, top_logprobs, text_offset line up.
        const Json clp = parse(post(server_, "/v1/completions", {{"prompt", "Hello"}, {"max_tokens", 4}, {"temperature", 0}, {"logprobs", 2}}));
        const Json& l = clp["choices"][0]["logprobs"];
        QCOMPARE(l["tokens"].size(), size_t(4));
        QCOMPARE(l["token_logprobs"].size(), size_t(4));
        QCOMPARE(l["top_logprobs"][0].size(), size_t(2));
        QCOMPARE(l["text_offset"][0].get<int>(), 0);
    }

    void speculative_requests_are_lossless() {
        // Prompt lookup per request: the same greedy text as the engine's plain run.
        const std::string prompt = "List: red, green, blue, red, green, blue, red, green, blue, red,";
        const auto tokens = engine_->tokenize(prompt, true, true);
        const std::string expected = in_process_greedy(*engine_, tokens, 32);
        for (bool stream : {false, true}) {
            const Json body = {{"prompt", prompt}, {"max_tokens", 32}, {"temperature", 0}, {"stream", stream},
                               {"speculative", {{"draft", "lookup"}, {"draft_max", 6}, {"ngram", 2}}}};
            const std::string out = post(server_, "/v1/completions", body);
            if (stream) {
                const Streamed s = parse_stream(out, false, 1);
                QVERIFY2(s.error.empty(), s.error.c_str());
                QCOMPARE(s.text[0], expected);
            } else {
                QCOMPARE(parse(out)["choices"][0]["text"].get<std::string>(), expected);
            }
        }
        const std::string metrics = get(server_, "/metrics");
        QVERIFY(wbtest::metric(metrics, "workbench:spec_decode_num_draft_tokens_total") > 0);
        QVERIFY(wbtest::metric(metrics, "workbench:spec_decode_num_accepted_tokens_total") > 0);
        // A draft model this server did not load: a 400 naming it.
        int status = 0;
        const Json e = parse(post(server_, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 4}, {"speculative", {{"draft", "model"}}}}, &status));
        QCOMPARE(status, 400);
        QVERIFY2(e["error"]["message"].get<std::string>().find("draft model") != std::string::npos, e.dump().c_str());
    }

    void metrics_are_prometheus_text_with_vllms_names() {
        const std::string text = get(server_, "/metrics");
        for (const char* name : {"workbench:num_requests_running", "workbench:num_requests_waiting", "workbench:kv_cache_usage_perc",
                                 "workbench:kv_cache_usage_bytes", "workbench:prefix_cache_hits_total", "workbench:prefix_cache_queries_total",
                                 "workbench:prompt_tokens_total", "workbench:generation_tokens_total"})
            QVERIFY2(!std::isnan(wbtest::metric(text, name)), name);
        for (const char* h : {"workbench:time_to_first_token_seconds", "workbench:time_per_output_token_seconds",
                              "workbench:inter_token_latency_seconds", "workbench:e2e_request_latency_seconds"}) {
            QVERIFY2(text.find(std::string("# TYPE ") + h + " histogram") != std::string::npos, h);
            QVERIFY2(wbtest::metric(text, std::string(h) + "_count") >= 5, h);   // the requests above
            QVERIFY(text.find(std::string(h) + "_bucket{model_name=\"SmolLM2-135M-Instruct.Q4_1\",le=\"+Inf\"}") != std::string::npos);
        }
        QVERIFY(wbtest::metric(text, "workbench:generation_tokens_total") >= 50);
        // The same prompt twice: the second finds it in the prefix cache.
        QVERIFY(wbtest::metric(text, "workbench:prefix_cache_hits_total") > 0);
        QCOMPARE(wbtest::metric(text, "workbench:num_requests_running"), 0.0);
    }

    void a_client_that_disconnects_mid_stream_frees_its_kv() {
        const int fd = wbtest::connect_loopback(server_.port);
        QVERIFY(fd >= 0);
        const std::string body = R"({"prompt": "Write a very long story about a dragon.", "max_tokens": 4000, "ignore_eos": true, "stream": true})";
        QVERIFY(wbtest::send_all(fd, "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
                                         std::to_string(body.size()) + "\r\n\r\n" + body));
        QVERIFY(wbtest::receive(fd, "data: ").find("data: ") != std::string::npos);
        const std::string during = get(server_, "/metrics");
        QCOMPARE(wbtest::metric(during, "workbench:num_requests_running"), 1.0);
        QVERIFY(wbtest::metric(during, "workbench:kv_cache_usage_bytes") > 0);
        ::close(fd);
        double running = -1, kv = -1;
        for (int i = 0; i < 100 && (running != 0 || kv != 0); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            const std::string after = get(server_, "/metrics");
            running = wbtest::metric(after, "workbench:num_requests_running");
            kv = wbtest::metric(after, "workbench:kv_cache_usage_bytes");
        }
        QCOMPARE(running, 0.0);
        QCOMPARE(kv, 0.0);
        // Far fewer than 4000 tokens were generated for it.
        QVERIFY(wbtest::metric(get(server_, "/metrics"), "workbench:generation_tokens_total") < 2000);
    }

    void hostile_requests_get_their_documented_status_data() {
        QTest::addColumn<QByteArray>("request");
        QTest::addColumn<int>("status");
        auto post_body = [](const std::string& path, const std::string& body, const std::string& extra = "") {
            return QByteArray::fromStdString("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extra +
                                             "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
        };
        auto row = [](const char* name, QByteArray req, int status) { QTest::newRow(name) << req << status; };
        row("unknown path", "GET /v2/whatever HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404);
        row("path traversal", "GET /../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404);
        row("DELETE on completions", "DELETE /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405);
        row("PUT on chat", post_body("/v1/chat/completions", "{}").replace("POST", "PUT"), 405);
        row("POST on health", post_body("/health", "{}"), 405);
        row("GET on chat", "GET /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405);
        row("unknown method", "BREW /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400);
        row("garbage request line", "GARBAGE\r\n\r\n", 400);
        row("binary junk", QByteArray("\x00\x01\x02\xff\xfe\r\n\r\n", 9), 400);
        row("URI too long", QByteArray::fromStdString("GET /" + std::string(10000, 'a') + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), 414);
        row("header too long", QByteArray::fromStdString("GET /health HTTP/1.1\r\nX-Big: " + std::string(10000, 'b') + "\r\n\r\n"), 431);
        row("malformed JSON", post_body("/v1/completions", "{\"prompt\": "), 400);
        row("JSON array", post_body("/v1/completions", "[1,2]"), 400);
        row("empty body", post_body("/v1/chat/completions", ""), 400);
        row("no body at all", "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400);
        row("bad UTF-8", post_body("/v1/completions", "{\"prompt\": \"\xc3\x28\"}"), 400);
        row("deep nesting", post_body("/v1/completions", std::string(50000, '[') + std::string(50000, ']')), 400);
        row("declared body too large", "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999\r\n\r\n{", 413);
        row("Content-Length not a number", "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ten\r\n\r\n{}", 400);
        row("multipart body", post_body("/v1/completions", "--b\r\n\r\n--b--", "").replace("application/json", "multipart/form-data; boundary=b"), 415);
        row("n over the limit", post_body("/v1/completions", R"({"prompt": "x", "n": 100})"), 400);
        row("max_tokens past the context", post_body("/v1/completions", R"({"prompt": "x", "max_tokens": 100000})"), 400);
        std::string long_prompt = "[";
        for (int i = 0; i < 9000; ++i) long_prompt += std::string(i ? "," : "") + "42";
        row("prompt past the context", post_body("/v1/completions", R"({"prompt": )" + long_prompt + "]}"), 400);
        row("token id outside the vocabulary", post_body("/v1/completions", R"({"prompt": [1, 1000000000]})"), 400);
        row("wrong role", post_body("/v1/chat/completions", R"({"messages": [{"role": "wizard", "content": "x"}]})"), 400);
        row("body shorter than declared (slow sender)", "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"prompt\"", 408);
        row("chunked body cut short", "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"pro", 408);
        row("bad chunk size", "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 400);
        row("HTTP/1.0 without Host", "GET /health HTTP/1.0\r\n\r\n", 200);
    }
    void hostile_requests_get_their_documented_status() {
        QFETCH(QByteArray, request);
        QFETCH(int, status);
        const auto t0 = std::chrono::steady_clock::now();
        const std::string response = exchange(server_.port, request.toStdString(), 8000);
        QCOMPARE(wbtest::status_of(response), status);
        // Answered within the server's 2 s read timeout plus slack: nothing hangs.
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(6));
        // The server is still up and answers the next request.
        int health = 0;
        get(server_, "/health", &health);
        QCOMPARE(health, 200);
    }

    void oversize_chunked_body_is_refused_after_the_limit() {
        const int fd = wbtest::connect_loopback(server_.port);
        std::string head = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n";
        QVERIFY(wbtest::send_all(fd, head));
        const std::string chunk(1 << 20, 'a');
        char size_line[32];
        std::snprintf(size_line, sizeof size_line, "%zx\r\n", chunk.size());
        bool refused_early = false;
        for (int i = 0; i < 12 && !refused_early; ++i)   // 12 MiB offered, the limit is 8
            refused_early = !wbtest::send_all(fd, size_line + chunk + "\r\n");
        const std::string response = wbtest::receive(fd, "\r\n\r\n");
        ::close(fd);
        QCOMPARE(wbtest::status_of(response), 413);
    }

    void half_closed_and_silent_clients_do_not_hold_the_server() {
        // Half-closed after a partial request line: the server gives up, no hang.
        int fd = wbtest::connect_loopback(server_.port);
        wbtest::send_all(fd, "GET /hea");
        ::shutdown(fd, SHUT_WR);
        const auto t0 = std::chrono::steady_clock::now();
        wbtest::receive(fd);
        ::close(fd);
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(6));
        // Silent after connecting: closed by the server's timeouts.
        fd = wbtest::connect_loopback(server_.port, 15000);
        const auto t1 = std::chrono::steady_clock::now();
        const std::string got = wbtest::receive(fd);
        ::close(fd);
        QVERIFY(got.empty());
        QVERIFY(std::chrono::steady_clock::now() - t1 < std::chrono::seconds(12));
        int health = 0;
        get(server_, "/health", &health);
        QCOMPARE(health, 200);
    }

    void api_key_and_connection_limit() {
        ServeProcess guarded;
        QVERIFY2(guarded.start({"--api-key", "s3cret-key", "--max-connections", "3"}), guarded.log.c_str());
        // Each on a connection of its own that the client closes. The server notices a close a
        // moment later, so under load the previous ones may still count against the limit: a 503
        // (come back later) is retried, as a client would.
        auto status = [&](const std::string& request) {
            int code = 503;
            for (int attempt = 0; attempt < 40 && code == 503; ++attempt) {
                if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
                code = wbtest::status_of(exchange(guarded.port, request));
            }
            return code;
        };
        QCOMPARE(status("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), 401);
        {   // OpenAI's error type for a missing key
            auto cli = guarded.client();
            auto res = cli.Get("/v1/models");
            QVERIFY(res && res->status == 401);
            QCOMPARE_JSON(parse(res->body)["error"]["type"], Json("invalid_request_error"));
        }
        QCOMPARE(status("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\nConnection: close\r\n\r\n"), 401);
        QCOMPARE(status("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret-key\r\nConnection: close\r\n\r\n"), 200);
        QCOMPARE(status("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"), 401);
        QCOMPARE(status("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), 200);   // open, as vLLM's is
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        // Three connections held open: a fourth is told to come back later.
        std::vector<int> held;
        for (int i = 0; i < 3; ++i) held.push_back(wbtest::connect_loopback(guarded.port));
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const std::string refused = exchange(guarded.port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        QCOMPARE(wbtest::status_of(refused), 503);
        QVERIFY(refused.find("Retry-After: ") != std::string::npos);
        for (int fd : held) ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        QCOMPARE(wbtest::status_of(exchange(guarded.port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")), 200);
        QCOMPARE(guarded.stop(), 0);
    }

    void health_says_503_while_the_model_loads() {
        // Converting the weights at load takes long enough to ask in between.
        ServeProcess loading;
        QVERIFY2(loading.start({"--weights", "f32"}, 60000, false), loading.log.c_str());
        int status = 0;
        const Json body = parse(get(loading, "/health", &status));
        QCOMPARE(status, 503);
        QCOMPARE_JSON(body["status"], Json("loading"));
        int completion = 0;
        post(loading, "/v1/completions", {{"prompt", "x"}}, &completion);
        QCOMPARE(completion, 503);
        for (int i = 0; i < 600 && status != 200; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            get(loading, "/health", &status);
        }
        QCOMPARE(status, 200);
        QCOMPARE(loading.stop(), 0);
    }

    void a_port_in_use_is_a_clear_error() {
        ServeProcess second;
        QVERIFY(!second.start({"--port", QString::number(server_.port)}, 20000));
        QVERIFY2(second.log.find("cannot listen on 127.0.0.1:" + std::to_string(server_.port)) != std::string::npos, second.log.c_str());
    }
};

QTEST_APPLESS_MAIN(TestServe)
#include "test_serve.moc"
