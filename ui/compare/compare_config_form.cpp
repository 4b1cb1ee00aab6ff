#include "ui/compare/compare_config_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

#include "widgets/kv_prediction.h"

namespace {
// What requantize accepts, as the configuration panel offers them.
const char* const kWeightTypes[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q6_k"};
}  // namespace

CompareConfigForm::CompareConfigForm(QWidget* parent) : QWidget(parent) {
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(new QLabel(tr("Attention (--attention)"), this), 0, 1);
    grid->addWidget(new QLabel(tr("KV types (--kv-type)"), this), 0, 2);
    grid->addWidget(new QLabel(tr("Weights"), this), 0, 3);
    QStringList kvChoices = kvprediction::kvTypeNames();
    kvChoices << QStringLiteral("k=q8_0,v=q4_0") << QStringLiteral("k=f16,v=q8_0");
    for (int i = 0; i < kMaxRows; ++i) {
        Row& r = m_rows[i];
        r.use = new QCheckBox(tr("#%1").arg(i + 1), this);
        r.use->setObjectName(QStringLiteral("compareUse%1").arg(i));
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
        grid->addWidget(r.attention, i + 1, 1);
        grid->addWidget(r.kv, i + 1, 2);
        grid->addWidget(r.weights, i + 1, 3);
    }
    grid->setColumnStretch(1, 1);
    auto* copy = new QPushButton(tr("#1 ← the chat's settings"), this);
    copy->setObjectName(QStringLiteral("compareCopyFromChat"));
    connect(copy, &QPushButton::clicked, this, &CompareConfigForm::copyFromChatRequested);
    grid->addWidget(copy, 1, 4);
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
    r.use->setChecked(enabled);
    r.attention->setText(attention);
    r.kv->setCurrentText(kvTypes);
    r.weights->setCurrentIndex(std::max(0, r.weights->findData(weights)));
}

QList<workbench::EngineConfig> CompareConfigForm::configs(const workbench::EngineConfig& base) const {
    QList<workbench::EngineConfig> out;
    for (const Row& r : m_rows) {
        if (!r.use->isChecked()) continue;
        workbench::EngineConfig c = base;
        c.on_load_progress = nullptr;
        const QString attention = r.attention->text().trimmed();
        c.attention = attention.isEmpty() ? std::string("full") : attention.toStdString();
        const QString kv = r.kv->currentText().trimmed();
        c.kv_types = kv.isEmpty() ? std::string("f16") : kv.toStdString();
        c.weight_type = r.weights->currentData().toString().toStdString();
        out.append(c);
    }
    return out;
}

QString CompareConfigForm::shortName(const workbench::EngineConfig& c) {
    QString name = QStringLiteral("%1 · KV %2").arg(QString::fromStdString(c.attention), QString::fromStdString(c.kv_types));
    if (!c.weight_type.empty()) name += QStringLiteral(" · W %1").arg(QString::fromStdString(c.weight_type));
    return name;
}
