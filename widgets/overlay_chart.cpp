#include "widgets/overlay_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>
#include <iterator>

namespace {
// Tableau's palette, as the other charts use.
const QColor kColors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                          QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b)};
}  // namespace

OverlayChart::OverlayChart(const QString& title, const QString& xTitle, const QString& yTitle, QWidget* parent)
    : MetricChartView(title, parent) {
    m_axisX = makeAxis(xTitle, Qt::AlignBottom);
    m_axisY = makeAxis(yTitle, Qt::AlignLeft);
}

int OverlayChart::addLine(const QString& name, const QString& rightAxisTitle) {
    auto* s = new QLineSeries(this);
    s->setName(name);
    s->setPen(QPen(kColors[m_lines.size() % std::size(kColors)], 2));
    s->setPointsVisible(m_pointsVisible);
    chart()->addSeries(s);
    s->attachAxis(m_axisX);
    const bool right = !rightAxisTitle.isEmpty();
    if (right) {
        if (!m_axisRight) m_axisRight = makeAxis(rightAxisTitle, Qt::AlignRight);
        m_axisRight->setTitleText(rightAxisTitle);
        m_axisRight->setVisible(true);
    }
    s->attachAxis(right ? m_axisRight : m_axisY);
    styleSeries(s);  // readable on the present theme (a Compare or Benchmark line added later)
    m_lines.append(s);
    m_onRight.append(right);
    return static_cast<int>(m_lines.size()) - 1;
}

void OverlayChart::appendPoints(int line, const QList<QPointF>& points) {
    QLineSeries* s = m_lines.value(line);
    if (!s || points.isEmpty()) return;
    appendDecimated(s, points);
    const bool right = m_onRight.value(line);
    double& maxY = right ? m_maxRight : m_maxY;
    for (const QPointF& p : points) {
        m_maxX = std::max(m_maxX, p.x());
        maxY = std::max(maxY, p.y());
    }
    growToFit(m_axisX, m_maxX, 1);
    growToFit(right ? m_axisRight : m_axisY, maxY, 0.1);
}

void OverlayChart::setPointsVisible(bool visible) {
    m_pointsVisible = visible;
    for (QLineSeries* s : m_lines) s->setPointsVisible(visible);
}

void OverlayChart::clear() {
    for (QLineSeries* s : m_lines) {
        chart()->removeSeries(s);
        delete s;
    }
    m_lines.clear();
    m_onRight.clear();
    m_maxX = m_maxY = m_maxRight = 0;
    setNiceRange(m_axisX, 1);
    setNiceRange(m_axisY, 1);
    if (m_axisRight) {
        setNiceRange(m_axisRight, 1);
        m_axisRight->setVisible(false);  // until a line asks for it again
    }
}
