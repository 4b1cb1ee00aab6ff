// Several named lines on one pair of axes, one per thing being compared: KV memory against
// tokens for each configuration of a comparison, throughput or latency against batch size for
// each benchmark. Lines get distinct colors in the order added; the axes grow to fit. A line of
// another scale (TPOT beside TTFT) goes on a right-hand axis of its own, so neither is flattened.
// Takes plain points; knows nothing of the engine.
#pragma once

#include <QList>
#include <QPointF>

#include "widgets/metric_chart_view.h"

class QLineSeries;
class QValueAxis;

class OverlayChart : public MetricChartView {
    Q_OBJECT
public:
    OverlayChart(const QString& title, const QString& xTitle, const QString& yTitle, QWidget* parent = nullptr);

    // Adds an empty line; returns its index for appendPoints. With rightAxisTitle it is drawn
    // against the right-hand axis (made on first use, titled so).
    int addLine(const QString& name, const QString& rightAxisTitle = QString());
    void appendPoints(int line, const QList<QPointF>& points);
    // Marks each point with a dot too (few points: a sweep over batch sizes).
    void setPointsVisible(bool visible);
    void clear();  // removes every line

    int lineCount() const { return static_cast<int>(m_lines.size()); }
    QLineSeries* line(int index) const { return m_lines.value(index); }
    QValueAxis* rightAxis() const { return m_axisRight; }  // null until a line asks for it

private:
    QList<QLineSeries*> m_lines;
    QValueAxis* m_axisX = nullptr;
    QValueAxis* m_axisY = nullptr;
    QValueAxis* m_axisRight = nullptr;
    QList<bool> m_onRight;  // per line
    double m_maxX = 0, m_maxY = 0, m_maxRight = 0;
    bool m_pointsVisible = false;
};
