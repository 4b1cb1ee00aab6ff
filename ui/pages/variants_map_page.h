// The Variants map page: a sweep's rows (`workbench-cli sweep -o FILE`, one JSON line per
// configuration) on one picture — KV bytes held (log) against a chosen quality measure (ΔPPL,
// KL, top-1, retrieval), colour for decode speed, the Pareto front drawn. Hover a point for its
// figures; click to select it, then load it in the Chat or add it to Compare. GUI thread only.
#pragma once

#include <QWidget>
#include <optional>

class QComboBox;
class QLabel;
class QPushButton;
class VariantsScatter;

class VariantsMapPage : public QWidget {
    Q_OBJECT
public:
    explicit VariantsMapPage(QWidget* parent = nullptr);

    // Reads a sweep's rows (failed rows are counted, not drawn). False when the file cannot be
    // read or has no measured row; the reason, naming the file and line, is shown.
    bool loadSweep(const QString& path);
    int rowCount() const { return static_cast<int>(m_rows.size()); }
    void selectRow(int index);
    QString statusText() const;
    VariantsScatter* scatter() const { return m_scatter; }
    QComboBox* qualityMenu() const { return m_quality; }

signals:
    // The selected configuration, as the CLI's flags take it (weights empty: as stored).
    void loadInChatRequested(const QString& attention, const QString& kvTypes, const QString& weights);
    void addToCompareRequested(const QString& attention, const QString& kvTypes, const QString& weights);

private:
    struct Row {
        QString config, attention, kvTypes, weights, weightsShown;
        double kvBytes = 0;
        std::optional<double> deltaPpl, kl, top1, retrieval, decodeTokS, prefillTokS;
    };
    void refresh();
    std::optional<double> quality(const Row& row) const;

    QList<Row> m_rows;
    QList<int> m_drawn;   // the rows behind the scatter's points, in its order
    int m_selected = -1;
    VariantsScatter* m_scatter = nullptr;
    QComboBox* m_quality = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_details = nullptr;
    QPushButton* m_loadInChat = nullptr;
    QPushButton* m_addToCompare = nullptr;
};
