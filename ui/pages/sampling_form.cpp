#include "ui/pages/sampling_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QRandomGenerator>
#include <QSettings>
#include <QToolButton>

#include "ui/pages/form_rows.h"

SamplingForm::SamplingForm(QWidget* parent) : QGroupBox(tr("Sampling (next turn)"), parent) {
    auto* form = new QFormLayout(this);
    m_temperature = formrows::addDoubleSpin(form, this, tr("Temperature"), QStringLiteral("temperatureSpin"), 0, 5, 0.05, 0.7,
                                  tr("Divides the logits before sampling. 0: greedy (always the most likely token)."));
    m_topK = formrows::addSpin(form, this, tr("Top-k"), QStringLiteral("topKSpin"), 0, 1 << 20, 40,
                     tr("Keep the k most likely tokens. 0: off."));
    m_topK->setSpecialValueText(tr("off"));
    m_topP = formrows::addDoubleSpin(form, this, tr("Top-p"), QStringLiteral("topPSpin"), 0, 1, 0.01, 0.95,
                           tr("Keep the most likely tokens until their probabilities sum to p. 1: off."));
    m_minP = formrows::addDoubleSpin(form, this, tr("Min-p"), QStringLiteral("minPSpin"), 0, 1, 0.01, 0.05,
                           tr("Drop tokens below p × the top token's probability. 0: off."));
    m_repeatPenalty = formrows::addDoubleSpin(form, this, tr("Repetition penalty"), QStringLiteral("repeatPenaltySpin"), 0.01, 10, 0.05,
                                    1.0, tr("Penalize tokens seen in the last 64 (llama.cpp semantics). 1: off."));
    // Off by default: every reply and every regeneration draws a fresh seed (shown in its footer
    // and kept with the run), so Regenerate gives another reply; on, the seed below is used.
    auto* seedRow = new QWidget(this);
    auto* seedLayout = new QHBoxLayout(seedRow);
    seedLayout->setContentsMargins(0, 0, 0, 0);
    m_seed = new QSpinBox(seedRow);
    m_seed->setObjectName(QStringLiteral("seedSpin"));
    m_seed->setRange(0, kMaxSeed);
    m_seed->setToolTip(tr("Random seed: the same seed, settings and conversation give the same reply. "
                          "While the seed is not fixed this shows the one the last reply drew."));
    m_fixedSeed = new QCheckBox(tr("fixed"), seedRow);
    m_fixedSeed->setObjectName(QStringLiteral("fixedSeedCheck"));
    m_fixedSeed->setToolTip(tr("Use this seed for every reply. Off: each reply and regeneration draws a new one."));
    seedLayout->addWidget(m_seed, 1);
    seedLayout->addWidget(m_fixedSeed);
    form->addRow(tr("Seed"), seedRow);
    m_seed->setEnabled(false);
    connect(m_fixedSeed, &QCheckBox::toggled, m_seed, &QWidget::setEnabled);
    m_maxTokens = formrows::addSpin(form, this, tr("Max tokens"), QStringLiteral("maxTokensSpin"), 1, 1 << 20, 512,
                          tr("Most tokens per reply."));
    addSpeculationRows(form);
}

void SamplingForm::addSpeculationRows(QFormLayout* form) {
    m_drafting = new QComboBox(this);
    m_drafting->setObjectName(QStringLiteral("draftingCombo"));
    m_drafting->addItem(tr("off"), static_cast<int>(workbench::DraftKind::off));
    m_drafting->addItem(tr("prompt lookup"), static_cast<int>(workbench::DraftKind::lookup));
    m_drafting->addItem(tr("draft model"), static_cast<int>(workbench::DraftKind::model));
    m_drafting->setToolTip(tr("Speculative decoding: tokens are drafted cheaply and verified by the model in one batched "
                              "step, so the reply is the model's own (the same tokens when greedy, the same distribution "
                              "when sampling) but may come faster. Prompt lookup copies from the conversation (quoting, "
                              "editing); a draft model is a smaller model with the same vocabulary. Sliding-window and "
                              "pooled variants cannot roll drafts back and refuse."));
    form->addRow(tr("Speculative"), m_drafting);
    auto* row = new QWidget(this);
    auto* rowLayout = new QHBoxLayout(row);
    rowLayout->setContentsMargins(0, 0, 0, 0);
    m_draftModel = new QLineEdit(row);
    m_draftModel->setObjectName(QStringLiteral("draftModelEdit"));
    m_draftModel->setPlaceholderText(tr("draft .gguf (loads with Apply)"));
    m_draftModel->setToolTip(tr("The draft model's file; it loads beside the model when you apply."));
    auto* browse = new QToolButton(row);   // compact: the panel's width is the chat's to share
    browse->setText(tr("…"));
    browse->setObjectName(QStringLiteral("draftModelBrowse"));
    browse->setToolTip(tr("Choose the draft model file"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Draft model"), QString(), tr("GGUF models (*.gguf)"));
        if (!path.isEmpty()) m_draftModel->setText(path);
    });
    rowLayout->addWidget(m_draftModel, 1);
    rowLayout->addWidget(browse);
    form->addRow(tr("Draft model"), row);
    m_draftMax = formrows::addSpin(form, this, tr("Draft tokens"), QStringLiteral("draftMaxSpin"), 1, 64, 8,
                         tr("Most tokens drafted per step; the length adapts to how many are accepted."));
    m_draftNgram = formrows::addSpin(form, this, tr("Lookup n-gram"), QStringLiteral("draftNgramSpin"), 1, 16, 3,
                           tr("Prompt lookup matches the last n tokens (then fewer, down to 2) in the conversation."));
    auto sync = [this] {
        const auto kind = static_cast<workbench::DraftKind>(m_drafting->currentData().toInt());
        m_draftModel->setEnabled(kind == workbench::DraftKind::model);
        m_draftMax->setEnabled(kind != workbench::DraftKind::off);
        m_draftNgram->setEnabled(kind == workbench::DraftKind::lookup);
        emit draftModelChanged();
    };
    connect(m_drafting, &QComboBox::currentIndexChanged, this, sync);
    connect(m_draftModel, &QLineEdit::textChanged, this, &SamplingForm::draftModelChanged);
    sync();
}

workbench::GenerationRequest SamplingForm::generationRequest() const {
    workbench::GenerationRequest r;
    r.max_tokens = m_maxTokens->value();
    r.sampling.temperature = static_cast<float>(m_temperature->value());
    r.sampling.top_k = m_topK->value();
    r.sampling.top_p = static_cast<float>(m_topP->value());
    r.sampling.min_p = static_cast<float>(m_minP->value());
    r.sampling.repeat_penalty = static_cast<float>(m_repeatPenalty->value());
    r.sampling.seed = m_fixedSeed->isChecked() ? static_cast<uint64_t>(m_seed->value())
                                               : static_cast<uint64_t>(QRandomGenerator::global()->bounded(qint64{kMaxSeed} + 1));
    r.speculation.kind = static_cast<workbench::DraftKind>(m_drafting->currentData().toInt());
    r.speculation.draft_max = m_draftMax->value();
    r.speculation.ngram = m_draftNgram->value();
    return r;
}

void SamplingForm::noteSeedUsed(quint64 seed) {
    // Shows the drawn seed, so fixing it now repeats the reply just seen.
    if (!m_fixedSeed->isChecked() && seed <= static_cast<quint64>(kMaxSeed)) m_seed->setValue(static_cast<int>(seed));
}

std::string SamplingForm::draftModelPath() const {
    if (m_drafting->currentData().toInt() != static_cast<int>(workbench::DraftKind::model)) return {};
    return m_draftModel->text().trimmed().toStdString();
}

void SamplingForm::setDraftModel(const std::string& path) {
    m_draftModel->setText(QString::fromStdString(path));
    m_drafting->setCurrentIndex(m_drafting->findData(static_cast<int>(workbench::DraftKind::model)));
}

void SamplingForm::saveSettings(QSettings& s) const {
    s.setValue(m_fixedSeed->objectName(), m_fixedSeed->isChecked());
    s.setValue(m_draftModel->objectName(), m_draftModel->text());
}

void SamplingForm::restoreSettings(QSettings& s) {
    m_fixedSeed->setChecked(s.value(m_fixedSeed->objectName(), false).toBool());
    m_draftModel->setText(s.value(m_draftModel->objectName(), m_draftModel->text()).toString());
}
