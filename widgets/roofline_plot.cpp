// Drawing the roofline: the ceiling is one polyline (slope, ridge, roof) across the visible
// intensity range; points keep their labels in the legend-free tooltip-sized point labels.
#include "widgets/roofline_plot.h"

#include <QChart>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QScatterSeries>

#include <algorithm>
#include <cmath>

RooflinePlot::RooflinePlot(QWidget* parent) : MetricChartView(tr("Roofline: last prompt and decode step"), parent) {
    QChart* c = chart();
    m_ceiling = new QLineSeries(this);
    m_ceiling->setName(tr("machine ceiling"));
    // Our own colours (not the theme's), so restyle() keeps them readable in light and dark.
    m_ceiling->setPen(QPen(QColor(0x55, 0x55, 0x55), 2));
    m_prompt = new QScatterSeries(this);
    m_prompt->setName(tr("prompt step"));
    m_prompt->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_prompt->setMarkerSize(11);
    m_prompt->setColor(QColor(0x1f, 0x77, 0xb4));
    m_decode = new QScatterSeries(this);
    m_decode->setName(tr("decode step"));
    m_decode->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_decode->setMarkerSize(11);
    m_decode->setColor(QColor(0xff, 0x7f, 0x0e));
    for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_ceiling), static_cast<QAbstractSeries*>(m_prompt),
                               static_cast<QAbstractSeries*>(m_decode)})
        c->addSeries(s);
    m_x = new QLogValueAxis(this);
    m_x->setTitleText(tr("arithmetic intensity (ops / byte)"));
    m_x->setLabelFormat("%g");
    m_x->setBase(10);
    m_y = new QLogValueAxis(this);
    m_y->setTitleText(tr("achieved GOP/s"));
    m_y->setLabelFormat("%g");
    m_y->setBase(10);
    c->addAxis(m_x, Qt::AlignBottom);
    c->addAxis(m_y, Qt::AlignLeft);
    for (QAbstractSeries* s : c->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    for (QScatterSeries* s : {m_prompt, m_decode}) {
        s->setPointLabelsVisible(true);
        s->setPointLabelsFormat(QStringLiteral("@yPoint GOP/s"));
        s->setPointLabelsClipping(false);
    }
    rescale();
}

double RooflinePlot::roofAt(double opsPerByte) const {
    double roof = m_compute > 0 ? m_compute : INFINITY;
    if (m_bandwidth > 0) roof = std::min(roof, m_bandwidth * opsPerByte);
    return std::isfinite(roof) ? roof : 0;
}

void RooflinePlot::setCeilings(double bandwidthGbS, double computeGops, const QString& computeName) {
    m_bandwidth = std::max(0.0, bandwidthGbS);
    m_compute = std::max(0.0, computeGops);
    m_ceiling->setName(tr("ceiling: %1 GB/s, %2 GOP/s %3").arg(m_bandwidth, 0, 'f', 0).arg(m_compute, 0, 'f', 0).arg(computeName));
    rescale();
}

void RooflinePlot::setPoints(const QList<RooflineDot>& prompt, const QList<RooflineDot>& decode) {
    m_prompt->clear();
    m_decode->clear();
    m_dots.clear();
    for (auto [series, dots] : {std::pair{m_prompt, &prompt}, {m_decode, &decode}})
        for (const RooflineDot& d : *dots) {
            if (d.opsPerByte <= 0 || d.gops <= 0) continue;   // a log axis cannot show zero
            // Labels print the value as stored: three significant digits read as "35.2", not
            // "35.2417", and move the point by under 0.5 % on a log axis.
            const double step = std::pow(10.0, std::floor(std::log10(d.gops)) - 2);
            series->append(d.opsPerByte, std::round(d.gops / step) * step);
            m_dots.append(d);
        }
    rescale();
}

void RooflinePlot::rescale() {
    // Intensities from 0.1 to past the ridge and the points; throughput up to the roof.
    double xmin = 0.1, xmax = 100, ymin = 0.1, ymax = 100;
    for (const RooflineDot& d : m_dots) {
        xmin = std::min(xmin, d.opsPerByte / 2), xmax = std::max(xmax, d.opsPerByte * 2);
        ymin = std::min(ymin, d.gops / 2), ymax = std::max(ymax, d.gops * 2);
    }
    if (m_bandwidth > 0 && m_compute > 0) xmax = std::max(xmax, 4 * m_compute / m_bandwidth);
    if (m_compute > 0) ymax = std::max(ymax, m_compute * 2);
    auto pow10_floor = [](double v) { return std::pow(10.0, std::floor(std::log10(v))); };
    auto pow10_ceil = [](double v) { return std::pow(10.0, std::ceil(std::log10(v))); };
    m_x->setRange(pow10_floor(xmin), pow10_ceil(xmax));
    m_y->setRange(pow10_floor(ymin), pow10_ceil(ymax));
    m_ceiling->clear();
    if (m_bandwidth <= 0 && m_compute <= 0) return;
    const double lo = m_x->min(), hi = m_x->max();
    // Enough points that the slope stays straight on the log axes and the ridge is exact.
    QList<double> xs{lo, hi};
    if (m_bandwidth > 0 && m_compute > 0) xs.append(m_compute / m_bandwidth);
    std::sort(xs.begin(), xs.end());
    for (double x : xs)
        if (x >= lo && x <= hi && roofAt(x) > 0) m_ceiling->append(x, roofAt(x));
}
