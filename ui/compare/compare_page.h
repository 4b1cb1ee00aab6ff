// The Compare page: one prompt or a prompt set under 2–4 configurations of the chat's model, run
// one after the other (each configuration is a separate load — attention, KV types and weights are
// fixed at load — then every prompt in turn, each a fresh conversation), greedy by default, each
// output streaming into its own column; a menu picks which prompt's outputs the columns and the
// overlaid charts (KV memory vs tokens, decode speed) show. The metrics table aggregates over the
// prompts: every figure (TTFT, TPOT, ITL p50/p90, tok/s, KV bytes) is the mean over the prompts of
// that prompt's figure — ITL percentiles too are per-prompt percentiles averaged, not percentiles
// of pooled gaps — so History, which has only the runs, shows the same numbers; the best of each
// row is highlighted. On request a quality evaluation of each configuration against full attention
// with f16 KV (PPL, ΔPPL, KL, top-1, retrieval, its length × depth heatmap per column). Rows start from presets and can be saved as named ones
// (compare_config_form.h). Runs and evaluations are saved (History → Comparisons reopens them).
// The page has its own EngineClient, so the chat's model stays loaded; the evaluation runs on a
// MeasureClient. A row can be a remote OpenAI-compatible server instead (compare_remote.h): its
// prompts go through the page's own RemoteChatClient, it has speed figures only (no KV bytes, no
// quality evaluation, no line on the KV chart) and is saved as a "remote" configuration.
#pragma once

#include <QWidget>
#include <optional>

#include "ui/bridge/engine_types.h"
#include "ui/bridge/measure_types.h"
#include "ui/bridge/remote_chat_client.h"
#include "ui/compare/compare_table.h"
#include "ui/compare/comparison_store.h"
#include "widgets/accuracy_heatmap.h"

class CompareConfigForm;
class CompareOutputs;
class EngineClient;
class MeasureClient;
class OverlayChart;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QDoubleSpinBox;
class RemoteChatClient;
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
    AccuracyHeatmap* heatmap() const { return m_heatmap; }
    CompareOutputs* outputs() const { return m_outputs; }
    TokenStreamView* output(int column) const;  // the column's view of the shown prompt
    OverlayChart* kvChart() const { return m_kvChart; }
    OverlayChart* rateChart() const { return m_rateChart; }
    QProgressBar* progress() const { return m_progress; }
    bool isRunning() const { return m_running; }
    workbench::RowId savedComparisonId() const { return m_saved.id; }
    QString statusText() const;

    // The chat's settings: the "Chat's current settings" preset, and the model presets are for.
    void setChatConfig(const workbench::EngineConfig& config);

public slots:
    void run();
    void stop();
    void evaluateQuality();
    // Reads a .txt (prompts separated by "---" lines) or .jsonl file into the prompt box.
    bool loadPromptSet(const QString& path);
    // Reads the named presets and stored configurations on the store thread into the preset menus.
    void refreshPresets();
    // Keeps `row`'s settings as the named preset `name` (replacing one of that name), then refreshes.
    void savePreset(int row, const QString& name);

signals:
    void runFinished();
    void comparisonSaved(qint64 comparisonId);
    void evaluationFinished();
    void presetsLoaded(int storedCount);

protected:
    void showEvent(QShowEvent* event) override;

private:
    // One prompt under one configuration.
    struct Cell {
        QList<TokenSample> samples;
        std::optional<ReplySummary> reply;
        QString error;
        qint64 startedMs = 0;
    };
    void nextConfiguration();
    void sendPrompt();
    void nextPrompt();
    void finishRun();
    void onSamples(const QList<TokenSample>& samples);
    void onReplyFinished(const ReplySummary& summary);
    void onReplyFailed(const QString& message);
    void onLoadFailed(const QString& message);
    void redrawCharts();
    // Plots samples[from..] of a reply on the column's lines.
    void appendChartPoints(int column, const QList<TokenSample>& samples, int from);
    void refreshTable();
    void clearHeatmap();
    void setStatus(const QString& text);
    void updateButtons();
    void chooseAndLoadPromptSet();
    void askAndSavePreset(int row);
    Cell& currentCell() { return m_cells[m_current][m_currentPrompt]; }
    workbench::EngineConfig baseConfig() const;
    bool isRemoteColumn(int column) const { return column >= 0 && column < m_remotes.size() && m_remotes[column]; }
    QString columnName(int column) const;
    CompareFigures namedFigures(int column) const;
    // A chart line per column; a remote's KV line stays empty and its legend says why.
    void addChartLines(int column);

    EngineClient* m_chat;
    StoreClient* m_store;
    EngineClient* m_engine = nullptr;   // the page's own, one configuration at a time
    RemoteChatClient* m_remote = nullptr;  // the page's own, for remote rows
    MeasureClient* m_measure = nullptr;
    CompareConfigForm* m_form = nullptr;
    QPlainTextEdit* m_prompt = nullptr;
    QSpinBox* m_maxTokens = nullptr;
    QSpinBox* m_evalWindows = nullptr;
    QDoubleSpinBox* m_temperature = nullptr;
    QPushButton *m_run = nullptr, *m_stop = nullptr, *m_evaluate = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    CompareOutputs* m_outputs = nullptr;
    CompareTable* m_table = nullptr;
    OverlayChart* m_kvChart = nullptr;
    OverlayChart* m_rateChart = nullptr;

    workbench::EngineConfig m_chatConfig;
    QList<workbench::EngineConfig> m_configs;  // of the last run (or evaluation)
    QList<workbench::SpeculationParams> m_drafting;   // each column's speculative decoding
    QList<std::optional<RemoteTarget>> m_remotes;  // per column: its server, nullopt for a local row
    QList<int> m_evalColumns;                  // the evaluated (local) columns, in the evaluation's order
    QStringList m_prompts;                     // of the last run
    QList<QList<Cell>> m_cells;                // [configuration][prompt]
    QList<CompareFigures> m_figures;
    std::vector<QualityFigures> m_quality;
    QList<HeatmapGrid> m_retrievalGrids;   // the evaluated columns' retrieval, in the order they finished
    AccuracyHeatmap* m_heatmap = nullptr;
    QScrollArea* m_heatmapArea = nullptr;
    int m_current = -1;        // the configuration running
    int m_currentPrompt = -1;  // its prompt running
    bool m_running = false;
    bool m_stopRequested = false;
    SavedComparison m_saved;
};
