// Time to first token per turn, as bars (turn 1, 2, ...): the prefill a turn pays shows here, and
// how much prefix reuse saves on the next one. Takes milliseconds.
#pragma once

#include "widgets/metric_chart_view.h"

class QBarSeries;
class QBarSet;
class QBarCategoryAxis;
class QValueAxis;

class TurnLatencyChart : public MetricChartView {
    Q_OBJECT
public:
    explicit TurnLatencyChart(QWidget* parent = nullptr);

    void addTurn(double ttftMs);
    // The newest bar's value, corrected (a turn's bar shows at its first token, its exact TTFT at its end).
    void setLastTurn(double ttftMs);
    // Empties the chart; the next bar is turn `firstTurn` (a continued conversation goes on
    // counting from its stored turns).
    void clear(int firstTurn = 1);

    QBarSet* ttftSet() const { return m_ttft; }
    QStringList turnLabels() const;  // the bars' turn numbers, oldest first

private:
    QBarSeries* m_series = nullptr;
    QBarSet* m_ttft = nullptr;
    QBarCategoryAxis* m_axisX = nullptr;
    QValueAxis* m_axisY = nullptr;
    double m_maxMs = 0;
    int m_firstTurn = 1;
    static constexpr int kMaxTurns = 40;
};
