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
