// Retrieval accuracy as a heatmap: panels side by side (a configuration and its baseline), each a
// grid of prompt lengths (rows) × the fact's depth (columns, and "whole" for tasks over the whole
// context), cells shaded red (none found) through yellow to green (all found) with the accuracy
// written in, grey where nothing ran; hover a cell for its counts. Plain numbers in.
#pragma once

#include <QList>
#include <QStringList>
#include <QVector>
#include <QWidget>

struct HeatmapGrid {
    QString title;                 // "sliding:window=1024 · KV f16"
    QStringList rows, columns;     // "4096"; "50 %" or "whole"
    QVector<int> trials, correct;  // rows × columns, row by row
    double accuracy(int row, int column) const;   // -1 where nothing ran
};

class AccuracyHeatmap : public QWidget {
    Q_OBJECT
public:
    explicit AccuracyHeatmap(QWidget* parent = nullptr);

    // Replaces the panels; a grid whose counts do not match its labels is left out.
    void setPanels(const QList<HeatmapGrid>& panels);
    int panelCount() const { return static_cast<int>(m_panels.size()); }
    const HeatmapGrid& panel(int i) const { return m_panels[i]; }
    // {panel, row, column} under a widget position, or panel -1.
    struct Hit {
        int panel = -1, row = -1, column = -1;
    };
    Hit cellAt(const QPoint& pos) const;
    QRect cellRect(int panel, int row, int column) const;
    // "2048 tokens, depth 50 %: 3 of 4 found (0.75)"
    QString describe(int panel, int row, int column) const;
    static QColor colorOf(double accuracy);
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return {160, 80}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;   // tooltips

private:
    int cellWidth() const;
    int cellHeight() const;
    int panelWidth(int i) const;
    QList<HeatmapGrid> m_panels;
};
