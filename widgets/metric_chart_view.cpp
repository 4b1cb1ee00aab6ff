#include "widgets/metric_chart_view.h"

#include <QAbstractBarSeries>
#include <QBarSet>
#include <QChart>
#include <QGraphicsLayout>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>
#include <cmath>
#include <tuple>

#include "widgets/contrast.h"

namespace {
// The colour (or pen) a series was given for a light background, kept on the series or bar set
// so a switch back and forth never drifts from it.
constexpr char kLightLook[] = "wbLightLook";
// The darkest of Qt Charts' dark theme background gradient: lines must read on all of it.
const QColor kDarkChartBackground(0x2e, 0x30, 0x3a);
}  // namespace

MetricChartView::MetricChartView(const QString& title, QWidget* parent) : QChartView(parent) {
    auto* c = new QChart();
    // Follow the palette (the application's theme; Qt Charts draws its own light theme otherwise);
    // the theme goes first, as it resets fonts and colours. restyle() follows later changes.
    c->setTheme(isDark() ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    c->setTitle(title);
    QFont f = c->titleFont();
    f.setBold(true);
    f.setPointSizeF(f.pointSizeF() * 0.95);
    c->setTitleFont(f);
    c->legend()->setAlignment(Qt::AlignBottom);
    QFont lf = c->legend()->font();
    lf.setPointSizeF(lf.pointSizeF() * 0.85);
    c->legend()->setFont(lf);
    c->setMargins(QMargins(4, 2, 4, 2));
    c->layout()->setContentsMargins(0, 0, 0, 0);
    c->setBackgroundRoundness(0);
    // The series change many times a second while tokens stream; animations would lag behind.
    c->setAnimationOptions(QChart::NoAnimation);
    setChart(c);
    setRenderHint(QPainter::Antialiasing);
    // Small enough that three charts fit beside each other in a 1000×700 window (titles are short).
    setMinimumSize(140, 150);
}

bool MetricChartView::isDark() const { return palette().color(QPalette::Window).lightness() < 128; }

QColor MetricChartView::readableOn(bool dark, const QColor& base) {
    // Light colours are chosen for white; on the dark theme a line needs graphics contrast (3:1).
    return dark ? readableAgainst(base, kDarkChartBackground, 3.0) : base;
}

void MetricChartView::changeEvent(QEvent* event) {
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) restyle();
}

bool MetricChartView::event(QEvent* event) {
    // Subclasses add their series after this constructor: the first polish styles them.
    if (event->type() == QEvent::Polish) restyle();
    return QChartView::event(event);
}

void MetricChartView::restyle() {
    QChart* c = chart();
    if (!c) return;
    const bool dark = isDark();
    const QChart::ChartTheme wanted = dark ? QChart::ChartThemeDark : QChart::ChartThemeLight;
    if (c->theme() != wanted) {
        // setTheme resets every font and series colour: keep the light looks and fonts first.
        for (QAbstractSeries* s : c->series()) styleSeries(s);
        const QFont title = c->titleFont(), legend = c->legend()->font();
        QList<std::tuple<QAbstractAxis*, QFont, QFont>> axes;
        for (QAbstractAxis* a : c->axes()) axes.append({a, a->labelsFont(), a->titleFont()});
        c->setTheme(wanted);
        c->setTitleFont(title);
        c->legend()->setFont(legend);
        for (auto& [axis, labels, axisTitle] : axes) {
            axis->setLabelsFont(labels);
            axis->setTitleFont(axisTitle);
        }
        c->setBackgroundRoundness(0);
    }
    for (QAbstractSeries* s : c->series()) styleSeries(s);
}

void MetricChartView::styleSeries(QAbstractSeries* series) {
    const bool dark = isDark();
    const QColor text = chart()->titleBrush().color();
    if (auto* scatter = qobject_cast<QScatterSeries*>(series)) {
        if (!scatter->property(kLightLook).isValid()) scatter->setProperty(kLightLook, scatter->color());
        const QColor color = readableOn(dark, scatter->property(kLightLook).value<QColor>());
        scatter->setColor(color);
        scatter->setBorderColor(color);
        scatter->setPointLabelsColor(text);
    } else if (auto* xy = qobject_cast<QXYSeries*>(series)) {
        if (!xy->property(kLightLook).isValid()) xy->setProperty(kLightLook, QVariant::fromValue(xy->pen()));
        QPen pen = xy->property(kLightLook).value<QPen>();
        pen.setColor(readableOn(dark, pen.color()));
        xy->setPen(pen);
        xy->setPointLabelsColor(text);
    } else if (auto* bars = qobject_cast<QAbstractBarSeries*>(series)) {
        for (QBarSet* set : bars->barSets()) {
            if (!set->property(kLightLook).isValid()) set->setProperty(kLightLook, set->color());
            const QColor color = readableOn(dark, set->property(kLightLook).value<QColor>());
            set->setColor(color);
            set->setBorderColor(color);
            set->setLabelColor(text);
        }
    }
}

QValueAxis* MetricChartView::makeAxis(const QString& title, Qt::Alignment alignment) {
    auto* axis = new QValueAxis(this);
    axis->setTitleText(title);
    QFont f = axis->titleFont();
    f.setPointSizeF(f.pointSizeF() * 0.85);
    f.setBold(false);
    axis->setTitleFont(f);
    QFont lf = axis->labelsFont();
    lf.setPointSizeF(lf.pointSizeF() * 0.8);
    axis->setLabelsFont(lf);
    chart()->addAxis(axis, alignment);
    setNiceRange(axis, 1);
    return axis;
}

bool MetricChartView::growToFit(QValueAxis* axis, double value, double minimumMax) {
    const double wanted = std::max(minimumMax, value * 1.15);
    if (axis->max() >= wanted && axis->max() <= wanted * 4) return false;
    setNiceRange(axis, wanted);
    return true;
}

void MetricChartView::setNiceRange(QValueAxis* axis, double max) {
    // Round numbers for the ticks (0, 0.5, 1, 1.5 rather than 0, 1.3, 2.5, 3.8).
    axis->setRange(0, max > 0 ? max : 1);
    axis->applyNiceNumbers();
    const double step = (axis->max() - axis->min()) / std::max(1, axis->tickCount() - 1);
    int decimals = 0;
    while (decimals < 4 && std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) > 1e-6)
        ++decimals;
    axis->setLabelFormat(QStringLiteral("%.%1f").arg(decimals));
}

QPointF MetricChartView::mergedPoint(const QPointF& earlier, const QPointF& later, Merge merge) {
    return {later.x(), merge == Merge::peak ? std::max(earlier.y(), later.y()) : later.y()};
}

void MetricChartView::appendDecimated(QLineSeries* series, const QList<QPointF>& points, Merge merge) {
    if (points.isEmpty()) return;
    QList<QPointF> drawn = series->points();
    Decimation& d = m_decimation[series];
    if (drawn.isEmpty()) d = Decimation{};
    for (const QPointF& p : points) {
        if (!drawn.isEmpty() && d.inLast < d.stride) {
            drawn.last() = mergedPoint(drawn.last(), p, merge);
            ++d.inLast;
        } else {
            drawn.append(p);
            d.inLast = 1;
        }
        if (drawn.size() > kMaxPoints) {   // half the resolution, the whole line kept
            qsizetype out = 0;
            for (qsizetype i = 0; i < drawn.size(); i += 2)
                drawn[out++] = i + 1 < drawn.size() ? mergedPoint(drawn[i], drawn[i + 1], merge) : drawn[i];
            drawn.resize(out);
            d.stride *= 2;
            d.inLast = d.stride;   // the next point starts a bucket of its own
        }
    }
    series->replace(drawn);
}
