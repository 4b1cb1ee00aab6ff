// Remote rows of the variants map over loopback: our own `serve` answers the suite's prompts as
// the local engine does (outcome by outcome) and reports its KV configuration; a declared KV type
// overrides it; a server that does not say, or runs another model, is refused with the reason;
// `sweep --remote` as a user runs it, and a rerun that skips the row.
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "remote/remote_retrieval.h"
#include "tests/app/server/serve_process.h"
#include "tests/remote/loopback_http.h"
#include "tests/skip_missing.h"
#include "workbench/engine.h"
#include "workbench/json.h"

using namespace wbremote;
using workbench::Json;

namespace {

std::string outcomes_of(const Json& cells) {
    std::string all;
    for (const Json& c : cells) all += c["outcomes"].get<std::string>();
    return all;
}

// A server that lists a model but says nothing of its KV cache, and tokenizes everything into 3.
struct SilentServer : wbtest::LoopbackHttp {
    SilentServer() {
        http.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(R"({"object":"list","data":[{"id":"other","object":"model","owned_by":"vllm"}]})", "application/json");
        });
        http.Post("/tokenize", [](const httplib::Request&, httplib::Response& res) { res.set_content(R"({"count":3})", "application/json"); });
        start();
    }
};

workbench::SweepSettings small_grid() {
    workbench::SweepSettings s;
    s.ctx = 384;
    s.retrieval = true;
    s.retrieval_options.lengths = {256, 384};
    s.retrieval_options.depths_pct = {0, 50, 100};
    s.retrieval_options.trials = 1;
    return s;
}

}  // namespace

class TestRemoteRetrieval : public QObject {
    Q_OBJECT
private slots:
    void our_serve_pairs_outcome_by_outcome_with_the_local_engine() {
        if (!QFile::exists(QStringLiteral(WB_DEFAULT_MODEL_PATH))) WB_SKIP_MISSING("the default model is not installed (installer/bootstrap.sh)");
        wbtest::ServeProcess serve;
        QVERIFY2(serve.start({"--kv-type", "q8_0"}), serve.log.c_str());
        const RemoteEndpoint e{"http://127.0.0.1:" + std::to_string(serve.port) + "/v1", "", 5, 120};
        workbench::EngineConfig config;
        config.model_path = WB_DEFAULT_MODEL_PATH;
        config.kv_types = "q8_0";
        auto engine = workbench::Engine::load(config);
        QVERIFY(engine.ok());
        const workbench::SweepSettings s = small_grid();
        auto local = workbench::evaluate_retrieval(**engine, workbench::sweep_retrieval_options(s));
        QVERIFY(local.ok());

        const Json row = measure_remote_sweep_row(e, {}, **engine, s);
        QVERIFY2(row["status"] == "ok", workbench::dump_json(row).c_str());
        QCOMPARE(row["config"].get<std::string>(), "remote " + e.base_url);
        QCOMPARE(row["server"].get<std::string>(), std::string("workbench"));
        QCOMPARE(row["remote_model"].get<std::string>(), std::string("SmolLM2-135M-Instruct.Q4_1"));
        QCOMPARE(row["kv_source"].get<std::string>(), std::string("reported"));
        QCOMPARE(row["kv_type"].get<std::string>(), std::string("q8_0"));
        QCOMPARE(row["attention"].get<std::string>(), std::string("full"));
        // The cache a sequence of ctx + n_decode tokens holds at q8_0, as the engine counts a token.
        const uint64_t per_token = (*engine)->model_info().kv_bytes_per_token;
        QCOMPARE(row["kv_bytes"].get<uint64_t>(), per_token * static_cast<uint64_t>(s.ctx + s.n_decode));
        QCOMPARE(row["retrieval_trials"].get<int>(), 12);
        QCOMPARE(outcomes_of(row["retrieval_cells"]), outcomes_of(workbench::retrieval_report_json(*local)["cells"]));
        QVERIFY(row["remote_tpot_ms"].get<double>() > 0);
        // Its /metrics, polled while it answered, held at its peak at most a sequence of ctx + n_decode
        // tokens in whole blocks, and at least the grid's longest prompt but one block.
        QCOMPARE(row["kv_measured_from"].get<std::string>(), std::string("metrics bytes"));
        const auto measured = row["kv_bytes_measured_peak"].get<uint64_t>();
        qInfo("KV predicted %llu bytes, /metrics peak %llu", static_cast<unsigned long long>(row["kv_bytes"].get<uint64_t>()),
              static_cast<unsigned long long>(measured));
        QVERIFY2(measured <= per_token * static_cast<uint64_t>((s.ctx + s.n_decode + 15) / 16 * 16), qPrintable(QString::number(measured)));
        QVERIFY2(measured >= per_token * static_cast<uint64_t>(s.retrieval_options.lengths.back() - 16), qPrintable(QString::number(measured)));
        QCOMPARE(workbench::sweep_row_label(row), std::string("workbench server · KV q8_0"));

        // Declared beats reported: the bytes follow the declaration.
        const Json declared = measure_remote_sweep_row(e, {"", "q4_0", ""}, **engine, s);
        QVERIFY2(declared["status"] == "ok", workbench::dump_json(declared).c_str());
        QCOMPARE(declared["kv_source"].get<std::string>(), std::string("declared"));
        QVERIFY(declared["kv_bytes"].get<uint64_t>() < row["kv_bytes"].get<uint64_t>());
        QVERIFY(declared["config"].get<std::string>().find("--kv-type q4_0") != std::string::npos);

        const Json unknown = measure_remote_sweep_row(e, {"nope", "", ""}, **engine, s);
        QCOMPARE(unknown["status"].get<std::string>(), std::string("failed"));
        QVERIFY2(unknown["error"].get<std::string>().find("does not serve 'nope'") != std::string::npos, unknown["error"].get<std::string>().c_str());

        // Conversations in turns are the local engine's alone.
        workbench::RetrievalOptions turns = workbench::sweep_retrieval_options(s);
        turns.question_agnostic = true;
        auto refused = workbench::evaluate_retrieval(**engine, turns, remote_retrieval_responder(e, ""));
        QVERIFY(!refused.ok());
        QCOMPARE(refused.status().code(), workbench::StatusCode::invalid_argument);

        // As a user runs it: one row appended, a rerun skips it, a local list beside --remote refused.
        QTemporaryDir dir;
        const QString out = dir.filePath("sweep.jsonl");
        const QStringList args = {"sweep", "--remote", QString::fromStdString(e.base_url), "--ctx", "256", "--trials", "1", "-o", out, "-t", "1"};
        for (int run = 0; run < 2; ++run) {
            QProcess cli;
            cli.start(QStringLiteral(WB_CLI_PATH), args);
            QVERIFY(cli.waitForFinished(180000));
            const QString err = QString::fromUtf8(cli.readAllStandardError());
            QVERIFY2(cli.exitCode() == 0, qPrintable(err));
            if (run == 0) QVERIFY2(cli.readAllStandardOutput().contains("workbench server · KV q8_0"), qPrintable(err));
            else QVERIFY2(err.contains("already has the row"), qPrintable(err));
        }
        QFile written(out);
        QVERIFY(written.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = written.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 1);
        QCOMPARE((*workbench::parse_json(lines[0].toStdString()))["retrieval_trials"].get<int>(), 10);   // 2 tasks × 5 depths at 256
        QProcess mixed;
        mixed.start(QStringLiteral(WB_CLI_PATH), {"sweep", "--remote", QString::fromStdString(e.base_url), "--preset", "presses"});
        QVERIFY(mixed.waitForFinished(30000));
        QCOMPARE(mixed.exitCode(), 2);
        QVERIFY(mixed.readAllStandardError().contains("--remote measures the server's row alone"));
        QCOMPARE(serve.stop(), 0);
    }

    void servers_that_do_not_say_or_run_another_model_are_refused() {
        if (!QFile::exists(QStringLiteral(WB_DEFAULT_MODEL_PATH))) WB_SKIP_MISSING("the default model is not installed (installer/bootstrap.sh)");
        workbench::EngineConfig config;
        config.model_path = WB_DEFAULT_MODEL_PATH;
        auto engine = workbench::Engine::load(config);
        QVERIFY(engine.ok());
        SilentServer server;
        const RemoteEndpoint e{server.url(), "", 2, 10};
        const Json unsaid = measure_remote_sweep_row(e, {}, **engine, small_grid());
        QCOMPARE(unsaid["status"].get<std::string>(), std::string("failed"));
        QVERIFY2(unsaid["error"].get<std::string>().find("--remote-kv-type") != std::string::npos, unsaid["error"].get<std::string>().c_str());
        const Json other = measure_remote_sweep_row(e, {"", "fp8", ""}, **engine, small_grid());
        QCOMPARE(other["status"].get<std::string>(), std::string("failed"));
        QVERIFY2(other["error"].get<std::string>().find("tokenizes a test sentence into 3 tokens") != std::string::npos,
                 other["error"].get<std::string>().c_str());
        const Json gone = measure_remote_sweep_row({"http://127.0.0.1:1/v1", "", 2, 5}, {"", "f16", ""}, **engine, small_grid());
        QCOMPARE(gone["status"].get<std::string>(), std::string("failed"));
        QVERIFY(!gone["error"].get<std::string>().empty());
    }
};

QTEST_APPLESS_MAIN(TestRemoteRetrieval)
#include "test_remote_retrieval.moc"
