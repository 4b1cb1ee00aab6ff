// The per-turn half of the configuration beside the chat: sampling (temperature, top-k/p, min-p,
// repetition penalty, seed, reply length) and speculative decoding. Every field goes with the next
// reply, except the draft model's file, which loads with the model (ConfigPanel's Apply). GUI
// thread only.
#pragma once

#include <QGroupBox>

#include "ui/bridge/engine_types.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLineEdit;
class QSettings;
class QSpinBox;

class SamplingForm : public QGroupBox {
    Q_OBJECT
public:
    explicit SamplingForm(QWidget* parent = nullptr);

    // The next reply's request; its seed is drawn fresh unless the seed is fixed.
    workbench::GenerationRequest generationRequest() const;
    // A reply finished with `seed`: shown in the seed field while the seed is not fixed.
    void noteSeedUsed(quint64 seed);
    // The draft model to load beside the model (empty unless drafting by a draft model).
    std::string draftModelPath() const;
    // Drafting by `path` (a stored configuration's draft model).
    void setDraftModel(const std::string& path);

    // The fields spin boxes and combos do not cover (the fixed-seed box, the draft file), in the
    // settings group the caller has open.
    void saveSettings(QSettings& settings) const;
    void restoreSettings(QSettings& settings);

signals:
    void draftModelChanged();   // the draft model Apply would load

private:
    void addSpeculationRows(QFormLayout* form);

    QDoubleSpinBox* m_temperature = nullptr;
    QSpinBox* m_topK = nullptr;
    QDoubleSpinBox* m_topP = nullptr;
    QDoubleSpinBox* m_minP = nullptr;
    QDoubleSpinBox* m_repeatPenalty = nullptr;
    static constexpr int kMaxSeed = 2147483647;
    QSpinBox* m_seed = nullptr;
    QCheckBox* m_fixedSeed = nullptr;
    QSpinBox* m_maxTokens = nullptr;
    QComboBox* m_drafting = nullptr;
    QLineEdit* m_draftModel = nullptr;
    QSpinBox* m_draftMax = nullptr;
    QSpinBox* m_draftNgram = nullptr;
};
