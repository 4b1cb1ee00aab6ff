// The common frame of the live metric charts: a QChartView with compact margins, antialiasing,
// a bottom legend, and an axis helper that rounds a range up to fit the data seen so far (the
// charts track their maxima, so a range only grows until the chart is cleared).
// Subclasses own their series. The chart follows its palette: a light or dark palette (the
// application's theme) restyles background, text, axes and series so both stay readable.
#pragma once

#include <QChartView>
#include <QHash>
#include <QList>
#include <QPointF>

class QAbstractSeries;
class QLineSeries;
class QValueAxis;

class MetricChartView : public QChartView {
    Q_OBJECT
public:
    explicit MetricChartView(const QString& title, QWidget* parent = nullptr);

    // True when the widget's palette is dark (its window colour's lightness below the middle).
    bool isDark() const;
    // Applies the palette's light or dark look: the chart theme for background, title, legend
    // and axes (our fonts kept), and each series' own colour made readable on that background.
    void restyle();
    // A series colour as drawn on this background: as given on light, lightened on dark when it
    // would be too dim there.
    static QColor readableOn(bool dark, const QColor& base);

protected:
    void changeEvent(QEvent* event) override;
    bool event(QEvent* event) override;
    // Records `series`' colour as chosen for light backgrounds and draws it readably on the
    // present one; restyle() does it for every series, lines added later call it themselves.
    void styleSeries(QAbstractSeries* series);
    // A value axis with a title, attached to the chart, on [0, 1] until data comes; its labels
    // carry as many decimals as its tick step needs (setNiceRange).
    QValueAxis* makeAxis(const QString& title, Qt::Alignment alignment);
    // Sets `axis` to [0, a round number above value] unless the present range already fits it
    // without being more than 4× too wide; returns true when it changed.
    static bool growToFit(QValueAxis* axis, double value, double minimumMax);
    // [0, a round number ≥ max] with round ticks, and labels with just the decimals the step
    // needs, so no two ticks read alike ("0, 0, 0, 1") and none reads "0.666667".
    static void setNiceRange(QValueAxis* axis, double max);
    // How two neighbouring points become one when a line is thinned: the later one, or (peak)
    // the later x with the larger y, so a stall on a latency line still shows.
    enum class Merge { latest, peak };
    // Appends `points` to `series` keeping at most kMaxPoints: past that, neighbouring points are
    // merged in pairs and later points arrive merged to the same resolution, so a long session
    // stays whole on the chart (its beginning included) and cheap to repaint. A cleared series
    // starts again at full resolution.
    void appendDecimated(QLineSeries* series, const QList<QPointF>& points, Merge merge = Merge::latest);
    // A series' length above which appendDecimated thins it: more than a chart has pixels across.
    static constexpr int kMaxPoints = 1000;

private:
    struct Decimation {
        int stride = 1;     // source points per drawn point
        int inLast = 0;     // source points merged into the series' last point so far
    };
    QHash<const QLineSeries*, Decimation> m_decimation;
    static QPointF mergedPoint(const QPointF& earlier, const QPointF& later, Merge merge);
};
