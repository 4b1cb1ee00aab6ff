// Store tests: a fresh file's schema; migrations from every earlier version with data kept;
// foreign and newer files refused; every table round trip; search and filters; cascading delete;
// exports (JSON that parses, CSV rows, Markdown); read-only stores; the record helpers.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "store/store_db.h"
#include "store/store_schema.h"
#include "store_test_util.h"

using namespace workbench;
using namespace store_test;

class TestStore : public QObject {
    Q_OBJECT

    TempFiles files_;
    std::string new_path() { return files_.new_path(); }

    static RowId save_config(Store& store, const std::string& model, const std::string& attention) {
        EngineConfig config;
        config.model_path = "/models/" + model;
        config.attention = attention;
        Result<RowId> id = store.save_configuration(make_configuration(config));
        return id.ok() ? *id : 0;
    }

private slots:
    void fresh_file_has_current_schema() {
        const std::string path = new_path();
        auto store = open(path);
        QVERIFY(store);
        QCOMPARE(Store::schema_version(), 9);
        RawDb raw(path);
        QCOMPARE(raw.count("PRAGMA user_version"), 9LL);
        QCOMPARE(raw.count("PRAGMA application_id"), static_cast<long long>(store::kApplicationId));
        QCOMPARE(q(raw.text("PRAGMA journal_mode")), QString("wal"));
        // Foreign keys are on in the store's connection: a message for no session is refused.
        MessageRecord orphan;
        orphan.session_id = 999;
        orphan.role = "user";
        orphan.text = "nobody's";
        WB_VERIFY_OK(store->add_message(orphan));
        const Status flushed = store->flush();
        QVERIFY(!flushed.ok());
        QVERIFY2(q(flushed.message()).contains("FOREIGN KEY"), flushed.message().c_str());
    }

    void migrates_from_every_earlier_version() {
        for (int32_t version = 0; version < store::current_schema_version(); ++version) {
            const std::string path = new_path();
            {
                auto conn = store::Connection::open(path, false, 1000);
                WB_VERIFY_OK(conn);
                WB_VERIFY_OK(store::migrate(**conn, version));
                if (version >= 1) {
                    WB_VERIFY_OK((*conn)->exec(
                        "INSERT INTO configurations VALUES (1, 'old.gguf', 'cpu', 'full', 'f16', '', "
                        "'{\"model_path\":\"old.gguf\"}', 1000);"
                        "INSERT INTO sessions VALUES (1, 1, '', 1000, 1000);"
                        "INSERT INTO runs (id, session_id, configuration_id, started_unix_ms, finished_unix_ms, "
                        "n_tokens_generated, decode_tok_s, stop_reason) VALUES (1, 1, 1, 1000, 2000, 7, 12.5, 'max_tokens');"
                        "INSERT INTO messages (session_id, run_id, seq, role, text, created_unix_ms) VALUES "
                        "(1, NULL, 0, 'user', 'a migratory bird', 1000), (1, 1, 1, 'assistant', 'flies south', 2000);"
                        "INSERT INTO metric_samples VALUES (1, 0, 10.0, 100, 200, NULL, 55.0);"));
                }
            }
            RawDb before(path);
            QCOMPARE(before.count("PRAGMA user_version"), static_cast<long long>(version));
            auto store = open(path);
            QVERIFY2(store, qPrintable(QString("from version %1").arg(version)));
            QCOMPARE(RawDb(path).count("PRAGMA user_version"), static_cast<long long>(store::current_schema_version()));
            if (version == 0) {
                WB_VERIFY_OK(store->create_session({}));
                continue;
            }
            auto messages = store->load_messages(1);
            WB_VERIFY_OK(messages);
            QCOMPARE(messages->size(), size_t(2));
            QCOMPARE(q((*messages)[1].text), QString("flies south"));
            QCOMPARE((*messages)[1].run_id, RowId(1));
            auto runs = store->load_runs(1);
            WB_VERIFY_OK(runs);
            QCOMPARE(runs->size(), size_t(1));
            QCOMPARE((*runs)[0].decode_tok_s.value_or(0), 12.5);
            QVERIFY(!(*runs)[0].seed);  // recorded before runs had a seed
            QVERIFY(!(*runs)[0].n_draft_tokens && !(*runs)[0].acceptance_rate());   // nor speculation's counts (version 7)
            QVERIFY(!(*runs)[0].first_answer_ms);                                   // nor the answer's start (version 9)
            QVERIFY((*messages)[1].tool_calls.empty() && (*messages)[1].reasoning.empty() && (*messages)[1].tool_call_id.empty());
            // A turn with a tool call, its result and thinking goes in and comes back (version 9).
            MessageRecord call;
            call.session_id = 1;
            call.role = "assistant";
            call.reasoning = "the user wants the weather";
            call.tool_calls = {{"call_1", "get_weather", R"({"city":"Oslo"})"}};
            MessageRecord result;
            result.session_id = 1;
            result.role = "tool";
            result.text = "-3 C";
            result.tool_call_id = "call_1";
            WB_VERIFY_OK(store->add_message(call));
            WB_VERIFY_OK(store->add_message(result));
            WB_VERIFY_OK(store->flush());
            auto turns = store->load_messages(1);
            WB_VERIFY_OK(turns);
            QCOMPARE(turns->size(), size_t(4));
            QCOMPARE((*turns)[2].tool_calls.size(), size_t(1));
            QCOMPARE(q((*turns)[2].tool_calls[0].name), QString("get_weather"));
            QCOMPARE(q((*turns)[2].tool_calls[0].arguments), QString(R"({"city":"Oslo"})"));
            QCOMPARE(q((*turns)[2].reasoning), QString("the user wants the weather"));
            QCOMPARE(q((*turns)[3].tool_call_id), QString("call_1"));
            QCOMPARE(q((*turns)[3].role), QString("tool"));
            auto samples = store->load_samples(1);
            WB_VERIFY_OK(samples);
            QCOMPARE(samples->size(), size_t(1));
            QCOMPARE((*samples)[0].tok_s.value_or(0), 55.0);
            // Messages written before search existed (version 1) are found after the upgrade.
            SessionFilter filter;
            filter.search_text = "migratory";
            auto found = store->list_sessions(filter);
            WB_VERIFY_OK(found);
            QCOMPARE(found->size(), size_t(1));
            QCOMPARE(q((*found)[0].title), QString("a migratory bird"));
            // Tables of later versions are usable.
            BenchmarkRecord bench;
            bench.configuration_id = 1;
            bench.test_name = "tg128";
            WB_VERIFY_OK(store->save_benchmark(bench));
            // An evaluation keeps its retrieval accuracy (version 7).
            EvaluationRecord retrieval;
            retrieval.configuration_id = 1;
            retrieval.text_name = "retrieval";
            retrieval.retrieval_accuracy = 0.5;
            WB_VERIFY_OK(store->save_evaluation(retrieval));
            auto evaluations = store->list_evaluations(1);
            WB_VERIFY_OK(evaluations);
            QCOMPARE(evaluations->back().retrieval_accuracy.value_or(-1), 0.5);
            // A sweep keeps its rows, failed ones too (version 8).
            SweepRecord sweep;
            sweep.name = "standard";
            sweep.model = "old.gguf";
            auto sweep_id = store->create_sweep(sweep);
            WB_VERIFY_OK(sweep_id);
            WB_VERIFY_OK(store->add_sweep_row(*sweep_id, evaluations->back().id, R"({"config":"full","status":"ok"})"));
            WB_VERIFY_OK(store->flush());
            auto sweep_back = store->load_sweep(*sweep_id);
            WB_VERIFY_OK(sweep_back);
            QCOMPARE(sweep_back->rows.size(), size_t(1));
            // A comparison keeps why a configuration failed (version 6).
            ComparisonRecord comparison;
            comparison.name = "Compare: old";
            comparison.configuration_ids = {1, 1};
            comparison.errors = {"", "out of KV"};
            auto comparison_id = store->save_comparison(comparison);
            WB_VERIFY_OK(comparison_id);
            auto comparison_back = store->load_comparison(*comparison_id);
            WB_VERIFY_OK(comparison_back);
            QCOMPARE(comparison_back->errors, (std::vector<std::string>{"", "out of KV"}));
            PresetRecord preset;
            preset.name = "old full";
            preset.configuration_id = 1;
            WB_VERIFY_OK(store->save_preset(preset));
            auto presets = store->list_presets();
            WB_VERIFY_OK(presets);
            QCOMPARE(presets->size(), size_t(1));
            QCOMPARE(q((*presets)[0].configuration.model), QString("old.gguf"));
            RunRecord seeded;
            seeded.session_id = 1;
            seeded.seed = 4242;
            auto seeded_id = store->begin_run(seeded);
            WB_VERIFY_OK(seeded_id);
            WB_VERIFY_OK(store->flush());
            auto with_seed = store->load_runs(1);
            WB_VERIFY_OK(with_seed);
            QCOMPARE(with_seed->size(), size_t(2));
            QCOMPARE(with_seed->back().seed.value_or(-1), int64_t(4242));
            // Speculative decoding's counts (version 7) are written at finish and read back.
            seeded.id = *seeded_id;
            seeded.n_draft_tokens = 40;
            seeded.n_accepted_tokens = 30;
            seeded.first_answer_ms = 812.5;
            WB_VERIFY_OK(store->finish_run(seeded));
            WB_VERIFY_OK(store->flush());
            auto with_drafts = store->load_runs(1);
            WB_VERIFY_OK(with_drafts);
            QCOMPARE(with_drafts->back().n_draft_tokens.value_or(-1), 40);
            QCOMPARE(with_drafts->back().acceptance_rate().value_or(-1), 0.75);
            QCOMPARE(with_drafts->back().first_answer_ms.value_or(-1), 812.5);   // version 9
        }
    }

    // A sweep as a unit: rows kept in the order added (failed ones counted), listed newest first,
    // deleted with its rows while the evaluations they point at stay.
    void sweeps_round_trip() {
        auto store = open(new_path());
        QVERIFY(store);
        const RowId config = save_config(*store, "a.gguf", "full");
        EvaluationRecord e;
        e.configuration_id = config;
        e.text_name = "sweep: alice_wonderland.txt";
        e.perplexity = 12.5;
        auto evaluation = store->save_evaluation(e);
        WB_VERIFY_OK(evaluation);
        SweepRecord first;
        first.name = "standard";
        first.model = "a.gguf";
        first.settings = R"({"ctx":4096,"retrieval":true})";
        first.created_unix_ms = 1000;
        SweepRecord second = first;
        second.name = "mine.txt";
        second.source = "/tmp/sweep.jsonl";
        second.created_unix_ms = 2000;
        auto first_id = store->create_sweep(first), second_id = store->create_sweep(second);
        WB_VERIFY_OK(first_id);
        WB_VERIFY_OK(second_id);
        WB_VERIFY_OK(store->add_sweep_row(*first_id, *evaluation, R"({"config":"full","status":"ok"})"));
        WB_VERIFY_OK(store->add_sweep_row(*first_id, 0, R"({"config":"latent:rank=48","status":"failed","error":"rank"})"));
        WB_VERIFY_OK(store->add_sweep_row(*first_id, 0, R"({"config":"sliding:window=64","status":"ok"})"));
        WB_VERIFY_OK(store->flush());
        auto listed = store->list_sweeps();
        WB_VERIFY_OK(listed);
        QCOMPARE(listed->size(), size_t(2));
        QCOMPARE((*listed)[0].id, *second_id);   // newest first
        QCOMPARE((*listed)[0].source, std::string("/tmp/sweep.jsonl"));
        QCOMPARE((*listed)[0].n_rows, 0);
        QCOMPARE((*listed)[1].n_rows, 3);
        QCOMPARE((*listed)[1].n_failed, 1);
        QVERIFY((*listed)[1].rows.empty());   // listing leaves the rows out
        auto loaded = store->load_sweep(*first_id);
        WB_VERIFY_OK(loaded);
        QCOMPARE(loaded->settings, first.settings);
        QCOMPARE(loaded->rows.size(), size_t(3));
        QVERIFY(q(loaded->rows[1]).contains("latent:rank=48"));
        QVERIFY(q(loaded->rows[2]).contains("sliding:window=64"));
        QCOMPARE(store->load_sweep(999).status().code(), StatusCode::not_found);
        WB_VERIFY_OK(store->delete_sweep(*first_id));
        QCOMPARE(store->delete_sweep(*first_id).code(), StatusCode::not_found);
        QCOMPARE(store->list_sweeps()->size(), size_t(1));
        QCOMPARE(store->list_evaluations()->size(), size_t(1));   // the evaluation stays
        // A row for a sweep that is not there fails its write, and says so at the flush.
        WB_VERIFY_OK(store->add_sweep_row(*first_id, 0, "{}"));
        QVERIFY(!store->flush().ok());
    }

    void presets_round_trip() {
        auto store = open(new_path());
        QVERIFY(store);
        const RowId full = save_config(*store, "a.gguf", "full");
        const RowId sliding = save_config(*store, "a.gguf", "sliding:window=64,sinks=4");
        PresetRecord p;
        p.name = "window";
        p.configuration_id = full;
        auto first = store->save_preset(p);
        WB_VERIFY_OK(first);
        p.name = "baseline";
        WB_VERIFY_OK(store->save_preset(p));
        // The same name again: the preset now names the other configuration and keeps its id.
        p.name = "window";
        p.configuration_id = sliding;
        auto again = store->save_preset(p);
        WB_VERIFY_OK(again);
        QCOMPARE(*again, *first);
        auto presets = store->list_presets();
        WB_VERIFY_OK(presets);
        QCOMPARE(presets->size(), size_t(2));
        QCOMPARE(q((*presets)[0].name), QString("baseline"));  // by name
        QCOMPARE(q((*presets)[1].name), QString("window"));
        QCOMPARE((*presets)[1].configuration_id, sliding);
        QCOMPARE(q((*presets)[1].configuration.variant), QString("sliding:window=64,sinks=4"));
        QVERIFY((*presets)[1].created_unix_ms > 0);
        // Refused: no name; a configuration that is not stored.
        p.name.clear();
        QCOMPARE(store->save_preset(p).status().code(), StatusCode::invalid_argument);
        p.name = "ghost";
        p.configuration_id = 999;
        QVERIFY(!store->save_preset(p).ok());
        WB_VERIFY_OK(store->delete_preset(*first));
        QCOMPARE(store->delete_preset(*first).code(), StatusCode::not_found);
        QCOMPARE(store->list_presets()->size(), size_t(1));
    }

    void truncate_session_drops_the_tail_with_its_runs() {
        auto store = open(new_path());
        QVERIFY(store);
        const RowId config = save_config(*store, "a.gguf", "full");
        SessionRecord session;
        session.configuration_id = config;
        auto id = store->create_session(session);
        WB_VERIFY_OK(id);
        std::vector<RowId> runs;
        const std::pair<const char*, const char*> transcript[] = {
            {"user", "question"}, {"assistant", "answer"}, {"assistant", "answer again"},
            {"user", "follow-up"}, {"assistant", "reply"}};
        for (const auto& [role, text] : transcript) {
            MessageRecord m;
            m.session_id = *id;
            m.role = role;
            m.text = text;
            if (m.role == "assistant") {
                RunRecord run;
                run.session_id = *id;
                run.configuration_id = config;
                auto runId = store->begin_run(run);
                WB_VERIFY_OK(runId);
                WB_VERIFY_OK(store->append_samples(*runId, {MetricSample{1, 5.0, 10, 20, std::nullopt, std::nullopt}}));
                m.run_id = *runId;
                runs.push_back(*runId);
            }
            WB_VERIFY_OK(store->add_message(m));
        }
        WB_VERIFY_OK(store->flush());
        // Keeping everything, or more than there is, changes nothing.
        WB_VERIFY_OK(store->truncate_session(*id, 5));
        WB_VERIFY_OK(store->truncate_session(*id, 9));
        QCOMPARE(store->load_messages(*id)->size(), size_t(5));
        // "answer again" replaced "answer": keep the question and the first answer only.
        WB_VERIFY_OK(store->truncate_session(*id, 2));
        auto messages = store->load_messages(*id);
        WB_VERIFY_OK(messages);
        QCOMPARE(messages->size(), size_t(2));
        QCOMPARE(q((*messages)[1].text), QString("answer"));
        auto left = store->load_runs(*id);
        WB_VERIFY_OK(left);
        QCOMPARE(left->size(), size_t(1));
        QCOMPARE((*left)[0].id, runs[0]);
        QCOMPARE(store->load_run(runs[1]).status().code(), StatusCode::not_found);
        QVERIFY(store->load_samples(runs[2])->empty());
        // Search no longer finds the deleted text; a new message follows the kept ones.
        SessionFilter filter;
        filter.search_text = "follow";
        QCOMPARE(store->list_sessions(filter)->size(), size_t(0));
        MessageRecord next;
        next.session_id = *id;
        next.role = "user";
        next.text = "edited";
        WB_VERIFY_OK(store->add_message(next));
        WB_VERIFY_OK(store->flush());
        messages = store->load_messages(*id);
        QCOMPARE(messages->size(), size_t(3));
        QCOMPARE(q(messages->back().text), QString("edited"));
        QVERIFY(messages->back().seq > (*messages)[1].seq);
        QCOMPARE(store->truncate_session(*id, -1).code(), StatusCode::invalid_argument);
        QCOMPARE(store->truncate_session(999, 0).code(), StatusCode::not_found);
    }

    void refuses_newer_and_foreign_files() {
        const std::string newer = new_path();
        {
            RawDb raw(newer);
            QCOMPARE(raw.exec("PRAGMA application_id = " + std::to_string(store::kApplicationId) +
                              "; PRAGMA user_version = 99; CREATE TABLE future (x);"), SQLITE_OK);
        }
        StoreOptions options;
        options.path = newer;
        auto store = Store::open(options);
        QVERIFY(!store.ok());
        QVERIFY2(q(store.status().message()).contains("newer"), store.status().message().c_str());
        QVERIFY(q(store.status().message()).startsWith(q(newer)));

        const std::string foreign = new_path();
        {
            RawDb raw(foreign);
            QCOMPARE(raw.exec("CREATE TABLE notes (x); INSERT INTO notes VALUES (1);"), SQLITE_OK);
        }
        options.path = foreign;
        store = Store::open(options);
        QVERIFY(!store.ok());
        QVERIFY2(q(store.status().message()).contains("another application"), store.status().message().c_str());
        RawDb raw(foreign);  // untouched: still a rollback-journal file with its one table
        QCOMPARE(q(raw.text("PRAGMA journal_mode")), QString("delete"));
        QCOMPARE(raw.count("SELECT count(*) FROM sqlite_master"), 1LL);
    }

    void round_trip_every_table() {
        auto store = open(new_path());
        QVERIFY(store);
        EngineConfig engine_config;
        engine_config.model_path = "/models/tiny.gguf";
        engine_config.attention = "sliding:window=64,sinks=4";
        engine_config.kv_types = "k=q8_0,v=q4_0";
        engine_config.weight_type = "q8_0";
        engine_config.n_threads = 2;
        const ConfigurationRecord config = make_configuration(engine_config);
        QCOMPARE(q(config.model), QString("tiny.gguf"));
        auto config_id = store->save_configuration(config);
        WB_VERIFY_OK(config_id);
        auto again = store->save_configuration(config);  // equal: the same row
        WB_VERIFY_OK(again);
        QCOMPARE(*again, *config_id);
        EngineConfig cuda_config = engine_config;
        cuda_config.backend = "cuda";
        QVERIFY(make_configuration(cuda_config).config_json.find("\"backend\":\"cuda\"") != std::string::npos);
        auto on_cuda = store->save_configuration(make_configuration(cuda_config));
        WB_VERIFY_OK(on_cuda);
        QVERIFY(*on_cuda != *config_id);
        auto loaded_config = store->load_configuration(*config_id);
        WB_VERIFY_OK(loaded_config);
        QCOMPARE(q(loaded_config->variant), QString("sliding:window=64,sinks=4"));
        QCOMPARE(q(loaded_config->kv_dtype), QString("k=q8_0,v=q4_0"));
        QCOMPARE(q(loaded_config->weight_type), QString("q8_0"));
        QCOMPARE(q(loaded_config->config_json), q(engine_config_json(engine_config)));
        QVERIFY(QJsonDocument::fromJson(QByteArray::fromStdString(loaded_config->config_json)).object()["n_threads"].toInt() == 2);
        auto configs = store->list_configurations();
        WB_VERIFY_OK(configs);
        QCOMPARE(configs->size(), size_t(2));
        QCOMPARE(q((*configs)[0].backend), QString("cpu"));
        QCOMPARE(q((*configs)[1].backend), QString("cuda"));

        SessionRecord session;
        session.configuration_id = *config_id;
        session.created_unix_ms = 1'700'000'000'000;
        auto session_id = store->create_session(session);
        WB_VERIFY_OK(session_id);

        RunRecord run = make_run(*session_id, *config_id, 3, 42.5);
        run.provenance = app_provenance();
        run.provenance.model_sha256 = std::string(64, 'a');
        run.provenance.cpu_features = "AVX2 FMA";
        run.provenance.backend = "cpu";
        run.provenance.n_threads = 2;
        auto run_id = store->begin_run(run);
        WB_VERIFY_OK(run_id);
        GenerationMetrics metrics;
        metrics.n_prompt_tokens = 11;
        metrics.n_generated = 3;
        metrics.ttft_ms = 12.25;
        metrics.decode_tok_s = 42.5;
        metrics.itl_ms_p50 = 23.0;
        metrics.kv_bytes = 4096;
        metrics.kv_bytes_peak = 8192;
        metrics.kv_bytes_full = 16384;
        metrics.kv_bytes_read_per_token = 777;
        run.id = *run_id;
        apply_metrics(run, metrics);
        run.itl_ms_p90 = 30.0;
        run.itl_ms_p99 = 31.5;
        run.stop_reason = "end_of_generation";
        WB_VERIFY_OK(store->append_samples(*run_id, make_samples(0, 3)));
        WB_VERIFY_OK(store->finish_run(run));
        for (const char* role : {"system", "user", "assistant"}) {
            MessageRecord m;
            m.session_id = *session_id;
            m.role = role;
            m.text = std::string("text of ") + role;
            if (m.role == "assistant") m.run_id = *run_id;
            WB_VERIFY_OK(store->add_message(m));
        }
        WB_VERIFY_OK(store->set_session_title(*session_id, "Renamed"));
        WB_VERIFY_OK(store->flush());

        auto loaded_session = store->load_session(*session_id);
        WB_VERIFY_OK(loaded_session);
        QCOMPARE(q(loaded_session->title), QString("Renamed"));
        QCOMPARE(loaded_session->configuration_id, *config_id);
        QCOMPARE(loaded_session->created_unix_ms, int64_t(1'700'000'000'000));
        QVERIFY(loaded_session->updated_unix_ms > loaded_session->created_unix_ms);

        auto messages = store->load_messages(*session_id);
        WB_VERIFY_OK(messages);
        QCOMPARE(messages->size(), size_t(3));
        for (int i = 0; i < 3; ++i) QCOMPARE((*messages)[size_t(i)].seq, i);
        QCOMPARE(q((*messages)[1].text), QString("text of user"));
        QCOMPARE((*messages)[2].run_id, *run_id);
        QCOMPARE((*messages)[0].run_id, RowId(0));

        auto loaded_run = store->load_run(*run_id);
        WB_VERIFY_OK(loaded_run);
        const RunRecord& r = *loaded_run;
        QCOMPARE(r.session_id, *session_id);
        QCOMPARE(r.n_tokens_prompt, 11);
        QCOMPARE(r.n_tokens_generated, 3);
        QCOMPARE(r.ttft_ms.value_or(0), 12.25);
        QVERIFY(!r.prefill_tok_s.has_value());
        QCOMPARE(r.itl_ms_p50.value_or(0), 23.0);
        QCOMPARE(r.itl_ms_p99.value_or(0), 31.5);
        QCOMPARE(r.kv_bytes_peak, uint64_t(8192));
        QCOMPARE(r.kv_bytes_read_per_token, uint64_t(777));
        QCOMPARE(q(r.stop_reason), QString("end_of_generation"));
        QVERIFY(r.finished_unix_ms >= r.started_unix_ms && r.started_unix_ms > 0);
        QCOMPARE(q(r.provenance.model_sha256), q(std::string(64, 'a')));
        QVERIFY(!r.provenance.app_version.empty());
        QCOMPARE(q(r.provenance.cpu_features), QString("AVX2 FMA"));
        QCOMPARE(r.provenance.n_threads, 2);

        auto samples = store->load_samples(*run_id);
        WB_VERIFY_OK(samples);
        QCOMPARE(samples->size(), size_t(3));
        QVERIFY(!(*samples)[0].itl_ms.has_value());
        QCOMPARE((*samples)[2].itl_ms.value_or(0), 10.0);
        QCOMPARE((*samples)[2].kv_bytes_full, uint64_t(2048 * 3));

        EvaluationRecord evaluation;
        evaluation.configuration_id = *config_id;
        evaluation.reference_configuration_id = *on_cuda;
        evaluation.text_name = "alice_wonderland.txt";
        evaluation.text_sha256 = "abc123";
        evaluation.n_tokens = 512;
        evaluation.perplexity = 9.75;
        evaluation.top1_agreement = 0.96;
        evaluation.json = "{\"ppl\":9.75}";
        evaluation.retrieval_accuracy = 0.625;
        WB_VERIFY_OK(store->save_evaluation(evaluation));
        auto evaluations = store->list_evaluations(*config_id);
        WB_VERIFY_OK(evaluations);
        QCOMPARE(evaluations->size(), size_t(1));
        QCOMPARE((*evaluations)[0].perplexity.value_or(0), 9.75);
        QVERIFY(!(*evaluations)[0].kl_mean.has_value());
        QCOMPARE((*evaluations)[0].retrieval_accuracy.value_or(0), 0.625);
        QCOMPARE((*evaluations)[0].reference_configuration_id, *on_cuda);
        QCOMPARE(q((*evaluations)[0].text_sha256), QString("abc123"));
        QCOMPARE(store->list_evaluations(*on_cuda)->size(), size_t(0));

        BenchmarkRecord bench;
        bench.configuration_id = *config_id;
        bench.test_name = "pp512";
        bench.n_prompt = 512;
        bench.n_batch = 512;
        bench.n_threads = 2;
        bench.avg_ts = 1234.5;
        bench.stddev_ts = 6.5;
        bench.json = "{\"test\":\"pp512\"}";
        WB_VERIFY_OK(store->save_benchmark(bench));
        auto benchmarks = store->list_benchmarks();
        WB_VERIFY_OK(benchmarks);
        QCOMPARE(benchmarks->size(), size_t(1));
        QCOMPARE(q((*benchmarks)[0].test_name), QString("pp512"));
        QCOMPARE((*benchmarks)[0].avg_ts, 1234.5);
        QCOMPARE((*benchmarks)[0].n_prompt, 512);
        QCOMPARE(q((*benchmarks)[0].json), QString("{\"test\":\"pp512\"}"));

        ComparisonRecord comparison;
        comparison.name = "sliding vs full";
        comparison.prompt = "Tell me a story";
        comparison.configuration_ids = {*on_cuda, *config_id};
        auto comparison_id = store->save_comparison(comparison);
        WB_VERIFY_OK(comparison_id);
        WB_VERIFY_OK(store->add_comparison_run(*comparison_id, *run_id));
        WB_VERIFY_OK(store->flush());
        auto loaded_comparison = store->load_comparison(*comparison_id);
        WB_VERIFY_OK(loaded_comparison);
        QCOMPARE(q(loaded_comparison->prompt), QString("Tell me a story"));
        QCOMPARE(loaded_comparison->configuration_ids, (std::vector<RowId>{*on_cuda, *config_id}));
        QCOMPARE(loaded_comparison->run_ids, std::vector<RowId>{*run_id});
        auto comparisons = store->list_comparisons();
        WB_VERIFY_OK(comparisons);
        QCOMPARE(comparisons->size(), size_t(1));
        QCOMPARE((*comparisons)[0].configuration_ids.size(), size_t(2));

        QCOMPARE(store->load_session(424242).status().code(), StatusCode::not_found);
        QCOMPARE(store->load_run(424242).status().code(), StatusCode::not_found);
    }

    void search_and_filters() {
        auto store = open(new_path());
        QVERIFY(store);
        const RowId tiny_full = save_config(*store, "tiny.gguf", "full");
        const RowId tiny_sliding = save_config(*store, "tiny.gguf", "sliding:window=64,sinks=4");
        const RowId big_full = save_config(*store, "big.gguf", "full");
        struct Plan { RowId config; int64_t created; const char* first; const char* reply; double tok_s; };
        const Plan plans[] = {
            {tiny_full, 1'000'000, "Tell me about the aardvark", "It digs burrows.", 10.0},
            {tiny_sliding, 2'000'000, "Write a haiku on autumn", "Leaves fall on Éclair street", 20.0},
            {big_full, 3'000'000, "Explain quicksort", "Pick a pivot, partition.", 30.0},
        };
        std::vector<RowId> ids;
        for (const Plan& plan : plans) {
            SessionRecord session;
            session.configuration_id = plan.config;
            session.created_unix_ms = plan.created;
            auto id = store->create_session(session);
            WB_VERIFY_OK(id);
            ids.push_back(*id);
            for (int turn = 0; turn < 2; ++turn) {
                auto run_id = store->begin_run(make_run(*id, plan.config, 5, plan.tok_s + turn));
                WB_VERIFY_OK(run_id);
                MessageRecord user{0, *id, 0, 0, "user", turn == 0 ? plan.first : "and more?", plan.created + 10 * turn, {}, {}, {}};
                MessageRecord reply{0, *id, *run_id, 0, "assistant", plan.reply, plan.created + 10 * turn + 5, {}, {}, {}};
                WB_VERIFY_OK(store->add_message(user));
                WB_VERIFY_OK(store->add_message(reply));
            }
        }
        WB_VERIFY_OK(store->flush());

        auto all = store->list_sessions();
        WB_VERIFY_OK(all);
        QCOMPARE(all->size(), size_t(3));
        QCOMPARE((*all)[0].id, ids[2]);  // most recently active first
        const SessionSummary& first = (*all)[2];
        QCOMPARE(q(first.title), QString("Tell me about the aardvark"));
        QCOMPARE(q(first.model), QString("tiny.gguf"));
        QCOMPARE(first.n_turns, 2);
        QCOMPARE(first.n_tokens_generated, int64_t(10));
        QCOMPARE(first.n_tokens_prompt, int64_t(22));
        QCOMPARE(first.mean_decode_tok_s.value_or(0), 10.5);
        QCOMPARE(first.created_unix_ms, int64_t(1'000'000));
        QCOMPARE(first.updated_unix_ms, int64_t(1'000'015));
        QVERIFY2(q(first.config_summary).contains("KV f16"), first.config_summary.c_str());

        const auto search = [&](const std::string& text) {
            SessionFilter filter;
            filter.search_text = text;
            auto found = store->list_sessions(filter);
            std::vector<RowId> out;
            if (found.ok())
                for (const SessionSummary& s : *found) out.push_back(s.id);
            else
                qWarning("%s", found.status().message().c_str());
            return out;
        };
        QCOMPARE(search("aardvark"), std::vector<RowId>{ids[0]});
        QCOMPARE(search("AARDVARK"), std::vector<RowId>{ids[0]});    // case-insensitive
        QCOMPARE(search("burrows"), std::vector<RowId>{ids[0]});     // assistant text too
        QCOMPARE(search("eclair"), std::vector<RowId>{ids[1]});      // diacritics folded
        QCOMPARE(search("quick"), std::vector<RowId>{ids[2]});       // the last word is a prefix
        QCOMPARE(search("zebra"), std::vector<RowId>{});
        QCOMPARE(search("aardvark quicksort"), std::vector<RowId>{});  // all words, in one message
        QCOMPARE(search("pivot partition"), std::vector<RowId>{ids[2]});
        QCOMPARE(search("\"unbalanced OR NEAR( *"), std::vector<RowId>{});  // FTS syntax is quoted away
        QCOMPARE(search("   ").size(), size_t(3));                           // no words: no search

        SessionFilter by_model;
        by_model.model = "tiny.gguf";
        QCOMPARE(store->list_sessions(by_model)->size(), size_t(2));
        by_model.variant = "full";
        QCOMPARE(store->list_sessions(by_model)->size(), size_t(1));
        SessionFilter by_date;
        by_date.created_from_unix_ms = 2'000'000;
        by_date.created_to_unix_ms = 3'000'000;
        auto in_range = store->list_sessions(by_date);
        QCOMPARE(in_range->size(), size_t(1));
        QCOMPARE((*in_range)[0].id, ids[1]);
        SessionFilter paged;
        paged.limit = 2;
        paged.offset = 2;
        auto page = store->list_sessions(paged);
        QCOMPARE(page->size(), size_t(1));
        QCOMPARE((*page)[0].id, ids[0]);
    }

    void delete_cascades() {
        const std::string path = new_path();
        auto store = open(path);
        QVERIFY(store);
        std::vector<RowId> sessions, runs;
        for (const char* word : {"pelican", "walrus"}) {
            auto id = store->create_session({});
            WB_VERIFY_OK(id);
            auto run_id = store->begin_run(make_run(*id, 0, 4, 5.0));
            WB_VERIFY_OK(run_id);
            WB_VERIFY_OK(store->append_samples(*run_id, make_samples(0, 4)));
            WB_VERIFY_OK(store->add_message({0, *id, *run_id, 0, "user", std::string("a ") + word, 0}));
            sessions.push_back(*id);
            runs.push_back(*run_id);
        }
        ComparisonRecord comparison;
        comparison.name = "c";
        comparison.run_ids = runs;
        auto comparison_id = store->save_comparison(comparison);
        WB_VERIFY_OK(comparison_id);
        WB_VERIFY_OK(store->delete_session(sessions[0]));
        QCOMPARE(store->delete_session(sessions[0]).code(), StatusCode::not_found);

        RawDb raw(path);
        const std::string first = std::to_string(sessions[0]), first_run = std::to_string(runs[0]);
        QCOMPARE(raw.count("SELECT count(*) FROM messages WHERE session_id = " + first), 0LL);
        QCOMPARE(raw.count("SELECT count(*) FROM runs WHERE session_id = " + first), 0LL);
        QCOMPARE(raw.count("SELECT count(*) FROM metric_samples WHERE run_id = " + first_run), 0LL);
        QCOMPARE(raw.count("SELECT count(*) FROM comparison_runs WHERE run_id = " + first_run), 0LL);
        // The search index forgot the deleted message (the FTS trigger ran for the cascade).
        QCOMPARE(raw.count("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'pelican'"), 0LL);
        QCOMPARE(raw.exec("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)"), SQLITE_OK);
        // The other session is whole.
        QCOMPARE(raw.count("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'walrus'"), 1LL);
        QCOMPARE(store->load_samples(runs[1])->size(), size_t(4));
        QCOMPARE(store->load_comparison(*comparison_id)->run_ids, std::vector<RowId>{runs[1]});
        QCOMPARE(store->list_sessions()->size(), size_t(1));
        // The History page's list leaves out sessions holding a comparison's runs; a plain one stays.
        auto plain = store->create_session({});  // returns once committed
        WB_VERIFY_OK(plain);
        SessionFilter chats;
        chats.include_comparisons = false;
        auto listed = store->list_sessions(chats);
        WB_VERIFY_OK(listed);
        QCOMPARE(listed->size(), size_t(1));
        QCOMPARE((*listed)[0].id, *plain);
        QCOMPARE(store->list_sessions()->size(), size_t(2));
    }

    void exports_contain_the_session() {
        auto store = open(new_path());
        QVERIFY(store);
        const RowId config_id = save_config(*store, "tiny.gguf", "full");
        auto session_id = store->create_session({0, config_id, "", 0, 0});
        WB_VERIFY_OK(session_id);
        auto run_id = store->begin_run(make_run(*session_id, config_id, 4, 33.25));
        WB_VERIFY_OK(run_id);
        RunRecord finished = make_run(*session_id, config_id, 4, 33.25);
        finished.id = *run_id;
        finished.ttft_ms = 15.5;
        finished.provenance.cpu_model = "Model, with comma";  // not stored by finish_run
        WB_VERIFY_OK(store->finish_run(finished));
        WB_VERIFY_OK(store->append_samples(*run_id, make_samples(0, 4)));
        WB_VERIFY_OK(store->add_message({0, *session_id, 0, 0, "user", "Say \"hi\",\nplease", 0}));
        WB_VERIFY_OK(store->add_message({0, *session_id, *run_id, 0, "assistant", "hi \xff there", 0}));
        WB_VERIFY_OK(store->flush());

        auto json = store->export_session_json(*session_id);
        WB_VERIFY_OK(json);
        QJsonParseError parse_error;
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(*json), &parse_error);
        QVERIFY2(parse_error.error == QJsonParseError::NoError, qPrintable(parse_error.errorString()));
        const QJsonObject root = doc.object();
        QCOMPARE(root["schema_version"].toInt(), 9);
        QCOMPARE(root["configuration"].toObject()["model"].toString(), QString("tiny.gguf"));
        QCOMPARE(root["configuration"].toObject()["engine_config"].toObject()["attention"].toString(), QString("full"));
        const QJsonArray messages = root["messages"].toArray();
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages[0].toObject()["text"].toString(), QString("Say \"hi\",\nplease"));
        QCOMPARE(messages[1].toObject()["text"].toString(), QString("hi \uFFFD there"));  // invalid byte replaced
        QVERIFY(messages[0].toObject()["run_id"].isNull());
        const QJsonArray runs = root["runs"].toArray();
        QCOMPARE(runs.size(), 1);
        QCOMPARE(runs[0].toObject()["decode_tok_s"].toDouble(), 33.25);
        QVERIFY(runs[0].toObject()["prefill_tok_s"].isNull());
        QCOMPARE(runs[0].toObject()["samples"].toArray().size(), 4);
        QCOMPARE(runs[0].toObject()["samples"].toArray()[3].toObject()["kv_bytes"].toInt(), 4096);

        auto runs_csv = store->export_runs_csv(*session_id);
        WB_VERIFY_OK(runs_csv);
        const QStringList run_lines = q(*runs_csv).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(run_lines.size(), 2);
        QVERIFY(run_lines[0].startsWith("run_id,session_id,configuration_id,"));
        QVERIFY2(run_lines[1].startsWith(QString("%1,%2,%3,").arg(*run_id).arg(*session_id).arg(config_id)),
                 qPrintable(run_lines[1]));
        QVERIFY(run_lines[1].contains(",15.5,"));
        QCOMPARE(run_lines[1].count(','), run_lines[0].count(','));

        auto samples_csv = store->export_samples_csv(*session_id);
        WB_VERIFY_OK(samples_csv);
        const QStringList sample_lines = q(*samples_csv).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(sample_lines.size(), 5);
        QCOMPARE(sample_lines[0], QString("run_id,token_index,t_ms,kv_bytes,kv_bytes_full,itl_ms,tok_s"));
        QCOMPARE(sample_lines[1], QString("%1,0,0,1024,2048,,100").arg(*run_id));
        QCOMPARE(sample_lines[4], QString("%1,3,30,4096,8192,10,100").arg(*run_id));

        auto markdown = store->export_session_markdown(*session_id);
        WB_VERIFY_OK(markdown);
        const QString md = q(*markdown);
        QVERIFY2(md.startsWith("# Say \"hi\",\n"), qPrintable(md));
        QVERIFY(md.contains("- Model: tiny.gguf"));
        QVERIFY(md.contains("## User\n\nSay \"hi\",\nplease\n"));
        QVERIFY(md.contains("## Assistant\n\nhi "));
        QVERIFY2(md.contains("_4 tokens · TTFT 15.5 ms · 33.2 tok/s · stop: max_tokens_"), qPrintable(md));

        QCOMPARE(store->export_session_json(9999).status().code(), StatusCode::not_found);
        QCOMPARE(store->export_runs_csv(9999).status().code(), StatusCode::not_found);
    }

    // A session whose turns ran under different configurations: each run keeps its own, the list
    // says "mixed" (and a filter on any of them finds it), and every export names each run's.
    void a_session_of_mixed_configurations() {
        auto store = open(new_path());
        QVERIFY(store);
        const RowId sliding = save_config(*store, "tiny.gguf", "sliding:window=64");
        const RowId topk = save_config(*store, "tiny.gguf", "topk:k=256");
        auto session_id = store->create_session({0, sliding, "", 0, 0});
        WB_VERIFY_OK(session_id);
        RowId run_ids[3] = {};
        const RowId config_of_run[3] = {sliding, topk, sliding};
        for (int i = 0; i < 3; ++i) {
            WB_VERIFY_OK(store->add_message({0, *session_id, 0, 0, "user", "turn " + std::to_string(i), 0}));
            auto run_id = store->begin_run(make_run(*session_id, config_of_run[i], 4, 30.0 + i));
            WB_VERIFY_OK(run_id);
            run_ids[i] = *run_id;
            WB_VERIFY_OK(store->add_message({0, *session_id, *run_id, 0, "assistant", "reply " + std::to_string(i), 0}));
        }
        // A session of one configuration beside it: not mixed.
        auto plain = store->create_session({0, topk, "", 0, 0});
        WB_VERIFY_OK(plain);
        WB_VERIFY_OK(store->begin_run(make_run(*plain, topk, 2, 10.0)));
        WB_VERIFY_OK(store->flush());

        auto used = store->load_run_configurations(*session_id);
        WB_VERIFY_OK(used);
        QCOMPARE(used->size(), size_t(2));
        QCOMPARE((*used)[0].id, sliding);   // in the order of first use
        QCOMPARE((*used)[1].id, topk);

        auto listed = store->list_sessions();
        WB_VERIFY_OK(listed);
        QCOMPARE(listed->size(), size_t(2));
        const SessionSummary& mixed = listed->at(0).id == *session_id ? listed->at(0) : listed->at(1);
        const SessionSummary& single = listed->at(0).id == *session_id ? listed->at(1) : listed->at(0);
        QCOMPARE(mixed.n_configurations, 2);
        QCOMPARE(mixed.variant, std::string("mixed"));
        QCOMPARE(mixed.model, std::string("tiny.gguf"));
        QVERIFY2(mixed.config_summary.rfind("mixed", 0) == 0, mixed.config_summary.c_str());
        QCOMPARE(single.n_configurations, 1);
        QCOMPARE(single.variant, std::string("topk:k=256"));
        SessionFilter by_later_variant;
        by_later_variant.variant = "topk:k=256";
        auto found = store->list_sessions(by_later_variant);
        WB_VERIFY_OK(found);
        QCOMPARE(found->size(), size_t(2));   // the mixed session ran a turn under it too

        auto json = store->export_session_json(*session_id);
        WB_VERIFY_OK(json);
        const QJsonObject root = QJsonDocument::fromJson(QByteArray::fromStdString(*json)).object();
        QCOMPARE(root["configurations"].toArray().size(), 2);
        const QJsonArray runs = root["runs"].toArray();
        QCOMPARE(runs.size(), 3);
        QVERIFY(runs[0].toObject()["configuration"].toString().startsWith("sliding:window=64"));
        QVERIFY(runs[1].toObject()["configuration"].toString().startsWith("topk:k=256"));
        QCOMPARE(runs[1].toObject()["configuration_id"].toInteger(), topk);

        auto csv = store->export_runs_csv(*session_id);
        WB_VERIFY_OK(csv);
        const QStringList lines = q(*csv).split('\n', Qt::SkipEmptyParts);
        QVERIFY(lines[0].endsWith(",configuration"));
        QVERIFY2(lines[2].endsWith(",topk:k=256 · KV f16 · weights as stored · cpu"), qPrintable(lines[2]));
        QCOMPARE(lines[2].count(','), lines[0].count(','));

        auto markdown = store->export_session_markdown(*session_id);
        WB_VERIFY_OK(markdown);
        const QString md = q(*markdown);
        QVERIFY2(md.contains("- Configurations: 2"), qPrintable(md));
        QVERIFY2(md.contains("31.0 tok/s · unfinished · tiny.gguf · topk:k=256"), qPrintable(md));
        QVERIFY(md.contains("30.0 tok/s · unfinished · tiny.gguf · sliding:window=64"));
    }

    void csv_fields_are_quoted() {
        auto store = open(new_path());
        QVERIFY(store);
        auto session_id = store->create_session({});
        WB_VERIFY_OK(session_id);
        RunRecord run = make_run(*session_id, 0, 1, 1.0);
        run.provenance.cpu_model = "Model, \"quoted\"";
        WB_VERIFY_OK(store->begin_run(run));
        auto csv = store->export_runs_csv(*session_id);
        WB_VERIFY_OK(csv);
        QVERIFY2(q(*csv).contains(",\"Model, \"\"quoted\"\"\","), csv->c_str());
    }

    void read_only_store_reads_and_refuses_writes() {
        const std::string path = new_path();
        RowId session_id = 0;
        {
            auto store = open(path);
            QVERIFY(store);
            auto id = store->create_session({0, 0, "kept", 0, 0});
            WB_VERIFY_OK(id);
            session_id = *id;
        }
        StoreOptions options;
        options.path = path;
        options.read_only = true;
        auto store = Store::open(options);
        WB_VERIFY_OK(store);
        auto session = (*store)->load_session(session_id);
        WB_VERIFY_OK(session);
        QCOMPARE(q(session->title), QString("kept"));
        const Status refused = (*store)->add_message({0, session_id, 0, 0, "user", "x", 0});
        QVERIFY(!refused.ok());
        QVERIFY2(q(refused.message()).contains("read-only"), refused.message().c_str());
        QVERIFY(!(*store)->create_session({}).ok());
        WB_VERIFY_OK((*store)->flush());
        options.path = new_path();  // a read-only store does not create files
        QVERIFY(!Store::open(options).ok());
    }

    void record_helpers() {
        GenerationMetrics metrics;
        metrics.n_generated = 0;
        metrics.ttft_ms = 5;
        RunRecord run;
        apply_metrics(run, metrics);
        QVERIFY(!run.ttft_ms.has_value());  // no token, no time to first token
        metrics.n_generated = 2;
        apply_metrics(run, metrics);
        QCOMPARE(run.ttft_ms.value_or(0), 5.0);
        const RunProvenance provenance = app_provenance();
        QVERIFY(!provenance.app_version.empty());
        QVERIFY(!provenance.app_commit.empty());
        EngineConfig config;
        config.model_path = "m.gguf";
        config.calibration_text = "line\n\"two\"";
        const QJsonObject json = QJsonDocument::fromJson(QByteArray::fromStdString(engine_config_json(config))).object();
        QCOMPARE(json["calibration_text"].toString(), QString("line\n\"two\""));
        QCOMPARE(json["kv_types"].toString(), QString("f16"));
        QCOMPARE(q(make_configuration(config).model), QString("m.gguf"));
    }
};

QTEST_APPLESS_MAIN(TestStore)
#include "test_store.moc"
