// The configuration panel's attention fields and KV prediction, which are the engine's own
// (workbench/attention.h): the variant list, every field's default, range and help come from
// attention_variants(); the spec the panel emits is the engine's canonical layout name and reads
// back; the Layers field puts a variant on some layers; the prediction is predict_kv on the loaded
// model's shape (SmolLM2-135M's here: 30 layers, 3 KV heads of 64), its errors disable Apply.
// On the real default model, every built-in Compare preset's prediction equals the bytes the
// engine holds after a greedy reply.
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTest>

#include "tests/skip_missing.h"
#include "tests/ui/ui_test_support.h"
#include "workbench/backends.h"
#include "ui/compare/compare_config_form.h"
#include "ui/compare/compare_presets.h"
#include "ui/format.h"
#include "ui/pages/config_panel.h"
#include "ui/pages/predicted_kv.h"
#include "workbench/attention.h"

using workbench::AttentionParameter;

namespace {

constexpr uint64_t kFullF16PerToken = 2ull * 30 * 3 * 64 * 2;  // 23040 bytes

workbench::ModelInfo smolInfo() {
    workbench::ModelInfo info;
    info.name = "SmolLM2 (shape only)";
    info.n_layer = 30;
    info.n_head = 9;
    info.n_head_kv = 3;
    info.head_dim = 64;
    info.n_ctx_train = 8192;
    info.n_ctx = 4096;
    return info;
}

// Gemma 3 270M's shape: 18 layers, five local (window 512) to each global one.
workbench::ModelInfo gemmaInfo() {
    workbench::ModelInfo info;
    info.name = "Gemma 3 270M (shape only)";
    info.n_layer = 18;
    info.n_head = 4;
    info.n_head_kv = 1;
    info.head_dim = 256;
    info.n_ctx_train = 32768;
    info.n_ctx = 8192;
    info.native_attention.window = 512;
    for (int32_t il = 0; il < 18; ++il)
        if (il % 6 != 5) info.native_attention.local_layers.push_back(il);
    return info;
}

// A DeepSeek-V2-shaped latent-attention model (synth "small": 2 layers, 8 heads, c of 128 and a
// 32-value RoPE key; expanded, keys of 64 and values of 32 per head), loaded with latent rows.
workbench::ModelInfo deepseekInfo() {
    workbench::ModelInfo info;
    info.name = "DeepSeek-V2 block (shape only)";
    info.path = "deepseek2.gguf";
    info.n_layer = 2;
    info.n_head = 8;
    info.n_head_kv = 1;
    info.head_dim = 160;
    info.head_dim_v = 128;
    info.n_rot = 32;
    info.kv_lora_rank = 128;
    info.kv_rope_offset = 128;
    info.mla_cache = "latent";
    info.mla_head_k = 64;
    info.mla_head_v = 32;
    info.n_ctx_train = 4096;
    info.n_ctx = 4096;
    return info;
}

template <typename T>
T* child(const QWidget& parent, const QString& name) {
    T* w = parent.findChild<T*>(name);
    if (!w) qFatal("no child %s", qPrintable(name));
    return w;
}

QString fieldName(const QString& kind, const QString& key) {
    QString out;
    for (const QString& part : (kind + QLatin1Char('_') + key).split(QLatin1Char('_')))
        out += out.isEmpty() ? part : part.left(1).toUpper() + part.mid(1);
    return out;
}

workbench::KvPrediction predicted(const std::string& attention, const std::string& kv, const workbench::ModelInfo& info,
                                  int64_t n) {
    const auto p = predictedkv::forConfig(attention, kv, info, n);
    if (!p.ok()) qFatal("%s: %s", attention.c_str(), p.status().message().c_str());
    return *p;
}

}  // namespace

class TestKvPrediction : public QObject {
    Q_OBJECT
private slots:
    void variantsAndKvTypesAreTheEngines() {
        ConfigPanel panel;
        auto* variant = child<QComboBox>(panel, "attentionCombo");
        const auto& variants = workbench::attention_variants();
        // The engine's variants, then the per-layer layout entry.
        QCOMPARE(variant->count(), static_cast<int>(variants.size()) + 1);
        for (int i = 0; i + 1 < variant->count(); ++i) {
            QCOMPARE(variant->itemText(i).toStdString(), variants[static_cast<size_t>(i)].name);
            QCOMPARE(variant->itemData(i, Qt::ToolTipRole).toString().toStdString(), variants[static_cast<size_t>(i)].summary);
            // Each variant's page says what it does above its fields (sliding and top-k had none).
            auto* line = panel.findChild<QLabel*>(QStringLiteral("variantSummary_") + variant->itemText(i));
            QVERIFY2(line && line->text().toStdString() == variants[static_cast<size_t>(i)].summary, qPrintable(variant->itemText(i)));
        }
        for (const char* name : {"kTypeCombo", "vTypeCombo"}) {
            auto* types = child<QComboBox>(panel, name);
            QStringList shown;
            for (int i = 0; i < types->count(); ++i) shown << types->itemText(i);
            QCOMPARE(shown, predictedkv::toStringList(workbench::kv_type_names()));
        }
    }

    // Compare rows offer the same KV types, then two mixed K/V pairs in the engine's spelling.
    void compareRowsOfferTheEnginesKvTypes() {
        CompareConfigForm form;
        auto* kv = child<QComboBox>(form, "compareKv0");
        const QStringList names = predictedkv::toStringList(workbench::kv_type_names());
        QCOMPARE(kv->count(), names.size() + 2);
        for (int i = 0; i < names.size(); ++i) QCOMPARE(kv->itemText(i), names[i]);
        QCOMPARE(kv->itemText(names.size()), QStringLiteral("k=q8_0,v=q4_0"));
        QVERIFY(workbench::split_kv_types(kv->itemText(names.size() + 1).toStdString()).ok());
    }

    // A Compare row's spec is checked as the engine would: a bad one is marked with the parser's
    // message; a good one's tooltip gives predict_kv's bytes for the loaded model.
    void compareRowsCheckTheirSpec() {
        CompareConfigForm form;
        auto* attention = child<QLineEdit>(form, "compareAttention1");
        attention->setText(QStringLiteral("sliding:window=0"));
        QVERIFY(attention->property("specError").toString().contains(QStringLiteral("window must be at least 1")));
        attention->setText(QStringLiteral("sliding:window=32,sinks=4,layers=0-14"));
        QVERIFY(attention->property("specError").toString().isEmpty());
        workbench::ModelInfo info;
        info.n_layer = 30, info.n_head_kv = 3, info.head_dim = 64, info.n_head = 9, info.n_ctx = 2048;
        form.setModelInfo(info);
        auto p = predictedkv::forConfig("sliding:window=32,sinks=4,layers=0-14", "f16", info, 2048);
        QVERIFY(p.ok());
        QVERIFY2(attention->toolTip().contains(fmt::bytes(static_cast<double>(p->bytes_held))), qPrintable(attention->toolTip()));
        attention->setText(QStringLiteral("sliding:layers=0-40"));  // parses, but this model has 30 layers
        QVERIFY(attention->property("specError").toString().contains(QStringLiteral("outside this model's 0-29")));
    }

    // Each parameter is a field named <kind><Key> with the engine's default, range and help.
    void fieldsTakeTheEnginesDefaultsRangesAndHelp() {
        ConfigPanel panel;
        int checked = 0;
        for (const workbench::AttentionVariant& v : workbench::attention_variants())
            for (const AttentionParameter& p : v.parameters) {
                const QString name = fieldName(QString::fromStdString(v.name), QString::fromStdString(p.key));
                if (p.type == AttentionParameter::Type::integer) {
                    auto* spin = child<QSpinBox>(panel, name);
                    QCOMPARE(spin->value(), p.default_value);
                    QCOMPARE(spin->minimum(), p.min_value);
                    QCOMPARE(spin->maximum(), p.max_value);
                    QCOMPARE(spin->toolTip().toStdString(), p.help);
                } else if (p.type == AttentionParameter::Type::fraction) {
                    auto* spin = child<QDoubleSpinBox>(panel, name);
                    QCOMPARE(spin->value(), p.fraction_default);
                    QCOMPARE(spin->minimum(), p.fraction_min);
                    QCOMPARE(spin->maximum(), p.fraction_max);
                    QCOMPARE(spin->toolTip().toStdString(), p.help);
                } else if (p.type == AttentionParameter::Type::choice) {
                    auto* combo = child<QComboBox>(panel, name);
                    QCOMPARE(combo->count(), static_cast<int>(p.choices.size()));
                    QCOMPARE(combo->currentIndex(), p.default_value);
                    QCOMPARE(combo->toolTip().toStdString(), p.help);
                } else {
                    QVERIFY(!panel.findChild<QWidget*>(name));  // the Layers field stands for it
                }
                ++checked;
            }
        QVERIFY(checked >= 12);
    }

    void defaultsEqualTheEngines_data() {
        QTest::addColumn<int>("kind");
        for (const workbench::AttentionVariant& v : workbench::attention_variants())
            QTest::newRow(v.name.c_str()) << static_cast<int>(v.kind);
    }
    void defaultsEqualTheEngines() {
        QFETCH(int, kind);
        ConfigPanel panel;
        const auto k = static_cast<workbench::AttentionKind>(kind);
        child<QComboBox>(panel, "attentionCombo")->setCurrentText(workbench::attention_kind_name(k));
        QCOMPARE(panel.engineConfig("m.gguf").attention, workbench::attention_spec_name(workbench::default_attention_spec(k)));
        auto parsed = workbench::parse_attention_layout(panel.engineConfig("m.gguf").attention);
        QVERIFY(parsed.ok());
    }

    void layersPutTheVariantOnSomeLayers() {
        ConfigPanel panel;
        auto* variant = child<QComboBox>(panel, "attentionCombo");
        auto* layers = child<QLineEdit>(panel, "attentionLayers");
        auto* error = child<QLabel>(panel, "attentionError");
        auto* apply = child<QPushButton>(panel, "applyButton");
        QCOMPARE(layers->placeholderText(), QStringLiteral("all layers"));
        for (const char* kind : {"full", "latent"}) {
            variant->setCurrentText(kind);
            QVERIFY2(!layers->isEnabled(), kind);
        }
        variant->setCurrentText("sliding");
        QVERIFY(layers->isEnabled());
        QVERIFY(layers->toolTip().contains("0-9+20-29"));
        child<QSpinBox>(panel, "slidingWindow")->setValue(512);
        layers->setText("0-9+20-29");
        QCOMPARE(panel.engineConfig("m.gguf").attention, std::string("sliding:window=512,sinks=4,layers=0-9+20-29"));
        QVERIFY(error->isHidden());
        QVERIFY(apply->isEnabled());
        // For cross_layer the field is its sharing range.
        variant->setCurrentText("cross_layer");
        layers->setText("2-20");
        QCOMPARE(panel.engineConfig("m.gguf").attention, std::string("cross_layer:group=2,layers=2-20,merge=none"));
        layers->setText("0-9+20-29");  // one range only
        QVERIFY(!error->isHidden());
        QVERIFY2(error->text().contains("expected A-B"), qPrintable(error->text()));
        QVERIFY(!apply->isEnabled());
        variant->setCurrentText("topk");
        for (const char* bad : {"9-3", "0-9;full", "x", "0-9,k=3"}) {
            layers->setText(bad);
            QVERIFY2(!error->isHidden() && !error->text().isEmpty(), bad);
            QVERIFY2(!apply->isEnabled(), bad);
        }
        layers->clear();
        QVERIFY(error->isHidden());
        QVERIFY(apply->isEnabled());
    }

    void predictionIsTheEnginesPredictKv() {
        ConfigPanel panel;
        auto* prediction = child<QLabel>(panel, "predictionLabel");
        QVERIFY(prediction->text().contains("Load a model"));
        const workbench::ModelInfo info = smolInfo();
        panel.setLoadedModel(info, panel.engineConfig(QString()));
        // Full attention at the model's 8192-token default context: 23040 bytes a token, held and read.
        QVERIFY2(prediction->text().contains("at 8192 tokens") && prediction->text().contains("180.00 MiB"),
                 qPrintable(prediction->text()));
        child<QComboBox>(panel, "attentionCombo")->setCurrentText("sliding");
        child<QSpinBox>(panel, "slidingWindow")->setValue(64);
        child<QLineEdit>(panel, "attentionLayers")->setText("0-14");
        const workbench::KvPrediction p = predicted("sliding:window=64,sinks=4,layers=0-14", "f16", info, 8192);
        QCOMPARE(p.bytes_full, 8192 * kFullF16PerToken);
        QVERIFY(p.bytes_held < p.bytes_full && p.bytes_held > p.bytes_full / 2);  // half the layers stay full
        QCOMPARE(prediction->text(), predictedkv::describe(p, 8192, info));
        for (uint64_t b : {p.bytes_held, p.bytes_full, p.bytes_read, p.bytes_full_read})
            QVERIFY2(prediction->text().contains(fmt::bytes(static_cast<double>(b))), qPrintable(prediction->text()));
        // Sliding releases whole blocks: the note says so, in small print.
        QVERIFY(!p.note.empty());
        QVERIFY2(prediction->text().contains("<small>") && prediction->text().contains(QString::fromStdString(p.note)),
                 qPrintable(prediction->text()));
    }

    // A model's trained pattern: the panel predicts with it, says which layers are local and
    // global, and refuses what the pattern refuses, in the engine's words.
    void predictionFollowsTheTrainedPattern() {
        ConfigPanel panel;
        auto* prediction = child<QLabel>(panel, "predictionLabel");
        const workbench::ModelInfo info = gemmaInfo();
        panel.setLoadedModel(info, panel.engineConfig(QString()));
        const workbench::KvPrediction p = predicted("full", "f16", info, 8192);
        // Global layers 5, 11, 17 hold all 8192 tokens; each local layer its window (block-rounded).
        QCOMPARE(p.bytes_full, uint64_t{8192} * 18 * 1024);
        QCOMPARE(p.bytes_held, uint64_t{8192} * 3 * 1024 + uint64_t{15} * 512 * 1024);
        QCOMPARE(prediction->text(), predictedkv::describe(p, 8192, info));
        QVERIFY2(prediction->text().contains("Trained pattern: local layers 0-4+6-10+12-16 (window 512), global 5+11+17"),
                 qPrintable(prediction->text()));
        child<QComboBox>(panel, "attentionCombo")->setCurrentText("cross_layer");
        QVERIFY2(prediction->text().contains("neighbouring layers"), qPrintable(prediction->text()));
        QVERIFY(!child<QPushButton>(panel, "applyButton")->isEnabled());
    }

    // What the model cannot run is the engine's message, and Apply stays off.
    void predictionErrorsDisableApply() {
        ConfigPanel panel;
        auto* prediction = child<QLabel>(panel, "predictionLabel");
        auto* apply = child<QPushButton>(panel, "applyButton");
        panel.setLoadedModel(smolInfo(), panel.engineConfig(QString()));
        child<QComboBox>(panel, "attentionCombo")->setCurrentText("sliding");
        child<QLineEdit>(panel, "attentionLayers")->setText("20-40");
        QVERIFY2(prediction->text().contains("outside this model's 0-29"), qPrintable(prediction->text()));
        QVERIFY(!apply->isEnabled());
        child<QLineEdit>(panel, "attentionLayers")->setText("20-29");
        QVERIFY(apply->isEnabled());
        child<QComboBox>(panel, "attentionCombo")->setCurrentText("latent");
        child<QSpinBox>(panel, "latentRank")->setValue(97);  // odd: K and V take half each
        const auto p = predictedkv::forConfig("latent:rank=97", "f16", smolInfo(), 8192);
        QVERIFY(!p.ok());
        QCOMPARE(prediction->text(), QString::fromStdString(p.status().message()).toHtmlEscaped());
        QVERIFY(!apply->isEnabled());
        child<QSpinBox>(panel, "latentRank")->setValue(96);
        QVERIFY(apply->isEnabled());
        // Issue 48: a rank past the model's K/V width (384 for SmolLM2) is refused before Apply, the range named.
        child<QSpinBox>(panel, "latentRank")->setValue(1024);
        QCOMPARE(child<QSpinBox>(panel, "latentRank")->value(), 1024);   // kept as typed, not silently reverted
        QVERIFY2(prediction->text().contains("384"), qPrintable(prediction->text()));
        QVERIFY(!apply->isEnabled());
        child<QSpinBox>(panel, "latentRank")->setValue(96);
        QVERIFY(apply->isEnabled());
    }

    void contextPastTheTrainedLengthIsWarnedBeforeApply() {
        ConfigPanel panel;
        auto* warning = child<QLabel>(panel, "contextWarning");
        panel.setLoadedModel(smolInfo(), panel.engineConfig(QString()));
        auto* context = child<QSpinBox>(panel, "contextSpin");
        for (int ok : {0, 4096, 8192}) {
            context->setValue(ok);
            QVERIFY2(warning->isHidden(), qPrintable(QString::number(ok)));
        }
        context->setValue(999999);
        QVERIFY(!warning->isHidden());
        QVERIFY2(warning->text().contains("past the 8192 tokens"), qPrintable(warning->text()));
        // Full attention at f16: 23040 bytes for each of the 999999 tokens (1000000 in whole blocks).
        QVERIFY2(warning->text().contains("21.46 GiB"), qPrintable(warning->text()));
        context->setValue(2048);
        QVERIFY(warning->isHidden());
    }

    void aBudgetBelowTheContextIsWarnedBeforeApply() {
        ConfigPanel panel;
        auto* warning = child<QLabel>(panel, "budgetWarning");
        panel.setLoadedModel(smolInfo(), panel.engineConfig(QString()));
        child<QSpinBox>(panel, "contextSpin")->setValue(2048);
        auto* budget = child<QSpinBox>(panel, "kvBudgetSpin");
        QVERIFY(warning->isHidden());  // no budget: the pool is what the context needs
        budget->setValue(4);           // full attention at 2048 tokens holds 45 MiB
        QVERIFY(!warning->isHidden());
        QVERIFY2(warning->text().contains("KV budget (4 MiB)") && warning->text().contains("at least 45 MiB"),
                 qPrintable(warning->text()));
        budget->setValue(45);
        QVERIFY(warning->isHidden());
        // A sliding window needs far less: the same 4 MiB is enough for it.
        budget->setValue(4);
        child<QComboBox>(panel, "attentionCombo")->setCurrentText("sliding");
        child<QSpinBox>(panel, "slidingWindow")->setValue(64);
        QVERIFY2(warning->isHidden(), qPrintable(warning->text()));
    }

    void panelOffersReloadOnlyForLoadSettings() {
        ConfigPanel panel;
        auto* apply = child<QPushButton>(panel, "applyButton");
        panel.setLoadedModel(smolInfo(), panel.engineConfig(QString()));
        QVERIFY(!apply->isEnabled());
        QCOMPARE(apply->text(), QStringLiteral("Applied"));
        // Sampling applies to the next turn: no reload.
        child<QSpinBox>(panel, "maxTokensSpin")->setValue(24);
        QVERIFY(!apply->isEnabled());
        QCOMPARE(panel.generationRequest().max_tokens, 24);
        // A variant is a load-time setting.
        child<QComboBox>(panel, "attentionCombo")->setCurrentText("sliding");
        child<QSpinBox>(panel, "slidingWindow")->setValue(64);
        QVERIFY(apply->isEnabled());
        QVERIFY(apply->text().contains("reload"));
        QCOMPARE(panel.engineConfig("m.gguf").attention, std::string("sliding:window=64,sinks=4"));
        child<QComboBox>(panel, "kTypeCombo")->setCurrentText("q8_0");
        QCOMPARE(panel.engineConfig("m.gguf").kv_types, workbench::kv_types_spec("q8_0", "f16"));
        QCOMPARE(panel.engineConfig("m.gguf").kv_types, std::string("k=q8_0,v=f16"));
    }

    // The MLA cache form shows for a latent-attention model only; choosing the expanded form is a
    // reload whose prediction is the expanded rows' (8 heads × (64 + 32) values against 160).
    void mlaCacheFormIsOfferedForLatentModels() {
        ConfigPanel panel;
        auto* combo = child<QComboBox>(panel, "mlaCacheCombo");
        auto* apply = child<QPushButton>(panel, "applyButton");
        auto* prediction = child<QLabel>(panel, "predictionLabel");
        panel.setLoadedModel(smolInfo(), panel.engineConfig(QString()));
        QVERIFY(!combo->isVisibleTo(&panel));
        QCOMPARE(panel.engineConfig("m.gguf").mla_cache, std::string("latent"));

        const workbench::ModelInfo info = deepseekInfo();
        workbench::EngineConfig applied = panel.engineConfig(QString());
        panel.setLoadedModel(info, applied);
        QVERIFY(combo->isVisibleTo(&panel));
        QCOMPARE(combo->currentData().toString(), QStringLiteral("latent"));
        QVERIFY(!apply->isEnabled());
        const auto latent = predictedkv::forConfig("full", "f16", info, 4096);
        QVERIFY(latent.ok());
        QCOMPARE(latent->bytes_held, uint64_t{4096} * 2 * 160 * 2);
        QCOMPARE(prediction->text(), predictedkv::describe(*latent, 4096, info));

        combo->setCurrentIndex(combo->findData(QStringLiteral("expanded")));
        QVERIFY(apply->isEnabled());
        QVERIFY(apply->text().contains("reload"));
        QCOMPARE(panel.engineConfig(QString()).mla_cache, std::string("expanded"));
        QCOMPARE(panel.engineConfig("deepseek2.gguf").mla_cache, std::string("expanded"));
        QCOMPARE(panel.engineConfig("other.gguf").mla_cache, std::string("latent"));   // another file: its default
        const auto expanded = predictedkv::forConfig("full", "f16", info, 4096, "expanded");
        QVERIFY(expanded.ok());
        QCOMPARE(expanded->bytes_held, uint64_t{4096} * 2 * 8 * (64 + 32) * 2);
        QCOMPARE(prediction->text(), predictedkv::describe(*expanded, 4096, info));

        // Stored configurations carry the form; one the panel does not know is refused.
        applied.mla_cache = "expanded";
        QVERIFY(panel.setEngineConfig(applied));
        QCOMPARE(combo->currentData().toString(), QStringLiteral("expanded"));
        applied.mla_cache = "sideways";
        QVERIFY(!panel.setEngineConfig(applied));
    }

    // The recent window is offered only beside a quantized type, and travels in the spec.
    void recentWindowNeedsAQuantizedType() {
        ConfigPanel panel;
        auto* recent = child<QSpinBox>(panel, "kvRecentSpin");
        QVERIFY(!recent->isEnabled());   // f16 keys and values
        recent->setValue(128);
        QCOMPARE(panel.engineConfig("m.gguf").kv_types, std::string("f16"));
        child<QComboBox>(panel, "vTypeCombo")->setCurrentText("q4_0");
        QVERIFY(recent->isEnabled());
        QCOMPARE(panel.engineConfig("m.gguf").kv_types, std::string("k=f16,v=q4_0,recent=128"));
        workbench::EngineConfig c;
        c.kv_types = "q4_0,recent=64";
        QVERIFY(panel.setEngineConfig(c));
        QCOMPARE(recent->value(), 64);
        QCOMPARE(panel.engineConfig("m.gguf").kv_types, c.kv_types);
        c.kv_types = "q8_0";
        QVERIFY(panel.setEngineConfig(c));
        QCOMPARE(recent->value(), 0);
        QCOMPARE(panel.engineConfig("m.gguf").kv_types, std::string("q8_0"));
    }

    void cudaIsGreyedWithAReason() {
        ConfigPanel panel;
        auto* backend = child<QComboBox>(panel, "backendCombo");
        auto* model = qobject_cast<QStandardItemModel*>(backend->model());
        QVERIFY(model);
        QCOMPARE(model->item(1)->text(), QStringLiteral("CUDA"));
        QVERIFY(!model->item(1)->isEnabled());
        QVERIFY(model->item(1)->toolTip().contains("CUDA"));
        QCOMPARE(model->item(1)->toolTip(), QString::fromStdString(workbench::check_backend_available("cuda").message()));
        QCOMPARE(backend->currentText(), QStringLiteral("CPU"));
        QCOMPARE(panel.engineConfig("m.gguf").backend, std::string("cpu"));
        workbench::EngineConfig onCuda;
        onCuda.backend = "cuda";
        QVERIFY(!panel.setEngineConfig(onCuda));   // a stored CUDA configuration: this machine keeps the CPU
        QCOMPARE(backend->currentText(), QStringLiteral("CPU"));
    }

    // History → Continue and `workbench --config` put a stored EngineConfig back into the form:
    // every variant's spec, per-layer ones included, and the K/V types read back as written.
    void storedConfigurationsReadBackIntoThePanel() {
        ConfigPanel panel;
        for (const char* spec : {"full", "sliding:window=64,sinks=4", "cross_layer:group=2,merge=none",
                                 "cross_layer:group=3,layers=2-20,merge=mean,sinks=4", "topk:k=256,recent=32",
                                 "compressed:block=8,recent=128,sinks=4", "heavy:block=16,k=32,recent=256,sinks=2",
                                 "latent:rank=64", "sliding:window=512,sinks=4,layers=0-9+20-29", "topk:k=64,recent=16,layers=3",
                                 "cross_layer:group=2,layers=9-12,merge=mean,sinks=4;cross_layer:group=2,layers=15-28,merge=mean,sinks=4",
                                 "sliding:window=512,sinks=4,layers=0-14;topk:k=512,recent=64"}) {
            QCOMPARE(workbench::attention_layout_name(*workbench::parse_attention_layout(spec)), std::string(spec));
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
        const auto kv = workbench::split_kv_types("f16");
        QVERIFY(kv.ok());
        QCOMPARE(kv->k, std::string("f16"));
        QCOMPARE(kv->v, std::string("f16"));
        QCOMPARE(kv->recent, 0);
    }

    // A layout of several terms shows in the per-layer layout entry, whose text the user edits;
    // a calibrated one says how it was chosen until it is edited, and latent always says that
    // its factors come from a calibration text.
    void calibratedAndPerLayerLayoutsShowWhatTheyDependOn() {
        ConfigPanel panel;
        auto* calibration = child<QLabel>(panel, "calibrationLabel");
        auto* layout = child<QLineEdit>(panel, "attentionLayout");
        auto* variant = child<QComboBox>(panel, "attentionCombo");
        workbench::EngineConfig c;
        c.attention = "cross_layer:group=2,layers=9-12,merge=mean,sinks=4;cross_layer:group=2,layers=15-28,merge=mean,sinks=4";
        c.calibrated_by = "workbench-cli calibrate: cross_layer on paradise_lost.txt";
        QVERIFY(panel.setEngineConfig(c));
        QCOMPARE(variant->currentIndex(), variant->count() - 1);
        QCOMPARE(layout->text().toStdString(), c.attention);
        QVERIFY(!calibration->isHidden());
        QVERIFY2(calibration->text().contains("paradise_lost.txt"), qPrintable(calibration->text()));
        QCOMPARE(panel.engineConfig("m.gguf").calibrated_by, c.calibrated_by);
        // Edited: no longer the calibrated layout, and the configuration no longer claims it.
        layout->setText(QStringLiteral("cross_layer:group=2,layers=9-12,merge=mean,sinks=4"));
        QVERIFY(calibration->isHidden());
        QVERIFY(panel.engineConfig("m.gguf").calibrated_by.empty());
        QCOMPARE(panel.engineConfig("m.gguf").attention, std::string("cross_layer:group=2,layers=9-12,merge=mean,sinks=4"));
        // A layout that does not parse says why and offers no Apply.
        layout->setText(QStringLiteral("sliding:window=32;topk:k=64"));
        auto* error = child<QLabel>(panel, "attentionError");
        QVERIFY(!error->isHidden() && !error->text().isEmpty());
        QVERIFY(!child<QPushButton>(panel, "applyButton")->isEnabled());
        // latent depends on its calibration text, the default or the one stored with it.
        workbench::EngineConfig latent;
        latent.attention = "latent:rank=64";
        QVERIFY(panel.setEngineConfig(latent));
        QVERIFY(!calibration->isHidden());
        QVERIFY2(calibration->text().contains("paradise_lost.txt"), qPrintable(calibration->text()));
        latent.calibration_text = "/data/my_calibration.txt";
        QVERIFY(panel.setEngineConfig(latent));
        QVERIFY2(calibration->text().contains("my_calibration.txt"), qPrintable(calibration->text()));
        QCOMPARE(panel.engineConfig("m.gguf").calibration_text, latent.calibration_text);
        workbench::EngineConfig plain;
        plain.attention = "sliding:window=64,sinks=4";
        QVERIFY(panel.setEngineConfig(plain));
        QVERIFY(calibration->isHidden());
    }

    // Chosen by hand, the layout entry starts from what the fields showed; a layout and its
    // calibration survive the settings that reopen the panel next time.
    void layoutEntryStartsFromTheFieldsAndIsSaved() {
        const QString path = QDir(QDir::tempPath()).filePath(QStringLiteral("wb_config_panel_settings.ini"));
        QFile::remove(path);
        const std::string calibrated = "cross_layer:group=2,layers=9-12,merge=mean,sinks=4;cross_layer:group=2,layers=15-28,merge=mean,sinks=4";
        {
            ConfigPanel panel;
            auto* variant = child<QComboBox>(panel, "attentionCombo");
            variant->setCurrentText(QStringLiteral("sliding"));
            child<QLineEdit>(panel, "attentionLayers")->setText(QStringLiteral("0-9"));
            const std::string fields = panel.engineConfig("m.gguf").attention;
            variant->setCurrentIndex(variant->count() - 1);
            QCOMPARE(child<QLineEdit>(panel, "attentionLayout")->text().toStdString(), fields);
            QCOMPARE(panel.engineConfig("m.gguf").attention, fields);
            workbench::EngineConfig c;
            c.attention = calibrated;
            c.calibrated_by = "workbench-cli calibrate: on paradise_lost.txt";
            QVERIFY(panel.setEngineConfig(c));
            QSettings settings(path, QSettings::IniFormat);
            panel.saveSettings(settings);
        }
        ConfigPanel reopened;
        QSettings settings(path, QSettings::IniFormat);
        reopened.restoreSettings(settings);
        QCOMPARE(reopened.engineConfig("m.gguf").attention, calibrated);
        QCOMPARE(reopened.engineConfig("m.gguf").calibrated_by, std::string("workbench-cli calibrate: on paradise_lost.txt"));
        QVERIFY(!child<QLabel>(reopened, "calibrationLabel")->isHidden());
        QVERIFY(child<QLabel>(reopened, "attentionError")->isHidden());
        QFile::remove(path);
    }

    // A string the form cannot show is refused with the parser's words; nothing else changes.
    void badStoredStringsAreRefusedWithAReason() {
        ConfigPanel panel;
        workbench::EngineConfig good;
        good.attention = "sliding:window=64,sinks=4";
        good.kv_types = "f16";
        QVERIFY(panel.setEngineConfig(good));
        auto* error = child<QLabel>(panel, "attentionError");
        for (const char* spec : {"sliding:window=abc", "nonsense", "sliding:window=32;topk:k=64"}) {
            workbench::EngineConfig c = good;
            c.attention = spec;
            QVERIFY2(!panel.setEngineConfig(c), spec);
            QVERIFY2(!error->isHidden() && !error->text().isEmpty(), spec);
            QCOMPARE(panel.engineConfig("m.gguf").attention, good.attention);
        }
        workbench::EngineConfig badKv = good;
        badKv.kv_types = "k=q9";
        QVERIFY(!panel.setEngineConfig(badKv));
        QCOMPARE(panel.engineConfig("m.gguf").kv_types, std::string("f16"));
    }

    // Every built-in Compare preset, and per-layer layouts, on the real model: what the GUI
    // predicts for the context the engine reports equals the bytes the engine holds, and the
    // panel shows that figure. The engine's KvUsage and predict_kv share the blocks, rounding and
    // index data, and one sequence generated greedily is the case predict_kv describes: exact.
    void predictionEqualsTheEnginesMeasuredBytes() {
        const std::string model = workbench::find_default_model();
        if (model.empty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QFile text(QStringLiteral(WB_SOURCE_DIR "/resources/eval/alice_wonderland.txt"));
        QVERIFY(text.open(QIODevice::ReadOnly));
        workbench::EngineConfig base;
        base.model_path = model;
        base.n_ctx = 512;
        base.n_threads = 2;
        std::vector<workbench::TokenId> prompt;
        workbench::ModelInfo info;
        {
            auto e = workbench::Engine::load(base);
            QVERIFY2(e.ok(), e.ok() ? "" : e.status().message().c_str());
            prompt = (*e)->tokenize(text.readAll().toStdString(), true, false);
            info = (*e)->model_info();
        }
        QVERIFY(prompt.size() > 150);
        prompt.resize(150);

        QList<ComparePreset> presets = comparepresets::builtIns(info.n_head_kv * info.head_dim);
        QVERIFY(presets.size() >= 7);
        presets.append({ComparePreset::Source::BuiltIn, "per layer", "sliding:window=32,sinks=4,layers=0-14", "f16", {}});
        presets.append({ComparePreset::Source::BuiltIn, "per layer, two terms",
                        "sliding:window=32,sinks=4,layers=0-9;topk:k=64,recent=16", "q8_0", {}});
        for (const ComparePreset& preset : presets) {
            workbench::EngineConfig c = base;
            c.attention = preset.attention.toStdString();
            c.kv_types = preset.kvTypes.toStdString();
            auto e = workbench::Engine::load(c);
            QVERIFY2(e.ok(), qPrintable(preset.attention + ": " + QString::fromStdString(e.ok() ? "" : e.status().message())));
            workbench::GenerationRequest req;
            req.max_tokens = 24;
            req.ignore_eos = true;
            req.sampling.temperature = 0;
            const auto out = (*e)->generate_tokens(prompt, req);
            QVERIFY2(out.ok(), out.ok() ? "" : out.status().message().c_str());
            const workbench::KvUsageReport usage = (*e)->kv_usage();
            QCOMPARE(usage.n_tokens, 150 + 23);  // the last token is sampled, not yet fed back

            const workbench::KvPrediction p = predicted(c.attention, c.kv_types, (*e)->model_info(), usage.n_tokens);
            qInfo("%-50s KV %-14s measured %9llu predicted %9llu (full %9llu, read %8llu)%s%s",
                  c.attention.c_str(), c.kv_types.c_str(), static_cast<unsigned long long>(usage.bytes_in_use),
                  static_cast<unsigned long long>(p.bytes_held), static_cast<unsigned long long>(p.bytes_full),
                  static_cast<unsigned long long>(p.bytes_read), p.note.empty() ? "" : " note: ", p.note.c_str());
            QCOMPARE(p.bytes_held, usage.bytes_in_use);
            QCOMPARE(p.bytes_full, usage.bytes_full);
            QCOMPARE(p.bytes_read, usage.bytes_read_last_step);

            // The panel shows it, at that context, for every preset a single policy can express.
            ConfigPanel panel;
            workbench::EngineConfig shown = c;
            shown.n_ctx = usage.n_tokens;
            if (!panel.setEngineConfig(shown)) {
                QVERIFY2(c.attention.find(';') != std::string::npos, c.attention.c_str());
                continue;
            }
            panel.setLoadedModel((*e)->model_info(), shown);
            const QString label = child<QLabel>(panel, "predictionLabel")->text();
            QVERIFY2(label.contains(fmt::bytes(static_cast<double>(usage.bytes_in_use))), qPrintable(label));
            // After the reply, the chat's measured bytes are set beside the prediction: equal.
            panel.showMeasuredKv(usage.n_tokens, usage.bytes_in_use);
            const QString measured = child<QLabel>(panel, "measuredVsPredictedLabel")->text();
            QVERIFY2(measured.contains(QStringLiteral("(equal)")), qPrintable(measured));
            // A block more than the formula is named as over, with where it comes from.
            panel.showMeasuredKv(usage.n_tokens, usage.bytes_in_use + 4096);
            QVERIFY2(child<QLabel>(panel, "measuredVsPredictedLabel")->text().contains(QStringLiteral("over by")), qPrintable(measured));
        }
    }
};

WB_UI_TEST_MAIN(TestKvPrediction, false)
#include "test_ui_kv_prediction.moc"
