#include "ui/pages/config_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <algorithm>
#include <filesystem>

#include "ui/format.h"
#include "workbench/backends.h"
#include "ui/pages/attention_form.h"
#include "ui/pages/form_rows.h"
#include "ui/pages/predicted_kv.h"
#include "ui/pages/sampling_form.h"

namespace {

// What requantize accepts (core_engine/model/requantize.cpp); empty data: the file's own types.
const char* const kWeightTypes[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q6_k"};

// The engine's default context when none is given: the trained length, capped at 8192.
int effectiveContext(int requested, const std::optional<workbench::ModelInfo>& info) {
    if (requested > 0) return requested;
    if (info) return std::min(info->n_ctx_train > 0 ? info->n_ctx_train : 8192, 8192);
    return 0;
}

}  // namespace

ConfigPanel::ConfigPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(buildLoadGroup());
    m_sampling = new SamplingForm(this);
    connect(m_sampling, &SamplingForm::draftModelChanged, this, &ConfigPanel::refresh);
    layout->addWidget(m_sampling);
    layout->addStretch(1);
    m_defaults = engineConfig(QString());
    refresh();
}

QSpinBox* ConfigPanel::addSpin(QFormLayout* form, const QString& label, const QString& name, int min, int max, int value,
                               const QString& tip) {
    QSpinBox* spin = formrows::addSpin(form, this, label, name, min, max, value, tip);
    connect(spin, &QSpinBox::valueChanged, this, &ConfigPanel::refresh);
    return spin;
}

QWidget* ConfigPanel::buildLoadGroup() {
    auto* box = new QGroupBox(tr("Model load (applies on reload)"), this);
    auto* outer = new QVBoxLayout(box);
    auto* form = new QFormLayout();
    outer->addLayout(form);

    m_backend = new QComboBox(this);
    m_backend->setObjectName(QStringLiteral("backendCombo"));
    // A backend that cannot run here stays listed, greyed, with the engine's reason as its tooltip.
    auto* backends = qobject_cast<QStandardItemModel*>(m_backend->model());
    for (const std::string& name : workbench::backend_names()) {
        m_backend->addItem(QString::fromStdString(name).toUpper(), QString::fromStdString(name));
        const workbench::Status available = workbench::check_backend_available(name);
        if (!available.ok() && backends) {
            QStandardItem* item = backends->item(m_backend->count() - 1);
            item->setEnabled(false);
            item->setToolTip(QString::fromStdString(available.message()));
        }
    }
    m_backend->setToolTip(tr("Where the model runs. Greyed entries cannot run on this machine: hover them for the reason."));
    form->addRow(tr("Backend"), m_backend);

    m_threads = addSpin(form, tr("Threads"), QStringLiteral("threadsSpin"), 0, 256, 0,
                        tr("Worker threads for the matrix multiplications. 0: one per core."));
    m_threads->setSpecialValueText(tr("one per core"));
    m_context = addSpin(form, tr("Context length"), QStringLiteral("contextSpin"), 0, 1 << 20, 0,
                        tr("Tokens the conversation may hold (prompt and replies). 0: the model's trained length, "
                           "capped at 8192. The KV pool is sized for it at load."));
    m_context->setSpecialValueText(tr("model default"));
    m_context->setSingleStep(256);

    m_weights = new QComboBox(this);
    m_weights->setObjectName(QStringLiteral("weightsCombo"));
    m_weights->addItem(tr("as stored"), QString());
    for (const char* t : kWeightTypes) m_weights->addItem(QString::fromLatin1(t), QString::fromLatin1(t));
    m_weights->setToolTip(tr("Convert the weight matrices at load (in memory; the file is untouched). Smaller types "
                             "read fewer bytes per token and lose precision. Vectors stay f32."));
    form->addRow(tr("Weights"), m_weights);
    connect(m_weights, &QComboBox::currentIndexChanged, this, &ConfigPanel::refresh);

    m_attention = new AttentionForm(this);
    outer->addWidget(m_attention);
    connect(m_attention, &AttentionForm::changed, this, &ConfigPanel::refresh);
    m_calibration = new QLabel(this);
    m_calibration->setObjectName(QStringLiteral("calibrationLabel"));
    m_calibration->setWordWrap(true);
    m_calibration->setTextFormat(Qt::RichText);
    m_calibration->setStyleSheet(QStringLiteral("color: #1a5fb4;"));
    m_calibration->setVisible(false);
    outer->addWidget(m_calibration);

    auto* kvForm = new QFormLayout();
    outer->addLayout(kvForm);
    const QString typeTip = tr("Element type of the cached %1: f32 4 bytes, f16/bf16 2, q8_0 and fp8 34 bytes per 32 "
                               "values, q4_0 18 per 32, q2_0 10 per 32 (block scales included).");
    m_kType = new QComboBox(this);
    m_kType->setObjectName(QStringLiteral("kTypeCombo"));
    m_kType->addItems(predictedkv::toStringList(workbench::kv_type_names()));
    m_kType->setCurrentText(QStringLiteral("f16"));
    m_kType->setToolTip(typeTip.arg(tr("keys")) + tr(" q4_0 and q2_0 keys are Hadamard-rotated per head."));
    kvForm->addRow(tr("K cache type"), m_kType);
    m_vType = new QComboBox(this);
    m_vType->setObjectName(QStringLiteral("vTypeCombo"));
    m_vType->addItems(predictedkv::toStringList(workbench::kv_type_names()));
    m_vType->setCurrentText(QStringLiteral("f16"));
    m_vType->setToolTip(typeTip.arg(tr("values")));
    kvForm->addRow(tr("V cache type"), m_vType);
    m_kvRecent = new QSpinBox(this);
    m_kvRecent->setObjectName(QStringLiteral("kvRecentSpin"));
    m_kvRecent->setRange(0, workbench::kMaxRecentKvTokens);
    m_kvRecent->setSingleStep(32);
    m_kvRecent->setSpecialValueText(tr("off"));
    m_kvRecent->setToolTip(tr("Each query reads its last N tokens from an f16 copy beside a quantized cache (KIVI's "
                              "residual): the tokens attention weighs most lose no precision, for a fixed ring of "
                              "N + 64 tokens per sequence. Needs a quantized K or V type."));
    kvForm->addRow(tr("Recent in f16"), m_kvRecent);
    const auto syncRecent = [this] {
        m_kvRecent->setEnabled(workbench::kv_type_is_quantized(m_kType->currentText().toStdString()) ||
                               workbench::kv_type_is_quantized(m_vType->currentText().toStdString()));
    };
    for (QComboBox* c : {m_kType, m_vType}) {
        connect(c, &QComboBox::currentIndexChanged, this, syncRecent);
        connect(c, &QComboBox::currentIndexChanged, this, &ConfigPanel::refresh);
    }
    connect(m_kvRecent, &QSpinBox::valueChanged, this, &ConfigPanel::refresh);
    syncRecent();
    // Latent-attention models only (DeepSeek's MLA): the row shows while one is loaded.
    m_mlaCache = new QComboBox(this);
    m_mlaCache->setObjectName(QStringLiteral("mlaCacheCombo"));
    m_mlaCache->addItem(tr("latent rows"), QStringLiteral("latent"));
    m_mlaCache->addItem(tr("expanded per head"), QStringLiteral("expanded"));
    m_mlaCache->setToolTip(tr("How a latent-attention model (DeepSeek's MLA) caches its keys and values. Latent rows: "
                              "one row per token and layer, the latent c and one RoPE key shared by every head, "
                              "attended absorbed (the model's own design). Expanded: each head's key and value, as "
                              "multi-head attention — many times the bytes, for comparison."));
    kvForm->addRow(tr("MLA cache"), m_mlaCache);
    connect(m_mlaCache, &QComboBox::currentIndexChanged, this, &ConfigPanel::refresh);
    m_kvForm = kvForm;
    m_kvForm->setRowVisible(m_mlaCache, false);
    m_kvBudget = addSpin(kvForm, tr("KV budget (MiB)"), QStringLiteral("kvBudgetSpin"), 0, 1 << 20, 0,
                         tr("Size of the KV pool. 0: what the context needs. A reply that would pass it ends with "
                            "'context_full'."));
    m_kvBudget->setSpecialValueText(tr("what the context needs"));

    m_specLabel = new QLabel(this);
    m_specLabel->setObjectName(QStringLiteral("specLabel"));
    m_specLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_specLabel->setWordWrap(true);
    outer->addWidget(m_specLabel);
    m_prediction = new QLabel(this);
    m_prediction->setObjectName(QStringLiteral("predictionLabel"));
    m_prediction->setWordWrap(true);
    m_prediction->setTextFormat(Qt::RichText);
    outer->addWidget(m_prediction);
    m_contextWarning = new QLabel(this);
    m_contextWarning->setObjectName(QStringLiteral("contextWarning"));
    m_contextWarning->setWordWrap(true);
    m_contextWarning->setStyleSheet(QStringLiteral("color: #b26a00;"));
    m_contextWarning->setVisible(false);
    outer->addWidget(m_contextWarning);
    m_budgetWarning = new QLabel(this);
    m_budgetWarning->setObjectName(QStringLiteral("budgetWarning"));
    m_budgetWarning->setWordWrap(true);
    m_budgetWarning->setStyleSheet(QStringLiteral("color: #b26a00;"));
    m_budgetWarning->setVisible(false);
    outer->addWidget(m_budgetWarning);
    m_measured = new QLabel(this);
    m_measured->setObjectName(QStringLiteral("measuredLabel"));
    m_measured->setWordWrap(true);
    m_measured->setStyleSheet(QStringLiteral("color: #555;"));
    outer->addWidget(m_measured);
    m_measuredVsPredicted = new QLabel(this);
    m_measuredVsPredicted->setObjectName(QStringLiteral("measuredVsPredictedLabel"));
    m_measuredVsPredicted->setWordWrap(true);
    m_measuredVsPredicted->setTextFormat(Qt::RichText);
    outer->addWidget(m_measuredVsPredicted);

    m_restoredNote = new QLabel(this);
    m_restoredNote->setObjectName(QStringLiteral("restoredNote"));
    m_restoredNote->setWordWrap(true);
    m_restoredNote->setVisible(false);
    outer->addWidget(m_restoredNote);
    m_apply = new QPushButton(tr("Applied"), this);
    m_apply->setObjectName(QStringLiteral("applyButton"));
    connect(m_apply, &QPushButton::clicked, this, &ConfigPanel::applyRequested);
    m_resetDefaults = new QPushButton(tr("Reset to defaults"), this);
    m_resetDefaults->setObjectName(QStringLiteral("resetDefaultsButton"));
    connect(m_resetDefaults, &QPushButton::clicked, this, &ConfigPanel::resetToDefaults);
    outer->addWidget(m_apply);
    outer->addWidget(m_resetDefaults, 0, Qt::AlignRight);   // below Apply: the panel stays narrow
    m_loadStep = new QLabel(this);
    m_loadStep->setVisible(false);
    outer->addWidget(m_loadStep);
    m_loadBar = new QProgressBar(this);
    m_loadBar->setObjectName(QStringLiteral("loadProgress"));
    m_loadBar->setVisible(false);
    outer->addWidget(m_loadBar);
    return box;
}

std::string ConfigPanel::kvTypes() const {
    return workbench::kv_types_spec(m_kType->currentText().toStdString(), m_vType->currentText().toStdString(),
                                    m_kvRecent->isEnabled() ? m_kvRecent->value() : 0);
}

workbench::EngineConfig ConfigPanel::engineConfig(const QString& modelPath) const {
    workbench::EngineConfig c;
    c.model_path = modelPath.toStdString();
    c.n_threads = m_threads->value();
    c.n_ctx = m_context->value();
    c.weight_type = m_weights->currentData().toString().toStdString();
    c.attention = m_attention->spec();
    c.kv_types = kvTypes();
    c.kv_budget_bytes = static_cast<uint64_t>(m_kvBudget->value()) << 20;
    c.backend = m_backend->currentData().toString().toStdString();
    c.calibration_text = m_calibrationText;
    if (c.attention == m_calibratedSpec) c.calibrated_by = m_calibratedBy;   // edited away: no longer the calibrated layout
    if (m_sampling) c.draft_model_path = m_sampling->draftModelPath();
    c.mla_cache = mlaCache(modelPath);
    return c;
}

std::string ConfigPanel::mlaCache(const QString& modelPath) const {
    // The field is the loaded model's: another file loads in the default form.
    const bool applies = m_info && m_info->kv_lora_rank > 0 && (modelPath.isEmpty() || modelPath.toStdString() == m_info->path);
    return applies ? m_mlaCache->currentData().toString().toStdString() : std::string("latent");
}

bool ConfigPanel::selectBackend(const QString& name) {
    const int i = m_backend->findData(name);
    const auto* backends = qobject_cast<QStandardItemModel*>(m_backend->model());
    if (i < 0 || (backends && !backends->item(i)->isEnabled())) return false;   // greyed: cannot run here
    m_backend->setCurrentIndex(i);
    return true;
}

bool ConfigPanel::setEngineConfig(const workbench::EngineConfig& c) {
    m_threads->setValue(c.n_threads);
    m_context->setValue(c.n_ctx);
    m_weights->setCurrentIndex(std::max(0, m_weights->findData(QString::fromStdString(c.weight_type))));
    // Before the form changes: its refresh shows the calibration the configuration came with
    // (and the previous one comes back when the form refuses the spec).
    const std::string previous[] = {m_calibrationText, m_calibratedBy, m_calibratedSpec};
    m_calibrationText = c.calibration_text;
    m_calibratedBy = c.calibrated_by;
    const auto calibratedLayout = workbench::parse_attention_layout(c.attention.empty() ? std::string("full") : c.attention);
    m_calibratedSpec = calibratedLayout.ok() ? workbench::attention_layout_name(*calibratedLayout) : c.attention;
    bool expressed = m_attention->setSpec(c.attention);
    if (!expressed) {
        m_calibrationText = previous[0];
        m_calibratedBy = previous[1];
        m_calibratedSpec = previous[2];
    }
    // A stored configuration on a backend this machine cannot run keeps the current one (and says
    // the form could not express it).
    if (!selectBackend(QString::fromStdString(c.backend))) expressed = false;
    const auto kv = workbench::split_kv_types(c.kv_types.empty() ? std::string("f16") : c.kv_types);
    if (kv.ok()) {
        m_kType->setCurrentText(QString::fromStdString(kv->k));
        m_vType->setCurrentText(QString::fromStdString(kv->v));
        m_kvRecent->setValue(kv->recent);
    }
    expressed = expressed && kv.ok();
    m_kvBudget->setValue(static_cast<int>(c.kv_budget_bytes >> 20));
    const int mla = m_mlaCache->findData(QString::fromStdString(c.mla_cache));
    m_mlaCache->setCurrentIndex(std::max(0, mla));
    expressed = expressed && mla >= 0;
    if (!c.draft_model_path.empty()) m_sampling->setDraftModel(c.draft_model_path);
    refresh();
    if (!kv.ok()) m_prediction->setText(QString::fromStdString(kv.status().message()).toHtmlEscaped());
    if (!expressed) return false;
    // Read back in canonical form: "sliding" and "sliding:window=1020,sinks=4" are one setting.
    const workbench::EngineConfig back = engineConfig(QString());
    const auto layout = workbench::parse_attention_layout(c.attention.empty() ? std::string("full") : c.attention);
    return back.attention == workbench::attention_layout_name(*layout) &&
           back.kv_types == workbench::kv_types_spec(kv->k, kv->v, kv->recent) && back.weight_type == c.weight_type;
}

workbench::GenerationRequest ConfigPanel::generationRequest() const { return m_sampling->generationRequest(); }

void ConfigPanel::noteSeedUsed(quint64 seed) { m_sampling->noteSeedUsed(seed); }

void ConfigPanel::setLoadedModel(const std::optional<workbench::ModelInfo>& info, const workbench::EngineConfig& applied) {
    m_info = info;
    m_applied = applied;
    if (info) {
        m_measured->setText(tr("Loaded: %1, KV %2, %3 tokens; pool %4, full attention %5/token.")
                                .arg(QString::fromStdString(info->attention), QString::fromStdString(info->kv_types))
                                .arg(info->n_ctx)
                                .arg(fmt::bytes(static_cast<double>(info->kv_bytes_allocated)),
                                     fmt::bytes(static_cast<double>(info->kv_bytes_per_token))));
    } else {
        m_measured->clear();
    }
    m_measuredVsPredicted->clear();
    const bool latent = info && info->kv_lora_rank > 0;
    m_kvForm->setRowVisible(m_mlaCache, latent);
    if (latent) m_mlaCache->setCurrentIndex(std::max(0, m_mlaCache->findData(QString::fromStdString(info->mla_cache))));
    refresh();
}

void ConfigPanel::showMeasuredKv(int nTokens, quint64 bytesInUse) {
    if (!m_info || nTokens <= 0) return;
    const auto predicted = predictedkv::forConfig(m_info->attention, m_info->kv_types, *m_info, nTokens);
    if (!predicted.ok()) return;
    const auto bytes = [](quint64 n) { return fmt::bytes(static_cast<double>(n)); };
    QString text = tr("Measured KV at %1 tokens: <b>%2</b>; predicted %3").arg(nTokens).arg(bytes(bytesInUse), bytes(predicted->bytes_held));
    if (bytesInUse == predicted->bytes_held) {
        text += tr(" (equal).");
    } else {
        // The chat's one sequence is all the pool holds, so a difference is blocks held beyond
        // the formula's: a step still in flight, or blocks a stopped reply left unreleased.
        const QString note = predicted->note.empty() ? tr("blocks held by a step in flight")
                                                     : QString::fromStdString(predicted->note).toHtmlEscaped();
        text += tr(", %1 %2: %3.")
                    .arg(bytesInUse > predicted->bytes_held ? tr("over by") : tr("under by"))
                    .arg(bytes(bytesInUse > predicted->bytes_held ? bytesInUse - predicted->bytes_held
                                                                  : predicted->bytes_held - bytesInUse))
                    .arg(note);
    }
    m_measuredVsPredicted->setText(text);
}

void ConfigPanel::setLoading(bool loading) {
    m_loading = loading;
    m_loadBar->setVisible(loading);
    m_loadStep->setVisible(loading);
    // Most loads report no steps: a busy bar until a step says how far it is.
    m_loadBar->setRange(0, 0);
    m_loadStep->setText(tr("Loading…"));
    refresh();
}

void ConfigPanel::setLoadProgress(const QString& step, double fraction) {
    m_loadBar->setRange(0, 100);
    m_loadBar->setValue(static_cast<int>(fraction * 100));
    m_loadStep->setText(step);
}

bool ConfigPanel::differsFromApplied() const {
    const workbench::EngineConfig c = engineConfig(QString());
    return c.n_threads != m_applied.n_threads || c.n_ctx != m_applied.n_ctx || c.weight_type != m_applied.weight_type ||
           c.attention != m_applied.attention || c.kv_types != m_applied.kv_types ||
           c.kv_budget_bytes != m_applied.kv_budget_bytes || c.draft_model_path != m_applied.draft_model_path ||
           c.backend != m_applied.backend || c.calibration_text != m_applied.calibration_text || c.mla_cache != m_applied.mla_cache;
}

void ConfigPanel::refresh() {
    if (!m_apply || !m_kType || !m_kvBudget) return;  // still building
    const std::string spec = m_attention->spec();
    const std::string kv = kvTypes();
    m_specLabel->setText(tr("--attention %1\n--kv-type %2").arg(QString::fromStdString(spec), QString::fromStdString(kv)));
    // A spec the engine would refuse is not offered for loading: its reason shows instead.
    const auto layout = m_attention->layout();
    bool runnable = layout.ok();
    showCalibration(layout.ok() ? &*layout : nullptr, spec);

    if (m_info && runnable) {
        const int ctx = effectiveContext(m_context->value(), m_info);
        const auto p = predictedkv::forConfig(spec, kv, *m_info, ctx, mlaCache(QString()));
        runnable = p.ok();
        if (!p.ok()) {
            m_prediction->setText(QString::fromStdString(p.status().message()).toHtmlEscaped());
            m_contextWarning->setVisible(false);
            m_budgetWarning->setVisible(false);
        } else {
            m_prediction->setText(predictedkv::describe(*p, ctx, *m_info));
            showWarnings(*p, ctx);
        }
    } else {
        m_prediction->setText(m_info ? tr("The attention fields name no configuration: see the message above.")
                                     : tr("Load a model to see the predicted KV bytes."));
        m_contextWarning->setVisible(false);
        m_budgetWarning->setVisible(false);
    }

    const bool pending = differsFromApplied();
    m_apply->setEnabled(!m_loading && runnable && (pending || !m_info));
    if (m_loading) m_apply->setText(tr("Loading…"));
    else if (!runnable) m_apply->setText(tr("Apply (fix the attention settings first)"));
    else if (!m_info) m_apply->setText(tr("Load the model with these settings"));
    else m_apply->setText(pending ? tr("Apply (reloads the model)") : tr("Applied"));
    const QString changes = changesFromDefaults();
    m_resetDefaults->setEnabled(!m_loading && !changes.isEmpty());
    m_resetDefaults->setToolTip(changes.isEmpty() ? tr("The settings are the defaults (full attention, f16 KV, the model's context, every core).")
                                                  : tr("Back to the defaults from: %1.").arg(changes));
    if (changes.isEmpty()) m_restoredNote->setVisible(false);
}

QString ConfigPanel::changesFromDefaults() const {
    const workbench::EngineConfig now = engineConfig(QString());
    const auto text = [](const std::string& s) { return QString::fromStdString(s); };
    QStringList changes;
    if (now.attention != m_defaults.attention) changes << tr("attention %1").arg(text(now.attention));
    if (now.kv_types != m_defaults.kv_types) changes << tr("KV %1").arg(text(now.kv_types));
    if (now.weight_type != m_defaults.weight_type) changes << tr("weights %1").arg(text(now.weight_type));
    if (now.n_ctx != m_defaults.n_ctx) changes << tr("context %1").arg(now.n_ctx);
    if (now.kv_budget_bytes != m_defaults.kv_budget_bytes) changes << tr("KV budget %1 MiB").arg(now.kv_budget_bytes >> 20);
    if (now.backend != m_defaults.backend) changes << tr("backend %1").arg(text(now.backend));
    if (now.n_threads != m_defaults.n_threads) changes << tr("%n threads", nullptr, now.n_threads);
    return changes.join(QStringLiteral(", "));
}

QString ConfigPanel::restoredSummary() const { return m_restoredNote->isHidden() ? QString() : changesFromDefaults(); }

void ConfigPanel::resetToDefaults() {
    workbench::EngineConfig defaults = m_defaults;
    defaults.draft_model_path = m_sampling->draftModelPath();   // the speculative draft is kept
    setEngineConfig(defaults);
    m_restoredNote->setVisible(false);
}

void ConfigPanel::showCalibration(const workbench::AttentionLayout* layout, const std::string& spec) {
    QStringList lines;
    if (!m_calibratedBy.empty() && spec == m_calibratedSpec)
        lines << tr("Calibrated layout (%1). Its figures hold for the model it was calibrated on.")
                     .arg(QString::fromStdString(m_calibratedBy).toHtmlEscaped());
    const bool latent = layout && std::any_of(layout->begin(), layout->end(), [](const workbench::AttentionTerm& term) {
        return term.spec.kind == workbench::AttentionKind::latent;
    });
    if (latent) {
        const QString text = m_calibrationText.empty()
                                 ? tr("the last 512 tokens of paradise_lost.txt")
                                 : QString::fromStdString(std::filesystem::path(m_calibrationText).filename().string()).toHtmlEscaped();
        lines << tr("Depends on calibration: latent's factors are computed at load from the attention inputs of %1; "
                    "another text gives other factors.")
                     .arg(text);
    }
    m_calibration->setText(lines.join(QStringLiteral("<br>")));
    m_calibration->setToolTip(tr("A calibrated configuration is measured on a calibration text, never the evaluation "
                                 "text (workbench-cli calibrate, docs/VARIANTS.md)."));
    m_calibration->setVisible(!lines.isEmpty());
}

void ConfigPanel::showWarnings(const workbench::KvPrediction& atContext, int ctx) {
    // Past the trained length the positions are ones the model never saw: say so before Apply.
    const int requested = m_context->value();
    const bool pastTrained = m_info->n_ctx_train > 0 && requested > m_info->n_ctx_train;
    m_contextWarning->setVisible(pastTrained);
    if (pastTrained) {
        const auto whole = predictedkv::forConfig(m_attention->spec(), kvTypes(), *m_info, requested, mlaCache(QString()));
        m_contextWarning->setText(
            tr("Context %1 is past the %2 tokens this model was trained on: positions beyond %2 are "
               "extrapolated, and replies there usually lose coherence. The KV pool is sized for the "
               "whole context at load: %3.")
                .arg(requested)
                .arg(m_info->n_ctx_train)
                .arg(whole.ok() ? fmt::bytes(static_cast<double>(whole->bytes_held)) : tr("unknown")));
    }
    // A budget below what the whole context needs stops a conversation part way: say so now,
    // with the field's own name, rather than when a turn fails.
    const uint64_t budget = static_cast<uint64_t>(m_kvBudget->value()) << 20;
    const bool short_ = budget > 0 && atContext.bytes_held > budget;
    m_budgetWarning->setVisible(short_);
    if (short_) {
        const auto neededMiB = static_cast<qulonglong>((atContext.bytes_held + (1u << 20) - 1) >> 20);
        m_budgetWarning->setText(
            tr("The KV budget (%1 MiB) is below what this configuration holds at %2 tokens (%3): a "
               "conversation will stop before the context is full. Set KV budget to at least %4 MiB, "
               "or to \"what the context needs\".")
                .arg(m_kvBudget->value())
                .arg(ctx)
                .arg(fmt::bytes(static_cast<double>(atContext.bytes_held)))
                .arg(neededMiB));
    }
}

void ConfigPanel::saveSettings(QSettings& s) const {
    s.beginGroup(QStringLiteral("config"));
    for (const QSpinBox* spin : findChildren<QSpinBox*>()) s.setValue(spin->objectName(), spin->value());
    for (const QDoubleSpinBox* spin : findChildren<QDoubleSpinBox*>()) s.setValue(spin->objectName(), spin->value());
    for (const QComboBox* combo : findChildren<QComboBox*>())
        if (combo != m_backend) s.setValue(combo->objectName(), combo->currentIndex());
    s.setValue(QStringLiteral("backend"), m_backend->currentData());   // by name: the list may grow
    m_sampling->saveSettings(s);
    for (const char* name : {"attentionLayers", "attentionLayout"})
        if (const auto* field = findChild<QLineEdit*>(QLatin1String(name))) s.setValue(field->objectName(), field->text());
    s.setValue(QStringLiteral("calibrationText"), QString::fromStdString(m_calibrationText));
    s.setValue(QStringLiteral("calibratedBy"), QString::fromStdString(m_calibratedBy));
    s.setValue(QStringLiteral("calibratedSpec"), QString::fromStdString(m_calibratedSpec));
    s.endGroup();
}

void ConfigPanel::restoreSettings(QSettings& s) {
    s.beginGroup(QStringLiteral("config"));
    for (QSpinBox* spin : findChildren<QSpinBox*>())
        if (s.contains(spin->objectName())) spin->setValue(s.value(spin->objectName()).toInt());
    for (QDoubleSpinBox* spin : findChildren<QDoubleSpinBox*>())
        if (s.contains(spin->objectName())) spin->setValue(s.value(spin->objectName()).toDouble());
    // The attention's text fields before its combo, so the entry they belong to shows them at once.
    for (const char* name : {"attentionLayers", "attentionLayout"})
        if (auto* field = findChild<QLineEdit*>(QLatin1String(name)))
            field->setText(s.value(field->objectName(), field->text()).toString());
    for (QComboBox* combo : findChildren<QComboBox*>()) {
        const int i = s.value(combo->objectName(), combo->currentIndex()).toInt();
        if (combo != m_backend && i >= 0 && i < combo->count()) combo->setCurrentIndex(i);
    }
    // A saved backend comes back only where it can run.
    selectBackend(s.value(QStringLiteral("backend")).toString());
    m_sampling->restoreSettings(s);
    m_calibrationText = s.value(QStringLiteral("calibrationText")).toString().toStdString();
    m_calibratedBy = s.value(QStringLiteral("calibratedBy")).toString().toStdString();
    m_calibratedSpec = s.value(QStringLiteral("calibratedSpec")).toString().toStdString();
    s.endGroup();
    refresh();
    // Load-time experiments do not come back silently: the note names them, Reset is under Apply.
    const QString changes = changesFromDefaults();
    m_restoredNote->setText(tr("Restored from your last session: %1. “Reset to defaults” loads any model as it ships.").arg(changes));
    m_restoredNote->setVisible(!changes.isEmpty());
}
