// The Variants map page: a sweep's rows (`workbench-cli sweep -o FILE`, one JSON line per
// configuration) on one picture — KV bytes held (log) against a chosen quality measure (ΔPPL,
// KL, top-1, retrieval), colour for decode speed, the Pareto front drawn. Hover a point for its
// figures; click to select it (its retrieval heatmap shows beside full attention's), then load
// it in the Chat or add it to Compare. A sweep also runs
// from here (SweepPanel: on its own measuring thread with the chat's model, cancellable), its
// points filling in as rows finish; History's Sweeps tab reopens stored ones. GUI thread only.
#pragma once

#include <QWidget>
#include <optional>

#include "widgets/accuracy_heatmap.h"

class EngineClient;
class AccuracyHeatmap;
class QComboBox;
class QJsonObject;
class QLabel;
class QPushButton;
class StoreClient;
class SweepPanel;
class VariantsScatter;

class VariantsMapPage : public QWidget {
    Q_OBJECT
public:
    // chat and store may be null (a page that only opens files: no Run sweep).
    explicit VariantsMapPage(EngineClient* chat = nullptr, StoreClient* store = nullptr, QWidget* parent = nullptr);

    // Reads a sweep's rows (failed rows are counted, not drawn). False when the file cannot be
    // read or has no measured row; the reason, naming the file and line, is shown.
    bool loadSweep(const QString& path);
    // A stored sweep's rows (each a JSON object as `sweep -o` writes it) under `title`.
    bool showRows(const QString& title, const QStringList& rows);
    int rowCount() const { return static_cast<int>(m_rows.size()); }
    void selectRow(int index);
    QString statusText() const;
    VariantsScatter* scatter() const { return m_scatter; }
    AccuracyHeatmap* heatmap() const { return m_heatmap; }
    QComboBox* qualityMenu() const { return m_quality; }
    SweepPanel* sweepPanel() const { return m_sweep; }   // null without a chat

signals:
    // The selected configuration, as the CLI's flags take it (weights empty: as stored).
    void loadInChatRequested(const QString& attention, const QString& kvTypes, const QString& weights);
    void addToCompareRequested(const QString& attention, const QString& kvTypes, const QString& weights);

private:
    struct Row {
        QString config, attention, kvTypes, weights, weightsShown;
        QString label;        // the point's name: the config, or "llama.cpp server · KV q8_0" for a remote row
        bool remote = false;  // a remote server's row (sweep --remote): its figures only, nothing to load
        QString remoteUrl;
        std::optional<double> kvMeasuredPeak;   // remote: the peak the server's /metrics showed while it answered
        double kvBytes = 0;
        std::optional<double> deltaPpl, kl, top1, retrieval, decodeTokS, prefillTokS;
        std::optional<double> decodeMs, decodeMsPredicted;   // a step's time, and its bytes at the run's reference bandwidth
        HeatmapGrid retrievalGrid;                            // no rows: no retrieval measured
    };
    // Replaces the rows; false (the message shown) when none was measured or a line is no row.
    bool setRows(const QString& title, const QList<QByteArray>& lines);
    static std::optional<Row> parseRow(const QJsonObject& o);   // nullopt: a failed row
    void appendRow(const QString& json);                         // a live sweep's row
    void showCount();
    void refresh();
    std::optional<double> quality(const Row& row) const;

    QList<Row> m_rows;
    QString m_title;
    int m_failed = 0;
    SweepPanel* m_sweep = nullptr;
    QPushButton* m_open = nullptr;
    QList<int> m_drawn;   // the rows behind the scatter's points, in its order
    int m_selected = -1;
    VariantsScatter* m_scatter = nullptr;
    QComboBox* m_quality = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_details = nullptr;
    AccuracyHeatmap* m_heatmap = nullptr;
    QPushButton* m_loadInChat = nullptr;
    QPushButton* m_addToCompare = nullptr;
};
