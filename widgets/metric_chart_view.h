// The common frame of the live metric charts: a QChartView with compact margins, antialiasing,
// a bottom legend, and an axis helper that rounds a range up to fit the data seen so far (the
// charts track their maxima, so a range only grows until the chart is cleared).
// Subclasses own their series.
#pragma once

#include <QChartView>

class QValueAxis;

class MetricChartView : public QChartView {
    Q_OBJECT
public:
    explicit MetricChartView(const QString& title, QWidget* parent = nullptr);

protected:
    // A value axis with a title, attached to the chart, on [0, 1] until data comes; its labels
    // carry as many decimals as its tick step needs (setNiceRange).
    QValueAxis* makeAxis(const QString& title, Qt::Alignment alignment);
    // Sets `axis` to [0, a round number above value] unless the present range already fits it
    // without being more than 4× too wide; returns true when it changed.
    static bool growToFit(QValueAxis* axis, double value, double minimumMax);
    // [0, a round number ≥ max] with round ticks, and labels with just the decimals the step
    // needs, so no two ticks read alike ("0, 0, 0, 1") and none reads "0.666667".
    static void setNiceRange(QValueAxis* axis, double max);
    // Caps a series' length (oldest points dropped) so a long session stays cheap to draw.
    static constexpr int kMaxPoints = 4000;
};
