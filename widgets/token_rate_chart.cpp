#include "widgets/token_rate_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>
#include <numeric>

TokenRateChart::TokenRateChart(QWidget* parent) : MetricChartView(tr("Decode tok/s and ITL"), parent) {
    m_rate = new QLineSeries(this);
    m_rate->setName(tr("tok/s (avg of %1)").arg(kAverageOver));
    m_rate->setPen(QPen(QColor(0x94, 0x67, 0xbd), 2));
    m_latency = new QLineSeries(this);
    m_latency->setName(tr("inter-token ms"));
    m_latency->setPen(QPen(QColor(0xff, 0x7f, 0x0e), 1));
    chart()->addSeries(m_rate);
    chart()->addSeries(m_latency);
    m_axisX = makeAxis(tr("seconds generating"), Qt::AlignBottom);
    m_axisRate = makeAxis(tr("tok/s"), Qt::AlignLeft);
    m_axisLatency = makeAxis(tr("ms"), Qt::AlignRight);
    m_rate->attachAxis(m_axisX);
    m_rate->attachAxis(m_axisRate);
    m_latency->attachAxis(m_axisX);
    m_latency->attachAxis(m_axisLatency);    clear();  // the empty chart's ranges, as after New chat
}

void TokenRateChart::appendSamples(const QList<TokenRateSample>& samples, int stride) {
    if (samples.isEmpty()) return;
    stride = std::max(1, stride);
    QList<QPointF> rate, latency;
    double bucketGap = 0;   // the longest gap since the last point drawn: a stall still shows
    int inBucket = 0;
    for (qsizetype i = 0; i < samples.size(); ++i) {
        const TokenRateSample& s = samples[i];
        if (s.startsReply) m_window.clear();
        if (s.gapMs > 0) {
            m_window.append(s.gapMs);
            if (m_window.size() > kAverageOver) m_window.removeFirst();
            bucketGap = std::max(bucketGap, s.gapMs);
            ++inBucket;
        }
        if (inBucket == 0 || (inBucket < stride && i + 1 < samples.size())) continue;
        const double meanGap = std::accumulate(m_window.begin(), m_window.end(), 0.0) / m_window.size();
        const double tokS = 1000.0 / meanGap;
        rate.append({s.seconds, tokS});
        latency.append({s.seconds, bucketGap});
        m_maxSeconds = std::max(m_maxSeconds, s.seconds);
        m_maxRate = std::max(m_maxRate, tokS);
        m_maxLatency = std::max(m_maxLatency, bucketGap);
        bucketGap = 0;
        inBucket = 0;
    }
    appendDecimated(m_rate, rate);
    appendDecimated(m_latency, latency, Merge::peak);
    growToFit(m_axisX, m_maxSeconds, 5);
    growToFit(m_axisRate, m_maxRate, 10);
    growToFit(m_axisLatency, m_maxLatency, 10);
}

void TokenRateChart::endReply() { m_window.clear(); }

void TokenRateChart::clear() {
    m_rate->clear();
    m_latency->clear();
    m_window.clear();
    m_maxSeconds = m_maxRate = m_maxLatency = 0;
    setNiceRange(m_axisX, 5);
    setNiceRange(m_axisRate, 10);
    setNiceRange(m_axisLatency, 10);
}
