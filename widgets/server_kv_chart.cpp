#include "widgets/server_kv_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>
#include <algorithm>

ServerKvChart::ServerKvChart(QWidget* parent) : MetricChartView(tr("Server KV cache in use"), parent) {
    m_inUse = new QLineSeries(this);
    m_inUse->setName(tr("share of the server's pool"));
    m_inUse->setPen(QPen(QColor(0x1f, 0x77, 0xb4), 2));
    m_inUse->setPointsVisible(true);
    chart()->addSeries(m_inUse);
    m_axisX = makeAxis(tr("s since connected"), Qt::AlignBottom);
    m_axisY = makeAxis(tr("% in use"), Qt::AlignLeft);
    m_inUse->attachAxis(m_axisX);
    m_inUse->attachAxis(m_axisY);
    clear();
}

void ServerKvChart::appendPoint(double seconds, double fraction) {
    const double percent = std::clamp(fraction, 0.0, 1.0) * 100.0;
    appendDecimated(m_inUse, {QPointF(seconds, percent)});
    m_maxSeconds = std::max(m_maxSeconds, seconds);
    growToFit(m_axisX, m_maxSeconds, 10);
    // A small share stays readable: the axis grows to the data, up to 100 %.
    const double top = m_axisY->max();
    if (percent > top) setNiceRange(m_axisY, std::min(100.0, std::max(percent, 1.0)));
}

void ServerKvChart::clear() {
    m_inUse->clear();
    m_maxSeconds = 0;
    setNiceRange(m_axisX, 10);
    setNiceRange(m_axisY, 1);
}

void ServerKvChart::setCaption(const QString& caption) { chart()->setTitle(caption); }
