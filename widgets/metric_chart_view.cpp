#include "widgets/metric_chart_view.h"

#include <QChart>
#include <QGraphicsLayout>
#include <QValueAxis>
#include <cmath>

MetricChartView::MetricChartView(const QString& title, QWidget* parent) : QChartView(parent) {
    auto* c = new QChart();
    // Follow the system's light or dark palette (Qt Charts draws its own light theme otherwise);
    // the theme goes first, as it resets fonts and colours.
    c->setTheme(palette().color(QPalette::Window).lightness() < 128 ? QChart::ChartThemeDark : QChart::ChartThemeLight);
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
    setMinimumSize(220, 180);
}

QValueAxis* MetricChartView::makeAxis(const QString& title, Qt::Alignment alignment, const QString& labelFormat) {
    auto* axis = new QValueAxis(this);
    axis->setTitleText(title);
    QFont f = axis->titleFont();
    f.setPointSizeF(f.pointSizeF() * 0.85);
    f.setBold(false);
    axis->setTitleFont(f);
    QFont lf = axis->labelsFont();
    lf.setPointSizeF(lf.pointSizeF() * 0.8);
    axis->setLabelsFont(lf);
    axis->setLabelFormat(labelFormat);
    axis->setRange(0, 1);
    chart()->addAxis(axis, alignment);
    return axis;
}

bool MetricChartView::growToFit(QValueAxis* axis, double value, double minimumMax) {
    const double wanted = std::max(minimumMax, value * 1.15);
    if (axis->max() >= wanted && axis->max() <= wanted * 4) return false;
    // Round numbers for the ticks (0, 0.5, 1, 1.5 rather than 0, 1.3, 2.5, 3.8).
    axis->setRange(0, wanted);
    axis->applyNiceNumbers();
    return true;
}
