// The Compare page's data, without a model: prompt sets (the "---" separator, .jsonl files),
// presets (built-ins sized to the model, stored configurations deduplicated and labelled, named
// presets), the table's mean over prompts, and comparisons saved to a temporary database and
// loaded back: a two-prompt comparison keeps each prompt's runs and outputs in their cells, and a
// comparison written as before prompt sets (one user message) loads as one prompt.
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/ui_test_support.h"
#include "ui/compare/compare_presets.h"
#include "ui/compare/compare_table.h"
#include "ui/compare/comparison_store.h"
#include "ui/compare/prompt_set.h"

namespace {

workbench::EngineConfig config(const std::string& attention, const std::string& kv) {
    workbench::EngineConfig c;
    c.model_path = "/models/a.gguf";
    c.attention = attention;
    c.kv_types = kv;
    return c;
}

workbench::ConfigurationRecord record(const std::string& model, const std::string& attention, const std::string& kv) {
    workbench::ConfigurationRecord r;
    r.model = model;
    r.variant = attention;
    r.kv_dtype = kv;
    return r;
}

ComparisonCell cell(int prompt, int column, double ttft, const std::string& output) {
    ComparisonCell c;
    c.prompt = prompt;
    c.column = column;
    c.output = output;
    c.run.ttft_ms = ttft;
    c.run.decode_tok_s = 100;
    c.run.n_tokens_generated = 4;
    return c;
}

}  // namespace

class TestCompareData : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    std::unique_ptr<workbench::Store> openStore(const QString& name) {
        workbench::StoreOptions options;
        options.path = m_dir.filePath(name).toStdString();
        options.flush_interval_ms = 5;
        auto store = workbench::Store::open(options);
        if (!store.ok()) qFatal("%s", store.status().message().c_str());
        return std::move(*store);
    }

private slots:
    void promptSetSplitsOnSeparatorLines() {
        QCOMPARE(promptset::split("one"), QStringList({"one"}));
        QCOMPARE(promptset::split("  one\n---\ntwo\nlines\n  ---  \n\n---\nthree "),
                 QStringList({"one", "two\nlines", "three"}));
        // Only a line of its own separates: dashes inside a line do not.
        QCOMPARE(promptset::split("a --- b\n----\nc"), QStringList({"a --- b\n----\nc"}));
        const QStringList prompts{"first", "second\nline"};
        QCOMPARE(promptset::split(promptset::join(prompts)), prompts);
        QVERIFY(promptset::split("\n---\n  \n").isEmpty());
    }

    void promptSetReadsJsonl() {
        const promptset::Loaded ok = promptset::fromJsonl(
            "{\"prompt\": \"a\"}\n\n{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}, "
            "{\"role\": \"assistant\", \"content\": \"y\"}, {\"role\": \"user\", \"content\": \"b\"}]}\n",
            "set.jsonl");
        QVERIFY2(ok.error.isEmpty(), qPrintable(ok.error));
        QCOMPARE(ok.prompts, QStringList({"a", "b"}));
        const promptset::Loaded bad = promptset::fromJsonl("{\"prompt\": \"a\"}\nnot json\n", "set.jsonl");
        QVERIFY(bad.prompts.isEmpty());
        QVERIFY2(bad.error.startsWith("set.jsonl line 2: not valid JSON"), qPrintable(bad.error));
        QVERIFY(promptset::fromJsonl("{\"n\": 1}", "x.jsonl").error.contains("needs 'prompt'"));
        QVERIFY(promptset::fromJsonl("\n", "x.jsonl").error.contains("no prompts"));
    }

    void builtInPresetsFollowTheModel() {
        const QList<ComparePreset> presets = comparepresets::builtIns(192);  // SmolLM2-135M: 3 KV heads x 64
        QVERIFY(presets.size() >= 5);
        QStringList attentions;
        for (const ComparePreset& p : presets) {
            QCOMPARE(p.source, ComparePreset::Source::BuiltIn);
            attentions << p.attention;
        }
        QVERIFY(attentions.contains("full"));
        QVERIFY(attentions.contains("sliding:window=1020,sinks=4"));
        QVERIFY(attentions.contains("latent:rank=96"));
        QVERIFY(comparepresets::builtIns(1024).size() == presets.size());
        bool half = false;
        for (const ComparePreset& p : comparepresets::builtIns(1024)) half = half || p.attention == "latent:rank=512";
        QVERIFY(half);
    }

    void storedPresetsAreDistinctAndSayTheirModel() {
        const std::vector<workbench::ConfigurationRecord> records = {
            record("other.gguf", "full", "q8_0"),
            record("a.gguf", "full", "f16"),
            record("a.gguf", "full", "f16"),        // same setting, another context size
            record("other.gguf", "full", "f16"),
            record("a.gguf", "sliding:window=32,sinks=4", "f16"),
        };
        const QList<ComparePreset> presets = comparepresets::fromStored(records, "a.gguf");
        QCOMPARE(presets.size(), 3);
        // The loaded model's first, in stored order; another model's last, and labelled so.
        QVERIFY(presets[0].sameFields("full", "f16", ""));
        QVERIFY(presets[1].sameFields("sliding:window=32,sinks=4", "f16", ""));
        QVERIFY(presets[2].sameFields("full", "q8_0", ""));
        QVERIFY(!presets[0].label.contains("stored for"));
        QVERIFY2(presets[2].label.contains("stored for other.gguf"), qPrintable(presets[2].label));
        QCOMPARE(presets[0].label, comparepresets::summary("full", "f16", ""));
        QCOMPARE(presets[0].source, ComparePreset::Source::Stored);
    }

    void namedPresetsKeepTheirNames() {
        workbench::PresetRecord r;
        r.name = "short window";
        r.configuration = record("a.gguf", "sliding:window=32,sinks=4", "q8_0");
        r.configuration.weight_type = "q8_0";
        const QList<ComparePreset> presets = comparepresets::fromNamed({r});
        QCOMPARE(presets.size(), 1);
        QCOMPARE(presets[0].source, ComparePreset::Source::Named);
        QCOMPARE(presets[0].label, QStringLiteral("short window"));
        QVERIFY(presets[0].sameFields("sliding:window=32,sinks=4", "q8_0", "q8_0"));
    }

    void tableFiguresAreTheMeanOverPrompts() {
        workbench::RunRecord a, b;
        a.ttft_ms = 10;
        a.decode_tok_s = 50;
        a.itl_ms_p90 = 30;
        a.kv_bytes = 1000;
        b.ttft_ms = 30;
        b.decode_tok_s = 100;
        b.kv_bytes = 3000;  // no ITL p90: the mean is over the runs that have it
        const CompareFigures one = CompareFigures::fromRuns("x", {a});
        const CompareFigures single = CompareFigures::fromRun("x", a);
        QCOMPARE(one.ttftMs, single.ttftMs);
        QCOMPARE(one.tpotMs, single.tpotMs);
        const CompareFigures mean = CompareFigures::fromRuns("x", {a, b});
        QCOMPARE(*mean.ttftMs, 20.0);
        QCOMPARE(*mean.decodeTokS, 75.0);
        QCOMPARE(*mean.tpotMs, 15.0);  // (20 + 10) / 2: per-prompt TPOT averaged
        QCOMPARE(*mean.itlP90Ms, 30.0);
        QCOMPARE(*mean.kvBytes, 2000.0);
        QVERIFY(!mean.itlP50Ms);
        QVERIFY(!CompareFigures::fromRuns("x", {}).ttftMs);
    }

    void promptSetRoundTrips() {
        auto store = openStore("set.db");
        const std::vector<workbench::EngineConfig> configs = {config("full", "f16"), config("full", "q8_0"),
                                                              config("sliding:window=8,sinks=2", "f16")};
        // Column 2 produced nothing: it is left out; prompt 1 under column 1 failed.
        std::vector<ComparisonCell> cells = {cell(1, 0, 12, "mars"), cell(0, 0, 10, "apple"), cell(0, 1, 20, "pear")};
        auto saved = comparisons::save(*store, {"Name one fruit.", "Name one planet."}, configs, cells);
        QVERIFY2(saved.ok(), saved.status().message().c_str());
        QCOMPARE(saved->configurationIds.size(), size_t(2));
        auto loaded = comparisons::load(*store, saved->id);
        QVERIFY2(loaded.ok(), loaded.status().message().c_str());
        QCOMPARE(loaded->prompts, (std::vector<std::string>{"Name one fruit.", "Name one planet."}));
        QCOMPARE(loaded->configurations.size(), size_t(2));
        QCOMPARE(loaded->configurations[1].kv_dtype, std::string("q8_0"));
        QCOMPARE(*loaded->outputs[0][0], std::string("apple"));
        QCOMPARE(*loaded->outputs[0][1], std::string("pear"));
        QCOMPARE(*loaded->outputs[1][0], std::string("mars"));
        QVERIFY(!loaded->outputs[1][1] && !loaded->runs[1][1]);
        QCOMPARE(*loaded->runs[1][0]->ttft_ms, 12.0);
        QCOMPARE(loaded->record.prompt, std::string("Name one fruit.\n---\nName one planet."));
        auto session = store->load_session(saved->sessionId);
        QVERIFY(session.ok());
        QCOMPARE(session->title, std::string("Compare: Name one fruit. (+1 more prompt)"));
        // The transcript: each prompt followed by its replies.
        auto messages = store->load_messages(saved->sessionId);
        QVERIFY(messages.ok());
        QStringList roles;
        for (const auto& m : *messages) roles << QString::fromStdString(m.role + ":" + m.text);
        QCOMPARE(roles, QStringList({"user:Name one fruit.", "assistant:apple", "assistant:pear",
                                     "user:Name one planet.", "assistant:mars"}));
    }

    // What failed is stored with its reason (schema 6), not dropped: a column that never ran, and
    // one whose second prompt failed; History shows both.
    void failedColumnsAreStoredWithTheirReason() {
        auto store = openStore("failed.db");
        const std::vector<workbench::EngineConfig> configs = {config("full", "f16"), config("latent:rank=999", "f16"),
                                                              config("full", "q8_0")};
        std::vector<ComparisonCell> cells = {cell(0, 0, 10, "apple"), cell(1, 0, 12, "mars"), cell(0, 2, 11, "pear")};
        const std::vector<std::string> errors = {"", "latent: rank 999 is larger than the layer's K and V width", "prompt 2: out of KV"};
        auto saved = comparisons::save(*store, {"Name one fruit.", "Name one planet."}, configs, cells, {}, errors);
        QVERIFY2(saved.ok(), saved.status().message().c_str());
        QCOMPARE(saved->configurationIds.size(), size_t(3));
        auto loaded = comparisons::load(*store, saved->id);
        QVERIFY2(loaded.ok(), loaded.status().message().c_str());
        QCOMPARE(loaded->errors, errors);
        QCOMPARE(loaded->configurations[1].variant, std::string("latent:rank=999"));
        QVERIFY(!loaded->runs[0][1] && !loaded->runs[1][1]);
        QCOMPARE(*loaded->outputs[0][2], std::string("pear"));
        QVERIFY(!loaded->outputs[1][2]);
        // Saved without errors (as before schema 6): every column reads as having run.
        auto plain = comparisons::save(*store, {"Name one fruit."}, configs, {cell(0, 0, 10, "apple")});
        QVERIFY(plain.ok());
        auto reloaded = comparisons::load(*store, plain->id);
        QVERIFY(reloaded.ok());
        QCOMPARE(reloaded->errors, std::vector<std::string>{""});
    }

    // A comparison shows the quality evaluated after it ran, never one made before it for another
    // comparison of the same configuration (issue 24, defect 6).
    void qualityShownIsTheComparisonsOwn() {
        auto store = openStore("quality.db");
        const std::vector<workbench::EngineConfig> configs = {config("full", "f16")};
        auto configurationId = store->save_configuration(workbench::make_configuration(configs[0]));
        QVERIFY(configurationId.ok());
        auto evaluation = [&](int64_t when, double ppl) {
            workbench::EvaluationRecord e;
            e.configuration_id = *configurationId;
            e.perplexity = ppl;
            e.created_unix_ms = when;
            QVERIFY(store->save_evaluation(e).ok());
        };
        evaluation(1000, 9.0);  // long before
        auto saved = comparisons::save(*store, {"Name one fruit."}, configs, {cell(0, 0, 10, "apple")});
        QVERIFY(saved.ok());
        QVERIFY(store->flush().ok());
        auto loaded = comparisons::load(*store, saved->id);
        QVERIFY(loaded.ok());
        QVERIFY(loaded->evaluationsByConfiguration.empty());  // not evaluated with this comparison
        const int64_t ran = loaded->record.created_unix_ms;
        evaluation(ran + 5000, 7.0);
        evaluation(ran + 1000, 8.0);  // the first after it: this comparison's
        QVERIFY(store->flush().ok());
        loaded = comparisons::load(*store, saved->id);
        QVERIFY(loaded.ok());
        QCOMPARE(loaded->evaluationsByConfiguration.at(*configurationId).perplexity.value_or(0), 8.0);
    }

    void singlePromptComparisonOfEarlierVersionsLoads() {
        // Written as the Compare page did before prompt sets: one user message, then each reply.
        auto store = openStore("old.db");
        std::vector<workbench::RowId> configIds;
        for (const auto& c : {config("full", "f16"), config("full", "q8_0")})
            configIds.push_back(*store->save_configuration(workbench::make_configuration(c)));
        workbench::SessionRecord session;
        session.title = "Compare: hello";
        const workbench::RowId sessionId = *store->create_session(session);
        QVERIFY(store->add_message({0, sessionId, 0, 0, "user", "hello", 0}).ok());
        workbench::ComparisonRecord comparison;
        comparison.name = session.title;
        comparison.prompt = "hello";
        comparison.configuration_ids = configIds;
        const workbench::RowId comparisonId = *store->save_comparison(comparison);
        for (size_t i = 0; i < configIds.size(); ++i) {
            workbench::RunRecord run;
            run.session_id = sessionId;
            run.configuration_id = configIds[i];
            run.ttft_ms = 5.0 + static_cast<double>(i);
            run.id = *store->begin_run(run);
            QVERIFY(store->finish_run(run).ok());
            QVERIFY(store->add_message({0, sessionId, run.id, 0, "assistant", "reply " + std::to_string(i), 0}).ok());
            QVERIFY(store->add_comparison_run(comparisonId, run.id).ok());
        }
        QVERIFY(store->flush().ok());
        auto loaded = comparisons::load(*store, comparisonId);
        QVERIFY2(loaded.ok(), loaded.status().message().c_str());
        QCOMPARE(loaded->prompts, std::vector<std::string>{"hello"});
        QCOMPARE(*loaded->outputs[0][1], std::string("reply 1"));
        QCOMPARE(*loaded->runs[0][0]->ttft_ms, 5.0);
    }
};

WB_UI_TEST_MAIN(TestCompareData, false)
#include "test_ui_compare_data.moc"
