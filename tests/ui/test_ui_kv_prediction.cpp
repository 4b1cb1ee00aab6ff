// The KV-bytes predictor and the configuration panel, without a model: each variant's closed
// form on SmolLM2-135M's shape (30 layers, 3 KV heads of 64), the spec strings the panel builds
// parse in the engine's grammar to the same settings, and the panel shows the prediction, offers
// a reload only when a load-time setting changed, and keeps CUDA unselectable with a reason.
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTest>

#include "workbench/attention.h"
#include "tests/ui/ui_test_support.h"
#include "ui/pages/config_panel.h"
#include "widgets/kv_prediction.h"

namespace {

const KvShape kSmol{30, 3, 64};
constexpr double kFullF16 = 2.0 * 30 * 3 * 64 * 2;  // 23040 bytes per token

AttentionParams params(const char* kind) {
    AttentionParams p;
    p.kind = QString::fromLatin1(kind);
    return p;
}

workbench::ModelInfo smolInfo() {
    workbench::ModelInfo info;
    info.name = "SmolLM2 (shape only)";
    info.n_layer = 30;
    info.n_head_kv = 3;
    info.head_dim = 64;
    info.n_ctx_train = 8192;
    info.n_ctx = 4096;
    return info;
}

}  // namespace

class TestKvPrediction : public QObject {
    Q_OBJECT
private slots:
    void fullAttentionBytesPerToken() {
        const KvPrediction p = kvprediction::predict(kSmol, params("full"), "f16", "f16", 4096);
        QCOMPARE(p.bytesPerTokenFull, 23040.0);
        QCOMPARE(p.bytesPerTokenStored, 23040.0);
        QCOMPARE(p.bytesFull, 23040.0 * 4096);
        QCOMPARE(p.bytesVariant, p.bytesFull);
    }

    void kvTypesCountTheirBlockScales() {
        QCOMPARE(kvprediction::predict(kSmol, params("full"), "f32", "f32", 1).bytesPerTokenFull, 46080.0);
        QCOMPARE(kvprediction::predict(kSmol, params("full"), "bf16", "bf16", 1).bytesPerTokenFull, kFullF16);
        QCOMPARE(kvprediction::predict(kSmol, params("full"), "q8_0", "q8_0", 1).bytesPerTokenFull, 12240.0);
        QCOMPARE(kvprediction::predict(kSmol, params("full"), "fp8", "fp8", 1).bytesPerTokenFull, 12240.0);
        QCOMPARE(kvprediction::predict(kSmol, params("full"), "q4_0", "q4_0", 1).bytesPerTokenFull, 6480.0);
        // Mixed: K at q8_0 (34/32), V at q4_0 (18/32): 30·3·64·(34+18)/32.
        QCOMPARE(kvprediction::predict(kSmol, params("full"), "q8_0", "q4_0", 1).bytesPerTokenFull, 9360.0);
        QCOMPARE(kvprediction::kvTypesString("q8_0", "q4_0"), QStringLiteral("k=q8_0,v=q4_0"));
        QCOMPARE(kvprediction::kvTypesString("f16", "f16"), QStringLiteral("f16"));
    }

    void slidingHoldsWindowPlusSinks() {
        AttentionParams p = params("sliding");
        p.window = 64;
        p.sinks = 4;
        QCOMPARE(kvprediction::predict(kSmol, p, "f16", "f16", 50).bytesVariant, 50 * kFullF16);
        QCOMPARE(kvprediction::predict(kSmol, p, "f16", "f16", 4096).bytesVariant, 68 * kFullF16);
        QCOMPARE(kvprediction::predict(kSmol, p, "f16", "f16", 4096).bytesFull, 4096 * kFullF16);
    }

    void crossLayerDividesItsRange() {
        AttentionParams p = params("cross_layer");
        p.group = 2;
        QCOMPARE(kvprediction::predict(kSmol, p, "f16", "f16", 1).bytesPerTokenStored, kFullF16 / 2);
        p.group = 3;
        p.firstLayer = 10;
        p.lastLayer = 21;  // 12 layers → 4 stored, 18 outside: 22 of 30
        QCOMPARE(kvprediction::predict(kSmol, p, "f16", "f16", 1).bytesPerTokenStored, kFullF16 / 30 * 22);
    }

    void poolingVariantsKeepSinksRecentAndOneEntryPerBlock() {
        AttentionParams p = params("compressed");
        p.block = 4;
        p.recent = 256;
        p.sinks = 0;
        // 256 recent + (4096 − 256) / 4 pooled entries.
        QCOMPARE(kvprediction::predict(kSmol, p, "f16", "f16", 4096).tokensHeld, 256.0 + 960.0);
        p.kind = QStringLiteral("heavy");
        p.block = 16;
        p.sinks = 4;
        // 4 + 256 + (4096 − 260) = 3836 old tokens: 239 whole blocks and 12 waiting.
        QCOMPARE(kvprediction::predict(kSmol, p, "f16", "f16", 4096).tokensHeld, 260.0 + 239.0 + 12.0);
        QCOMPARE(kvprediction::predict(kSmol, p, "f16", "f16", 100).tokensHeld, 100.0);
    }

    void topkStoresEverythingLatentStoresRank() {
        QCOMPARE(kvprediction::predict(kSmol, params("topk"), "f16", "f16", 1000).bytesVariant, 1000 * kFullF16);
        AttentionParams p = params("latent");
        p.rank = 96;
        QCOMPARE(kvprediction::predict(kSmol, p, "f16", "f16", 1).bytesPerTokenStored, 30.0 * 96 * 2);
    }

    void specStringsParseInTheEngineGrammar_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("full") << "full" << "full";
        QTest::newRow("sliding") << "sliding" << "sliding:window=1020,sinks=4";
        QTest::newRow("cross_layer") << "cross_layer" << "cross_layer:group=2,merge=none";
        QTest::newRow("topk") << "topk" << "topk:k=1024,recent=64";
        QTest::newRow("compressed") << "compressed" << "compressed:block=4,recent=64,sinks=4";
        QTest::newRow("heavy") << "heavy" << "heavy:block=4,k=1024,recent=64,sinks=4";
        QTest::newRow("latent") << "latent" << "latent:rank=96";
    }
    void specStringsParseInTheEngineGrammar() {
        QFETCH(QString, kind);
        QFETCH(QString, expected);
        const QString spec = kvprediction::specString(params(kind.toLatin1().constData()));
        QCOMPARE(spec, expected);
        auto parsed = workbench::parse_attention_spec(spec.toStdString());
        QVERIFY2(parsed.ok(), parsed.status().message().c_str());
        // The engine's canonical form of it parses back to the same name: nothing was dropped.
        auto again = workbench::parse_attention_spec(workbench::attention_spec_name(*parsed));
        QVERIFY(again.ok());
        QCOMPARE(workbench::attention_spec_name(*again), workbench::attention_spec_name(*parsed));
        QCOMPARE(QString::fromLatin1(workbench::attention_kind_name(parsed->kind)), kind);
    }

    void crossLayerRangeAndMergeInTheSpec() {
        AttentionParams p = params("cross_layer");
        p.group = 3;
        p.firstLayer = 10;
        p.lastLayer = 21;
        p.merge = QStringLiteral("mean");
        const QString spec = kvprediction::specString(p);
        QCOMPARE(spec, QStringLiteral("cross_layer:group=3,layers=10-21,merge=mean"));
        auto parsed = workbench::parse_attention_spec(spec.toStdString());
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->first_layer, 10);
        QCOMPARE(parsed->last_layer, 21);
        QCOMPARE(parsed->group, 3);
    }

    void contextPastTheTrainedLengthIsWarnedBeforeApply() {
        ConfigPanel panel;
        auto* warning = panel.findChild<QLabel*>("contextWarning");
        QVERIFY(warning);
        panel.setLoadedModel(smolInfo(), panel.engineConfig(QString()));
        auto* context = panel.findChild<QSpinBox*>("contextSpin");
        for (int ok : {0, 4096, 8192}) {
            context->setValue(ok);
            QVERIFY2(warning->isHidden(), qPrintable(QString::number(ok)));
        }
        context->setValue(999999);
        QVERIFY(!warning->isHidden());
        QVERIFY2(warning->text().contains("past the 8192 tokens"), qPrintable(warning->text()));
        // Full attention at f16: 23040 bytes for each of the 999999 tokens.
        QVERIFY2(warning->text().contains("21.46 GiB"), qPrintable(warning->text()));
        context->setValue(2048);
        QVERIFY(warning->isHidden());
    }

    void aBudgetBelowTheContextIsWarnedBeforeApply() {
        ConfigPanel panel;
        auto* warning = panel.findChild<QLabel*>("budgetWarning");
        QVERIFY(warning);
        panel.setLoadedModel(smolInfo(), panel.engineConfig(QString()));
        panel.findChild<QSpinBox*>("contextSpin")->setValue(2048);
        auto* budget = panel.findChild<QSpinBox*>("kvBudgetSpin");
        QVERIFY(warning->isHidden());  // no budget: the pool is what the context needs
        budget->setValue(4);           // full attention at 2048 tokens holds 45 MiB
        QVERIFY(!warning->isHidden());
        QVERIFY2(warning->text().contains("KV budget (4 MiB)") && warning->text().contains("at least 45 MiB"),
                 qPrintable(warning->text()));
        budget->setValue(45);
        QVERIFY(warning->isHidden());
        // A sliding window needs far less: the same 4 MiB is enough for it.
        budget->setValue(4);
        panel.findChild<QComboBox*>("attentionCombo")->setCurrentText("sliding");
        panel.findChild<QSpinBox*>("slidingWindow")->setValue(64);
        QVERIFY2(warning->isHidden(), qPrintable(warning->text()));
    }

    void panelShowsPredictionAndOffersReloadOnlyForLoadSettings() {
        ConfigPanel panel;
        auto* apply = panel.findChild<QPushButton*>("applyButton");
        auto* prediction = panel.findChild<QLabel*>("predictionLabel");
        QVERIFY(apply && prediction);
        QVERIFY(prediction->text().contains("Load a model"));

        panel.setLoadedModel(smolInfo(), panel.engineConfig(QString()));
        QVERIFY2(prediction->text().contains("22.5 KiB"), qPrintable(prediction->text()));  // 23040 B per token
        QVERIFY(!apply->isEnabled());
        QCOMPARE(apply->text(), QStringLiteral("Applied"));

        // Sampling applies to the next turn: no reload.
        panel.findChild<QSpinBox*>("maxTokensSpin")->setValue(24);
        QVERIFY(!apply->isEnabled());
        QCOMPARE(panel.generationRequest().max_tokens, 24);

        // A variant is a load-time setting.
        panel.findChild<QComboBox*>("attentionCombo")->setCurrentText("sliding");
        panel.findChild<QSpinBox*>("slidingWindow")->setValue(64);
        panel.findChild<QSpinBox*>("slidingSinks")->setValue(4);
        QVERIFY(apply->isEnabled());
        QVERIFY(apply->text().contains("reload"));
        QCOMPARE(panel.engineConfig("m.gguf").attention, std::string("sliding:window=64,sinks=4"));
        // 68 tokens of 23040 bytes at the model's 8192-token default context.
        QVERIFY2(prediction->text().contains(QStringLiteral("1.49 MiB")), qPrintable(prediction->text()));

        panel.findChild<QComboBox*>("kTypeCombo")->setCurrentText("q8_0");
        QCOMPARE(panel.engineConfig("m.gguf").kv_types, std::string("k=q8_0,v=f16"));
    }

    void cudaIsGreyedWithAReason() {
        ConfigPanel panel;
        auto* backend = panel.findChild<QComboBox*>("backendCombo");
        QVERIFY(backend);
        auto* model = qobject_cast<QStandardItemModel*>(backend->model());
        QVERIFY(model);
        QCOMPARE(model->item(1)->text(), QStringLiteral("CUDA"));
        QVERIFY(!model->item(1)->isEnabled());
        QVERIFY(model->item(1)->toolTip().contains("CUDA"));
        QCOMPARE(backend->currentText(), QStringLiteral("CPU"));
    }

    // History → Continue and `workbench --config` put a stored EngineConfig back into the form:
    // every variant's spec and the K/V types read back as they were written.
    void storedConfigurationsReadBackIntoThePanel() {
        ConfigPanel panel;
        for (const char* spec : {"full", "sliding:window=64,sinks=4", "cross_layer:group=2,merge=none",
                                 "cross_layer:group=3,layers=2-20,merge=mean", "topk:k=256,recent=32",
                                 "compressed:block=8,recent=128,sinks=4", "heavy:block=16,k=32,recent=256,sinks=2",
                                 "latent:rank=64"}) {
            QCOMPARE(kvprediction::specString(kvprediction::parseSpec(QString::fromLatin1(spec))), QString::fromLatin1(spec));
            workbench::EngineConfig c;
            c.n_threads = 3;
            c.n_ctx = 768;
            c.weight_type = "q8_0";
            c.attention = spec;
            c.kv_types = "k=q8_0,v=q4_0";
            c.kv_budget_bytes = uint64_t{48} << 20;
            QVERIFY2(panel.setEngineConfig(c), spec);
            const workbench::EngineConfig back = panel.engineConfig(QStringLiteral("m.gguf"));
            QCOMPARE(back.attention, c.attention);
            QCOMPARE(back.kv_types, c.kv_types);
            QCOMPARE(back.weight_type, c.weight_type);
            QCOMPARE(back.n_threads, 3);
            QCOMPARE(back.n_ctx, 768);
            QCOMPARE(back.kv_budget_bytes, c.kv_budget_bytes);
        }
        const auto kv = kvprediction::parseKvTypes(QStringLiteral("f16"));
        QCOMPARE(kv.first, QStringLiteral("f16"));
        QCOMPARE(kv.second, QStringLiteral("f16"));
    }
};

WB_UI_TEST_MAIN(TestKvPrediction, false)
#include "test_ui_kv_prediction.moc"
