// Decode speed over the session: tokens per second (a moving average over the last few gaps) and
// the inter-token latency of each token, against the seconds the conversation spent generating. Takes the
// gap before each decoded token in milliseconds; the first token of a reply (its gap is the
// prefill) is the caller's to leave out.
#pragma once

#include <QList>

#include "widgets/metric_chart_view.h"

class QLineSeries;
class QScatterSeries;
class QValueAxis;

struct TokenRateSample {
    double seconds = 0;  // of generation, since the conversation began
    double gapMs = 0;    // since the previous token
    bool startsReply = false;   // the first of a reply: the average starts afresh (as endReply)
};

class TokenRateChart : public MetricChartView {
    Q_OBJECT
public:
    explicit TokenRateChart(QWidget* parent = nullptr);

    // stride > 1 (a replay of thousands of tokens): one point per `stride` tokens, the rate as of
    // its last and the longest gap among them, so the lines stay cheap to draw and stalls show.
    void appendSamples(const QList<TokenRateSample>& samples, int stride = 1);
    // A reply ended: the moving average starts afresh with the next one.
    void endReply();
    void clear();

    QLineSeries* rateSeries() const { return m_rate; }
    QLineSeries* latencySeries() const { return m_latency; }

private:
    QLineSeries* m_rate = nullptr;
    QLineSeries* m_latency = nullptr;
    QValueAxis* m_axisX = nullptr;
    QValueAxis* m_axisRate = nullptr;
    QValueAxis* m_axisLatency = nullptr;
    QList<double> m_window;  // the last gaps, for the moving average
    double m_maxSeconds = 0, m_maxRate = 0, m_maxLatency = 0;
    static constexpr int kAverageOver = 8;
};
