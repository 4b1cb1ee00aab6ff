// A remote server's KV cache in use, as a share of its pool, over time: what the server's own
// /metrics reported each time it was polled while replies streamed (a remote OpenAI API shows no
// per-token KV bytes, so the local KV-vs-tokens chart has nothing to draw for it).
#pragma once

#include "widgets/metric_chart_view.h"

class QLineSeries;
class QValueAxis;

class ServerKvChart : public MetricChartView {
    Q_OBJECT
public:
    explicit ServerKvChart(QWidget* parent = nullptr);

    // One poll: seconds since the chat connected, the share in [0, 1].
    void appendPoint(double seconds, double fraction);
    void clear();
    // Names what is shown: "server KV" with the server's kind, or why there is nothing.
    void setCaption(const QString& caption);
    QLineSeries* series() const { return m_inUse; }

private:
    QLineSeries* m_inUse = nullptr;
    QValueAxis* m_axisX = nullptr;
    QValueAxis* m_axisY = nullptr;
    double m_maxSeconds = 0;
};
