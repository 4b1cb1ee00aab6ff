#include "ui/compare/compare_config_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>
#include <algorithm>

#include "ui/compare/compare_remote.h"
#include "ui/pages/predicted_kv.h"
#include "workbench/attention.h"

namespace {
// What requantize accepts, as the configuration panel offers them.
const char* const kWeightTypes[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q6_k"};
constexpr int kCustom = -1;
// The menu's items that are not presets: the row's server, the chat's server, "Remote server…".
constexpr int kRemoteShown = -2, kRemoteConnected = -3, kRemoteAsk = -4;
}  // namespace

CompareConfigForm::CompareConfigForm(QWidget* parent) : QWidget(parent) {
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(new QLabel(tr("Start from"), this), 0, 1);
    grid->addWidget(new QLabel(tr("Attention (--attention)"), this), 0, 2);
    grid->addWidget(new QLabel(tr("KV types (--kv-type)"), this), 0, 3);
    grid->addWidget(new QLabel(tr("Weights"), this), 0, 4);
    grid->addWidget(new QLabel(tr("Drafting"), this), 0, 5);
    QStringList kvChoices = predictedkv::toStringList(workbench::kv_type_names());
    kvChoices << QString::fromStdString(workbench::kv_types_spec("q8_0", "q4_0"))
              << QString::fromStdString(workbench::kv_types_spec("f16", "q8_0"));
    m_presets.append(ComparePreset{ComparePreset::Source::Chat, {}, QStringLiteral("full"), QStringLiteral("f16"), {}});
    for (int i = 0; i < kMaxRows; ++i) {
        Row& r = m_rows[i];
        r.use = new QCheckBox(tr("#%1").arg(i + 1), this);
        r.use->setObjectName(QStringLiteral("compareUse%1").arg(i));
        r.preset = new QComboBox(this);
        r.preset->setObjectName(QStringLiteral("comparePreset%1").arg(i));
        r.preset->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        r.preset->setMinimumContentsLength(10);  // the window must still fit 1200 px
        r.preset->setToolTip(tr("Fill this row from the chat's settings, a built-in preset or a configuration "
                                "stored in the history; the fields stay editable."));
        r.attention = new QLineEdit(this);
        r.attention->setObjectName(QStringLiteral("compareAttention%1").arg(i));
        r.attention->setPlaceholderText(QStringLiteral("full | sliding:window=32,sinks=4 | topk:k=64,recent=16 | …"));
        r.attention->setToolTip(tr("The attention variant as the CLI's --attention takes it; see docs/VARIANTS.md."));
        r.kv = new QComboBox(this);
        r.kv->setObjectName(QStringLiteral("compareKv%1").arg(i));
        r.kv->setEditable(true);
        r.kv->addItems(kvChoices);
        r.kv->setCurrentText(QStringLiteral("f16"));
        r.weights = new QComboBox(this);
        r.weights->setObjectName(QStringLiteral("compareWeights%1").arg(i));
        r.weights->addItem(tr("as stored"), QString());
        for (const char* t : kWeightTypes) r.weights->addItem(QString::fromLatin1(t), QString::fromLatin1(t));
        grid->addWidget(r.use, i + 1, 0);
        grid->addWidget(r.preset, i + 1, 1);
        grid->addWidget(r.attention, i + 1, 2);
        grid->addWidget(r.kv, i + 1, 3);
        grid->addWidget(r.weights, i + 1, 4);
        r.drafting = new QComboBox(this);
        r.drafting->setObjectName(QStringLiteral("compareDrafting%1").arg(i));
        r.drafting->addItem(tr("none"), static_cast<int>(workbench::DraftKind::off));
        r.drafting->addItem(tr("prompt lookup"), static_cast<int>(workbench::DraftKind::lookup));
        r.drafting->addItem(tr("draft model"), static_cast<int>(workbench::DraftKind::model));
        r.drafting->setToolTip(tr("Speculative decoding for this row's replies: drafts from prompt lookup or from the "
                                  "draft model set in the chat's sampling panel, verified by the model (the same output)."));
        grid->addWidget(r.drafting, i + 1, 5);
        auto* save = new QToolButton(this);
        save->setObjectName(QStringLiteral("compareSavePreset%1").arg(i));
        save->setText(tr("Save…"));
        save->setToolTip(tr("Keep this row's settings as a named preset (in the history database)."));
        connect(save, &QToolButton::clicked, this, [this, i] { emit savePresetRequested(i); });
        grid->addWidget(save, i + 1, 6);
        connect(r.preset, &QComboBox::activated, this, [this, i](int item) {
            const int index = m_rows[i].preset->itemData(item).toInt();
            if (index == kRemoteAsk) {
                syncMenu(i);  // the row stays as it is until a server answers
                emit remoteRequested(i);
            } else if (index == kRemoteConnected && m_connected) {
                setRemote(i, *m_connected);
            } else if (index >= 0) {
                applyPreset(i, index);
            }
        });
        connect(r.attention, &QLineEdit::textChanged, this, [this, i] { syncMenu(i), checkRow(i); });
        connect(r.kv, &QComboBox::currentTextChanged, this, [this, i] { syncMenu(i), checkRow(i); });
        connect(r.weights, &QComboBox::currentIndexChanged, this, [this, i] { syncMenu(i); });
    }
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(2, 2);
    setPresets(comparepresets::builtIns(0));
    // A useful first comparison: full attention against a small sliding window.
    setRow(0, true, QStringLiteral("full"), QStringLiteral("f16"));
    setRow(1, true, QStringLiteral("sliding:window=32,sinks=4"), QStringLiteral("f16"));
    setRow(2, false, QStringLiteral("full"), QStringLiteral("q8_0"));
    setRow(3, false, QStringLiteral("full"), QStringLiteral("k=q8_0,v=q4_0"));
}

void CompareConfigForm::setRow(int row, bool enabled, const QString& attention, const QString& kvTypes,
                               const QString& weights) {
    if (row < 0 || row >= kMaxRows) return;
    Row& r = m_rows[row];
    if (r.remote) {
        r.remote.reset();
        for (QWidget* w : {static_cast<QWidget*>(r.attention), static_cast<QWidget*>(r.kv), static_cast<QWidget*>(r.weights),
                           static_cast<QWidget*>(r.drafting)})
            w->setEnabled(true);
        fillMenu(r);
    }
    r.use->setChecked(enabled);
    r.attention->setText(attention);
    r.kv->setCurrentText(kvTypes);
    // A stored weight type this build's list lacks is still offered as it was stored.
    if (!weights.isEmpty() && r.weights->findData(weights) < 0) r.weights->addItem(weights, weights);
    r.weights->setCurrentIndex(std::max(0, r.weights->findData(weights)));
    syncMenu(row);
}

void CompareConfigForm::addRow(const QString& attention, const QString& kvTypes, const QString& weights) {
    int row = kMaxRows - 1;
    for (int i = 0; i < kMaxRows; ++i)
        if (!m_rows[i].use->isChecked()) {
            row = i;
            break;
        }
    setRow(row, true, attention, kvTypes, weights);
}

void CompareConfigForm::setRemote(int row, const RemoteTarget& target) {
    if (row < 0 || row >= kMaxRows || target.url.isEmpty()) return;
    Row& r = m_rows[row];
    r.remote = target;
    r.use->setChecked(true);
    // A server's attention, KV and weights are its own: nothing here applies to it.
    for (QWidget* w : {static_cast<QWidget*>(r.attention), static_cast<QWidget*>(r.kv), static_cast<QWidget*>(r.weights),
                       static_cast<QWidget*>(r.drafting)})
        w->setEnabled(false);
    fillMenu(r);
    syncMenu(row);
}

std::optional<RemoteTarget> CompareConfigForm::rowRemote(int row) const {
    return row >= 0 && row < kMaxRows ? m_rows[row].remote : std::nullopt;
}

QList<std::optional<RemoteTarget>> CompareConfigForm::remotes() const {
    QList<std::optional<RemoteTarget>> out;
    for (const Row& r : m_rows)
        if (r.use->isChecked()) out.append(r.remote);
    return out;
}

void CompareConfigForm::setConnectedServer(const std::optional<RemoteTarget>& target) {
    m_connected = target;
    for (int i = 0; i < kMaxRows; ++i) {
        fillMenu(m_rows[i]);
        syncMenu(i);
    }
}

QList<workbench::EngineConfig> CompareConfigForm::configs(const workbench::EngineConfig& base) const {
    QList<workbench::EngineConfig> out;
    for (int i = 0; i < kMaxRows; ++i)
        if (m_rows[i].use->isChecked()) out.append(rowConfig(i, base));
    return out;
}

workbench::EngineConfig CompareConfigForm::rowConfig(int row, const workbench::EngineConfig& base) const {
    const Row& r = m_rows[std::clamp(row, 0, kMaxRows - 1)];
    workbench::EngineConfig c = base;
    c.on_load_progress = nullptr;
    const QString attention = r.attention->text().trimmed();
    c.attention = attention.isEmpty() ? std::string("full") : attention.toStdString();
    const QString kv = r.kv->currentText().trimmed();
    c.kv_types = kv.isEmpty() ? std::string("f16") : kv.toStdString();
    c.weight_type = r.weights->currentData().toString().toStdString();
    // Only a row that drafts with the draft model loads it.
    if (r.drafting->currentData().toInt() != static_cast<int>(workbench::DraftKind::model)) c.draft_model_path.clear();
    return c;
}

QList<workbench::SpeculationParams> CompareConfigForm::speculations() const {
    QList<workbench::SpeculationParams> out;
    for (const Row& r : m_rows)
        if (r.use->isChecked()) {
            workbench::SpeculationParams s;
            if (!r.remote) s.kind = static_cast<workbench::DraftKind>(r.drafting->currentData().toInt());
            out.append(s);
        }
    return out;
}

QString CompareConfigForm::shortName(const workbench::EngineConfig& c, const workbench::SpeculationParams& drafting) {
    QString name = QStringLiteral("%1 · KV %2").arg(QString::fromStdString(c.attention), QString::fromStdString(c.kv_types));
    if (!c.weight_type.empty()) name += QStringLiteral(" · W %1").arg(QString::fromStdString(c.weight_type));
    if (drafting.kind != workbench::DraftKind::off) name += QStringLiteral(" · %1").arg(QString::fromLatin1(workbench::draft_kind_name(drafting.kind)));
    return name;
}

void CompareConfigForm::setChatSettings(const workbench::EngineConfig& chat) {
    ComparePreset& p = m_presets[0];
    p.attention = QString::fromStdString(chat.attention.empty() ? std::string("full") : chat.attention);
    p.kvTypes = QString::fromStdString(chat.kv_types.empty() ? std::string("f16") : chat.kv_types);
    p.weights = QString::fromStdString(chat.weight_type);
    p.label = tr("Chat's current settings (%1)").arg(comparepresets::summary(p.attention, p.kvTypes, p.weights));
    for (Row& r : m_rows) {
        const int item = r.preset->findData(0);
        if (item >= 0) {
            r.preset->setItemText(item, p.label);
            r.preset->setItemData(item, p.label, Qt::ToolTipRole);
        }
    }
    for (int i = 0; i < kMaxRows; ++i) syncMenu(i);
}

void CompareConfigForm::setPresets(const QList<ComparePreset>& presets) {
    m_presets.resize(1);  // the chat's stays first
    if (m_presets[0].label.isEmpty())
        m_presets[0].label = tr("Chat's current settings (%1)")
                                 .arg(comparepresets::summary(m_presets[0].attention, m_presets[0].kvTypes, m_presets[0].weights));
    m_presets += presets;
    for (int i = 0; i < kMaxRows; ++i) {
        fillMenu(m_rows[i]);
        syncMenu(i);
    }
}

void CompareConfigForm::fillMenu(Row& r) {
    const QSignalBlocker block(r.preset);
    r.preset->clear();
    r.preset->addItem(tr("Custom"), kCustom);
    ComparePreset::Source previous = ComparePreset::Source::Chat;
    for (int i = 0; i < m_presets.size(); ++i) {
        const ComparePreset& p = m_presets[i];
        if (p.source != previous) r.preset->insertSeparator(r.preset->count());
        previous = p.source;
        const QString label = p.source == ComparePreset::Source::Stored ? tr("Stored: %1").arg(p.label)
                              : p.source == ComparePreset::Source::Named ? tr("Preset: %1").arg(p.label)
                                                                         : p.label;
        r.preset->addItem(label, i);
        r.preset->setItemData(r.preset->count() - 1, comparepresets::summary(p.attention, p.kvTypes, p.weights),
                              Qt::ToolTipRole);
    }
    r.preset->insertSeparator(r.preset->count());
    if (r.remote) r.preset->addItem(compareremote::shortName(*r.remote), kRemoteShown);
    if (m_connected)
        r.preset->addItem(tr("The chat's server (%1)").arg(compareremote::shortName(*m_connected)), kRemoteConnected);
    r.preset->addItem(tr("Remote server…"), kRemoteAsk);
    r.preset->setItemData(r.preset->count() - 1,
                          tr("An OpenAI-compatible server as this row: its replies' speed is compared; it reports "
                             "no KV bytes and no logits (no quality evaluation)."),
                          Qt::ToolTipRole);
}

void CompareConfigForm::applyPreset(int row, int index) {
    if (row < 0 || row >= kMaxRows || index < 0 || index >= m_presets.size()) return;
    const ComparePreset p = m_presets[index];
    setRow(row, true, p.attention, p.kvTypes, p.weights);
    // Equal presets (the chat's and a built-in) both match: show the one picked.
    const int item = m_rows[row].preset->findData(index);
    if (item >= 0) m_rows[row].preset->setCurrentIndex(item);
}

int CompareConfigForm::presetOf(int row) const {
    if (row < 0 || row >= kMaxRows) return kCustom;
    const QVariant data = m_rows[row].preset->currentData();
    return data.isValid() ? data.toInt() : kCustom;
}

void CompareConfigForm::syncMenu(int row) {
    Row& r = m_rows[row];
    if (!r.preset || r.preset->count() == 0) return;
    if (r.remote) {
        const QSignalBlocker block(r.preset);
        r.preset->setCurrentIndex(std::max(0, r.preset->findData(kRemoteShown)));
        return;
    }
    const QString attention = r.attention->text().trimmed(), kv = r.kv->currentText().trimmed();
    const QString weights = r.weights->currentData().toString();
    int match = presetOf(row);
    if (match == kCustom || !m_presets.value(match).sameFields(attention, kv, weights)) {
        // The chat's settings change with the chat, so a fixed preset is the better name for them.
        match = kCustom;
        for (int i = 1; i <= m_presets.size() && match == kCustom; ++i)
            if (m_presets[i % m_presets.size()].sameFields(attention, kv, weights)) match = i % m_presets.size();
    }
    const QSignalBlocker block(r.preset);
    r.preset->setCurrentIndex(std::max(0, r.preset->findData(match)));
}

void CompareConfigForm::setModelInfo(const std::optional<workbench::ModelInfo>& info) {
    m_info = info;
    for (int i = 0; i < kMaxRows; ++i) checkRow(i);
}

void CompareConfigForm::checkRow(int row) {
    Row& r = m_rows[row];
    const QString text = r.attention->text().trimmed();
    const std::string attention = text.isEmpty() ? std::string("full") : text.toStdString();
    const QString tip = tr("The attention variant as the CLI's --attention takes it; see docs/VARIANTS.md.");
    QString problem, predicted;
    if (m_info) {
        const auto p = predictedkv::forConfig(attention, r.kv->currentText().toStdString(), *m_info, m_info->n_ctx);
        if (p.ok()) predicted = predictedkv::describe(*p, m_info->n_ctx, *m_info);
        else problem = QString::fromStdString(p.status().message());
    } else if (auto layout = workbench::parse_attention_layout(attention); !layout.ok()) {
        problem = QString::fromStdString(layout.status().message());
    }
    // A red frame reads in both themes; the reason is in the tooltip.
    r.attention->setStyleSheet(problem.isEmpty() ? QString() : QStringLiteral("QLineEdit { border: 2px solid #d0342c; }"));
    r.attention->setProperty("specError", problem);
    r.attention->setToolTip(problem.isEmpty() ? (predicted.isEmpty() ? tip : tip + QStringLiteral("<br>") + predicted)
                                              : problem.toHtmlEscaped());
}
