#include "widgets/turn_latency_chart.h"

#include <algorithm>

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QValueAxis>

TurnLatencyChart::TurnLatencyChart(QWidget* parent) : MetricChartView(tr("TTFT per turn"), parent) {
    m_series = new QBarSeries(this);
    m_ttft = new QBarSet(tr("TTFT (ms)"), this);
    m_ttft->setColor(QColor(0x2c, 0xa0, 0x2c));
    m_series->append(m_ttft);
    chart()->addSeries(m_series);
    m_axisX = new QBarCategoryAxis(this);
    m_axisX->setTitleText(tr("turn"));
    QFont f = m_axisX->titleFont();
    f.setPointSizeF(f.pointSizeF() * 0.85);
    f.setBold(false);
    m_axisX->setTitleFont(f);
    chart()->addAxis(m_axisX, Qt::AlignBottom);
    m_axisY = makeAxis(tr("ms"), Qt::AlignLeft);
    m_series->attachAxis(m_axisX);
    m_series->attachAxis(m_axisY);
    setNiceRange(m_axisY, 10);
    // An empty category axis draws its title in the chart's top-left corner: shown with the first turn.
    m_axisX->setVisible(false);
}

void TurnLatencyChart::addTurn(double ttftMs) {
    // Old turns scroll off so the bars stay readable.
    if (m_ttft->count() >= kMaxTurns) {
        m_ttft->remove(0);
        m_axisX->remove(m_axisX->categories().first());
    }
    const int turn = m_axisX->count() == 0 ? m_firstTurn : m_axisX->categories().last().toInt() + 1;
    m_axisX->append(QString::number(turn));
    m_axisX->setVisible(true);
    m_ttft->append(ttftMs);
    m_maxMs = std::max(m_maxMs, ttftMs);
    growToFit(m_axisY, m_maxMs, 10);
}

void TurnLatencyChart::setLastTurn(double ttftMs) {
    if (m_ttft->count() == 0) return addTurn(ttftMs);
    m_ttft->replace(m_ttft->count() - 1, ttftMs);
    m_maxMs = 0;
    for (int i = 0; i < m_ttft->count(); ++i) m_maxMs = std::max(m_maxMs, m_ttft->at(i));
    growToFit(m_axisY, m_maxMs, 10);
}

QStringList TurnLatencyChart::turnLabels() const { return m_axisX->categories(); }

void TurnLatencyChart::clear(int firstTurn) {
    m_firstTurn = std::max(1, firstTurn);
    m_ttft->remove(0, m_ttft->count());
    m_axisX->clear();
    m_maxMs = 0;
    setNiceRange(m_axisY, 10);
    m_axisX->setVisible(false);
}
