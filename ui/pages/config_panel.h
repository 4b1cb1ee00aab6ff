// The configuration beside the chat. Load-time settings (threads, context, weights, attention
// variant and its parameters, K/V types, KV budget, backend) take effect on a reload, which the
// Apply button starts; sampling settings go with the next turn. Before applying, it shows the
// KV bytes the chosen configuration will hold and read beside full attention's, as the engine
// predicts them for the loaded model (ui/pages/predicted_kv.h); the attention fields are the
// engine's variant table (ui/pages/attention_form.h). It says when the configuration depends on a
// calibration (a calibrated layout, latent's factors). GUI thread only; it reads the loaded
// ModelInfo, never the engine.
#pragma once

#include <QWidget>
#include <optional>

#include "ui/bridge/engine_types.h"
#include "workbench/attention.h"

class AttentionForm;
class SamplingForm;
class QComboBox;
class QFormLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QSettings;
class QSpinBox;

class ConfigPanel : public QWidget {
    Q_OBJECT
public:
    explicit ConfigPanel(QWidget* parent = nullptr);

    // The load-time settings as the engine takes them, for `modelPath`.
    workbench::EngineConfig engineConfig(const QString& modelPath) const;
    // The next reply's request; its seed is drawn fresh unless the seed is fixed.
    workbench::GenerationRequest generationRequest() const;
    // A reply finished with `seed`: shown in the seed field while the seed is not fixed.
    void noteSeedUsed(quint64 seed);
    // Sets the load-time fields to `config` (History → Continue reloads with a stored one).
    // False when the form cannot express it (a spec or KV types that do not parse, a value past
    // a field's range): the reason is shown, nothing crashes. A layout's layers are checked
    // against the model at load.
    bool setEngineConfig(const workbench::EngineConfig& config);

    // The model the predictions are for (nullopt: none loaded) and the settings it was loaded
    // with: Apply is offered while the form differs from them.
    void setLoadedModel(const std::optional<workbench::ModelInfo>& info, const workbench::EngineConfig& applied);
    // The loaded engine's KV after a step of the chat: shown beside what predict_kv gives for
    // the same tokens, with where any difference comes from.
    void showMeasuredKv(int nTokens, quint64 bytesInUse);
    void setLoading(bool loading);
    void setLoadProgress(const QString& step, double fraction);

    void saveSettings(QSettings& settings) const;
    // Restores the last session's settings; load-time ones that differ from the defaults are
    // named in a note above Apply (restoredSummary) until they are reset.
    void restoreSettings(QSettings& settings);
    // The load-time fields back to the panel's defaults (the engine's: full attention, f16 KV,
    // the model's context, every core); Apply then reloads with them.
    void resetToDefaults();
    // The load-time settings that differ from the defaults, named ("attention cross_layer…, KV
    // q4_0"); empty at the defaults.
    QString changesFromDefaults() const;
    // What restoreSettings brought back that differs from the defaults (empty: nothing, or reset since).
    QString restoredSummary() const;

signals:
    void applyRequested();

private:
    QWidget* buildLoadGroup();
    QSpinBox* addSpin(QFormLayout* form, const QString& label, const QString& name, int min, int max, int value,
                      const QString& tip);
    void refresh();  // the prediction and the Apply button, after any change
    // The context and budget warnings, from the prediction at the context the panel predicts for.
    void showWarnings(const workbench::KvPrediction& atContext, int ctx);
    // What the configuration owes to a calibration: a calibrated layout (while the form still
    // shows it) and latent's factors, which come from a calibration text at load.
    void showCalibration(const workbench::AttentionLayout* layout, const std::string& spec);
    std::string kvTypes() const;
    // The MLA cache form to load `modelPath` with ("latent" unless the loaded latent-attention
    // model is reloaded: empty path or its own).
    std::string mlaCache(const QString& modelPath) const;
    bool differsFromApplied() const;
    // Chooses the backend named `name` when it is listed and can run here (its entry enabled).
    bool selectBackend(const QString& name);

    // Load-time settings.
    QSpinBox* m_threads = nullptr;
    QSpinBox* m_context = nullptr;
    QComboBox* m_weights = nullptr;
    AttentionForm* m_attention = nullptr;
    QComboBox* m_kType = nullptr;
    QComboBox* m_vType = nullptr;
    QSpinBox* m_kvRecent = nullptr;
    QComboBox* m_mlaCache = nullptr;
    QFormLayout* m_kvForm = nullptr;
    QSpinBox* m_kvBudget = nullptr;
    QComboBox* m_backend = nullptr;
    QLabel* m_specLabel = nullptr;
    QLabel* m_calibration = nullptr;
    QLabel* m_prediction = nullptr;
    QLabel* m_measured = nullptr;
    QLabel* m_measuredVsPredicted = nullptr;
    QPushButton* m_apply = nullptr;
    QPushButton* m_resetDefaults = nullptr;
    QLabel* m_restoredNote = nullptr;   // "restored from the last session: …"
    QProgressBar* m_loadBar = nullptr;
    QLabel* m_loadStep = nullptr;

    SamplingForm* m_sampling = nullptr;   // per turn

    std::optional<workbench::ModelInfo> m_info;
    QLabel* m_contextWarning = nullptr;  // the context asked for is past the model's trained length
    QLabel* m_budgetWarning = nullptr;   // the KV budget holds less than the context needs
    workbench::EngineConfig m_applied;
    workbench::EngineConfig m_defaults;   // the load-time fields as built, before any restore
    // From the configuration last put into the form (History, --config, a calibrated file).
    std::string m_calibrationText;   // latent's calibration text; empty: the default
    std::string m_calibratedBy;      // how a calibration chose m_calibratedSpec
    std::string m_calibratedSpec;
    bool m_loading = false;
};
