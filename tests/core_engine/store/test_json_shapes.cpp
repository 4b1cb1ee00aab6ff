// Every JSON shape the store writes or keys on, byte for byte against golden files
// (tests/data/json_shapes/, see tests/golden_file.h): the EngineConfig JSON that the
// configurations table is unique on, and a session's JSON, CSV and Markdown exports; and a
// configuration row in 0.1.0's bytes, which saving the same configuration must find. The inputs
// pin what a serializer may change: key order, escapes (quotes, backslash, control characters,
// \b and \f, invalid UTF-8), and numbers (integral doubles, tiny and huge magnitudes, many
// digits). WB_WRITE_GOLDEN=1 rewrites the files instead of comparing.
#include <QTemporaryDir>
#include <QTest>

#include <limits>

#include "store_test_util.h"
#include "tests/golden_file.h"
#include "workbench/config.h"
#include "workbench/store.h"

using namespace workbench;

namespace {

EngineConfig tricky_config() {
    EngineConfig c;
    c.model_path = "/models/a \"quoted\" \\ back\tslash\x01\b\f/é😀 \xff\xfe.gguf";
    c.n_threads = 2;
    c.n_ctx = 4096;
    c.weight_type = "q8_0";
    c.attention = "sliding:window=1020,sinks=4";
    c.kv_types = "k=q8_0,v=q4_0";
    c.kv_budget_bytes = 9007199254740993ull;  // past 2^53: must stay an exact integer
    c.n_seq_max = 8;
    c.calibration_text = "line one\nline two\r\n";
    return c;
}

std::vector<MetricSample> tricky_samples() {
    std::vector<MetricSample> samples;
    const double t_ms[] = {0.0, 0.1, 1.0 / 3.0, 100000.0, 1e21, 0.0001, 1.5e-7, 123456789.125};
    for (int i = 0; i < 8; ++i) {
        MetricSample s;
        s.token_index = i;
        s.t_ms = t_ms[i];
        s.kv_bytes = 23040ull * static_cast<uint64_t>(i + 1);
        s.kv_bytes_full = 1ull << 40;
        if (i > 0) s.itl_ms = t_ms[i] - t_ms[i - 1];
        if (i % 3 == 1) s.tok_s = 173.61234567891234;
        samples.push_back(s);
    }
    return samples;
}

}  // namespace

class TestJsonShapes : public QObject {
    Q_OBJECT
private slots:
    void engine_config_json_is_unchanged() {
        WB_VERIFY_GOLDEN("engine_config_default.json", engine_config_json(EngineConfig{}));
        WB_VERIFY_GOLDEN("engine_config_tricky.json", engine_config_json(tricky_config()));
    }

    void session_exports_are_unchanged() {
        QTemporaryDir dir;
        StoreOptions options;
        options.path = dir.filePath(QStringLiteral("shapes.db")).toStdString();
        auto store = Store::open(options);
        QVERIFY2(store.ok(), store.status().message().c_str());
        Store& s = **store;
        auto config = s.save_configuration(make_configuration(tricky_config()));
        QVERIFY2(config.ok(), config.status().message().c_str());
        SessionRecord session{0, *config, "a \"title\"\twith\x02 control", 1764547200000, 1764547260000};
        auto session_id = s.create_session(session);
        QVERIFY(session_id.ok());
        RunRecord run;
        run.session_id = *session_id;
        run.configuration_id = *config;
        run.started_unix_ms = 1764547201000;
        run.n_tokens_prompt = 12;
        run.seed = 3000000000;  // past int32
        run.provenance = {"b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", "0.1.0", "abc1234",
                          "CPU, with \"comma\"", "avx2 fma", "cpu", 2};
        auto run_id = s.begin_run(run);
        QVERIFY(run_id.ok());
        run.id = *run_id;
        run.finished_unix_ms = 1764547202500;
        run.n_tokens_generated = 8;
        run.ttft_ms = 25.0;
        run.decode_tok_s = 173.61234567891234;
        run.itl_ms_p50 = 5.5;
        run.itl_ms_p90 = 0.0001;
        run.itl_ms_p99 = std::numeric_limits<double>::infinity();  // not finite: null / empty
        run.kv_bytes = 368640;
        run.kv_bytes_peak = 368640;
        run.kv_bytes_full = 368640;
        run.kv_bytes_read_per_token = 23040;
        run.stop_reason = "max_tokens";
        QVERIFY(s.finish_run(run).ok());
        QVERIFY(s.append_samples(*run_id, tricky_samples()).ok());
        QVERIFY(s.add_message({0, *session_id, 0, 0, "user", "Say \"hi\",\nplease \\ \b\f\x1f", 1764547201000}).ok());
        QVERIFY(s.add_message({0, *session_id, *run_id, 0, "assistant", "hi \xff\xc3 there é😀", 1764547202500}).ok());
        QVERIFY(s.flush().ok());

        auto stored = s.load_configuration(*config);
        QVERIFY(stored.ok());
        WB_VERIFY_GOLDEN("stored_configuration.json", stored->config_json);
        auto json = s.export_session_json(*session_id);
        QVERIFY(json.ok());
        WB_VERIFY_GOLDEN("session_export.json", *json);
        auto runs_csv = s.export_runs_csv(*session_id);
        QVERIFY(runs_csv.ok());
        WB_VERIFY_GOLDEN("session_runs.csv", *runs_csv);
        auto samples_csv = s.export_samples_csv(*session_id);
        QVERIFY(samples_csv.ok());
        WB_VERIFY_GOLDEN("session_samples.csv", *samples_csv);
        auto markdown = s.export_session_markdown(*session_id);
        QVERIFY(markdown.ok());
        WB_VERIFY_GOLDEN("session_export.md", *markdown);
    }

    // A configuration row as release 0.1.0 wrote it (its own JSON writer: "\u0008" for "\b",
    // "\ufffd" for invalid UTF-8) is found by its value when the new text misses it, so opening an
    // old database and saving the same configuration adds no second row.
    void a_configuration_saved_by_the_previous_release_is_not_saved_again() {
        QFile old_text(QStringLiteral(WB_TEST_DATA_DIR "/json_shapes/stored_configuration_0.1.0.json"));
        QVERIFY(old_text.open(QIODevice::ReadOnly));
        const std::string previous = old_text.readAll().toStdString();
        const ConfigurationRecord config = make_configuration(tricky_config());
        QVERIFY(config.config_json != previous);  // the bytes did change
        QTemporaryDir dir;
        StoreOptions options;
        options.path = dir.filePath(QStringLiteral("previous.db")).toStdString();
        RowId old_id = 0;
        {
            auto store = Store::open(options);
            QVERIFY2(store.ok(), store.status().message().c_str());
            auto id = (*store)->save_configuration(config);
            QVERIFY(id.ok());
            old_id = *id;
        }
        {
            store_test::RawDb db(options.path);
            sqlite3_stmt* update = nullptr;
            QCOMPARE(sqlite3_prepare_v2(db.handle(), "UPDATE configurations SET config_json = ?1", -1, &update, nullptr), SQLITE_OK);
            sqlite3_bind_text(update, 1, previous.data(), static_cast<int>(previous.size()), SQLITE_TRANSIENT);
            QCOMPARE(sqlite3_step(update), SQLITE_DONE);
            sqlite3_finalize(update);
            QCOMPARE(db.text("SELECT config_json FROM configurations"), previous);
        }
        auto store = Store::open(options);
        QVERIFY2(store.ok(), store.status().message().c_str());
        auto again = (*store)->save_configuration(config);
        QVERIFY2(again.ok(), again.status().message().c_str());
        QCOMPARE(*again, old_id);
        auto other = (*store)->save_configuration(make_configuration(EngineConfig{}));
        QVERIFY(other.ok());
        QVERIFY(*other != old_id);  // a different configuration still gets its own row
        ConfigurationRecord on_cuda = make_configuration(tricky_config());
        on_cuda.backend = "cuda";   // the same JSON text: the backend column alone tells them apart
        auto same_text_other_backend = (*store)->save_configuration(on_cuda);
        QVERIFY(same_text_other_backend.ok());
        QVERIFY(*same_text_other_backend != old_id);
        auto listed = (*store)->list_configurations();
        QVERIFY(listed.ok());
        QCOMPARE(listed->size(), size_t(3));
    }
};

QTEST_APPLESS_MAIN(TestJsonShapes)
#include "test_json_shapes.moc"
