#include "widgets/variants_scatter.h"

#include <QChart>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace {
constexpr int kBands = 5;
constexpr double kMiB = 1024.0 * 1024.0;   // the axis is in MiB: its labels read 1, 10, 100
// Slow to fast: the viridis scale's stops, readable on light and dark.
const QColor kBandColours[kBands] = {QColor(0x44, 0x01, 0x54), QColor(0x3b, 0x52, 0x8b), QColor(0x21, 0x90, 0x8d),
                                     QColor(0x5d, 0xc8, 0x63), QColor(0xfd, 0xe7, 0x25)};
}  // namespace

VariantsScatter::VariantsScatter(QWidget* parent) : MetricChartView(tr("Variants map"), parent) {
    setObjectName(QStringLiteral("variantsScatter"));
    m_x = new QLogValueAxis(this);
    m_x->setTitleText(tr("KV MiB held (log scale)"));
    m_x->setBase(10);
    m_x->setLabelFormat(QStringLiteral("%g"));
    chart()->addAxis(m_x, Qt::AlignBottom);
    m_y = makeAxis(tr("quality"), Qt::AlignLeft);
    m_front = new QLineSeries(this);
    m_front->setName(tr("Pareto front"));
    QPen pen(QColor(0xd0, 0x34, 0x2c));
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.5);
    m_front->setPen(pen);
    chart()->addSeries(m_front);
    m_front->attachAxis(m_x);
    m_front->attachAxis(m_y);
    // The selection: a red halo behind its point (added before the points, so drawn under them).
    m_selected = new QScatterSeries(this);
    m_selected->setName(tr("selected"));
    m_selected->setMarkerSize(22);
    m_selected->setColor(QColor(0xd0, 0x34, 0x2c));
    chart()->addSeries(m_selected);
    m_selected->attachAxis(m_x);
    m_selected->attachAxis(m_y);
    styleSeries(m_selected);
    for (int b = 0; b < kBands; ++b) {
        auto* band = new QScatterSeries(this);
        band->setName(b == 0 ? tr("slowest decode") : b == kBands - 1 ? tr("fastest") : QString());
        band->setColor(kBandColours[b]);
        band->setMarkerSize(11);
        chart()->addSeries(band);
        band->attachAxis(m_x);
        band->attachAxis(m_y);
        connect(band, &QScatterSeries::hovered, this, [this](const QPointF& p, bool state) {
            const int i = nearest(p);
            if (!state || i < 0) return QToolTip::hideText();
            QToolTip::showText(QCursor::pos(), QStringLiteral("<b>%1</b><br>%2").arg(m_points[i].label.toHtmlEscaped(), m_points[i].details), this);
        });
        connect(band, &QScatterSeries::clicked, this, [this](const QPointF& p) {
            if (const int i = nearest(p); i >= 0) emit pointClicked(i);
        });
        styleSeries(band);
        m_bands.append(band);
    }
    styleSeries(m_front);
}

void VariantsScatter::setSelected(int index) {
    m_selected->clear();
    if (index >= 0 && index < m_points.size() && m_points[index].kvBytes > 0)
        m_selected->append(m_points[index].kvBytes / kMiB, m_points[index].quality);
}

void VariantsScatter::setPoints(const QList<ScatterPoint>& points, const QList<int>& front, const QString& qualityTitle) {
    m_points = points;
    for (QScatterSeries* band : m_bands) band->clear();
    m_front->clear();
    m_y->setTitleText(qualityTitle);
    double x0 = INFINITY, x1 = 0, y0 = INFINITY, y1 = -INFINITY, s0 = INFINITY, s1 = 0;
    for (const ScatterPoint& p : points) {
        if (p.kvBytes <= 0) continue;
        x0 = std::min(x0, p.kvBytes), x1 = std::max(x1, p.kvBytes);
        y0 = std::min(y0, p.quality), y1 = std::max(y1, p.quality);
        if (p.decodeTokS) s0 = std::min(s0, *p.decodeTokS), s1 = std::max(s1, *p.decodeTokS);
    }
    for (const ScatterPoint& p : points) {
        if (p.kvBytes <= 0) continue;
        const double t = p.decodeTokS && s1 > s0 ? (*p.decodeTokS - s0) / (s1 - s0) : 0.5;
        m_bands[std::clamp(static_cast<int>(t * kBands), 0, kBands - 1)]->append(p.kvBytes / kMiB, p.quality);
    }
    for (int i : front)
        if (i >= 0 && i < points.size()) m_front->append(points[i].kvBytes / kMiB, points[i].quality);
    if (x1 <= 0) return;
    m_x->setRange(std::pow(10.0, std::floor(std::log10(x0 / kMiB))), std::pow(10.0, std::ceil(std::log10(x1 / kMiB))));
    const double pad = std::max(1e-6, (y1 - y0) * 0.08);
    // A measure that cannot go below zero (accuracy, KL, top-1) keeps its axis there too.
    m_y->setRange(y0 >= 0 ? std::max(0.0, y0 - pad) : y0 - pad, y1 + pad);
    m_y->applyNiceNumbers();   // round ticks: 0, 20, 40 rather than 20.1, 50.8
}

int VariantsScatter::nearest(const QPointF& value) const {
    int best = -1;
    double bestDistance = INFINITY;
    const double span = std::max(1e-12, m_y->max() - m_y->min());
    for (int i = 0; i < m_points.size(); ++i) {
        if (m_points[i].kvBytes <= 0) continue;
        const double dx = std::log10(m_points[i].kvBytes / kMiB) - std::log10(std::max(1e-12, value.x()));
        const double dy = (m_points[i].quality - value.y()) / span;
        const double d = dx * dx + dy * dy;
        if (d < bestDistance) bestDistance = d, best = i;
    }
    return best;
}
