// The Compare page: one prompt under 2–4 configurations of the chat's model, run one after the
// other (each is a separate load: attention, KV types and weights are fixed at load), greedy by
// default, each output streaming into its own column; then the metrics table with the best of
// each row highlighted and overlaid charts (KV memory vs tokens, decode speed), and on request a
// quality evaluation of each configuration against full attention with f16 KV (PPL, ΔPPL, KL,
// top-1). Runs and evaluations are saved (History → Comparisons reopens them). The page has its
// own EngineClient, so the chat's model stays loaded; the evaluation runs on a MeasureClient.
#pragma once

#include <QWidget>
#include <optional>

#include "ui/bridge/engine_types.h"
#include "ui/bridge/measure_types.h"
#include "ui/compare/compare_table.h"
#include "ui/compare/comparison_store.h"

class CompareConfigForm;
class EngineClient;
class MeasureClient;
class OverlayChart;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QDoubleSpinBox;
class StoreClient;
class TokenStreamView;

class ComparePage : public QWidget {
    Q_OBJECT
public:
    ComparePage(EngineClient* chat, StoreClient* store, QWidget* parent = nullptr);

    CompareConfigForm* form() const { return m_form; }
    QPlainTextEdit* prompt() const { return m_prompt; }
    QSpinBox* maxTokens() const { return m_maxTokens; }
    QSpinBox* evalWindows() const { return m_evalWindows; }
    CompareTable* table() const { return m_table; }
    TokenStreamView* output(int column) const;
    OverlayChart* kvChart() const { return m_kvChart; }
    OverlayChart* rateChart() const { return m_rateChart; }
    bool isRunning() const { return m_running; }
    workbench::RowId savedComparisonId() const { return m_saved.id; }
    QString statusText() const;

    // The chat's copy of settings for row 1 (the configuration panel's).
    void setChatConfig(const workbench::EngineConfig& config) { m_chatConfig = config; }

public slots:
    void run();
    void stop();
    void evaluateQuality();

signals:
    void runFinished();
    void comparisonSaved(qint64 comparisonId);
    void evaluationFinished();

private:
    struct Column {
        QList<TokenSample> samples;
        std::optional<ReplySummary> reply;
        QString error;
        qint64 startedMs = 0;
        int firstContext = -1;  // tokens in context at the reply's first sample
    };
    void next();
    void finishRun();
    void onSamples(const QList<TokenSample>& samples);
    void onReplyFinished(const ReplySummary& summary);
    void onFailed(const QString& message);
    void refreshTable();
    void setStatus(const QString& text);
    void updateButtons();
    workbench::EngineConfig baseConfig() const;

    EngineClient* m_chat;
    StoreClient* m_store;
    EngineClient* m_engine = nullptr;   // the page's own, one configuration at a time
    MeasureClient* m_measure = nullptr;
    CompareConfigForm* m_form = nullptr;
    QPlainTextEdit* m_prompt = nullptr;
    QSpinBox* m_maxTokens = nullptr;
    QSpinBox* m_evalWindows = nullptr;
    QDoubleSpinBox* m_temperature = nullptr;
    QPushButton *m_run = nullptr, *m_stop = nullptr, *m_evaluate = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QList<QLabel*> m_outputTitles;
    QList<TokenStreamView*> m_outputs;
    CompareTable* m_table = nullptr;
    OverlayChart* m_kvChart = nullptr;
    OverlayChart* m_rateChart = nullptr;

    workbench::EngineConfig m_chatConfig;
    QList<workbench::EngineConfig> m_configs;  // of the last run (or evaluation)
    QList<Column> m_columns;
    QList<CompareFigures> m_figures;
    std::vector<QualityFigures> m_quality;
    QString m_runPrompt;
    int m_current = -1;
    bool m_running = false;
    bool m_stopRequested = false;
    SavedComparison m_saved;
};
