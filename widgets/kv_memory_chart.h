// KV-cache memory against the tokens in context: what the cache holds (in use), what full
// attention would hold for the same tokens at the same KV types, and the pool reserved at load
// (drawn only when it is on the same scale; otherwise its size is in the legend).
// A sliding window shows as an "in use" line that flattens while "full equivalent" keeps rising.
// Takes plain byte counts; the axis is in MiB.
#pragma once

#include <QList>

#include "widgets/metric_chart_view.h"

class QLineSeries;
class QValueAxis;

struct KvChartSample {
    double tokens = 0;          // tokens in context
    double bytesInUse = 0;
    double bytesFull = 0;       // full attention, same tokens and KV types
    double bytesAllocated = 0;  // the pool reserved at load (the budget); 0: unknown, no line
};

class KvMemoryChart : public MetricChartView {
    Q_OBJECT
public:
    explicit KvMemoryChart(QWidget* parent = nullptr);

    void appendSamples(const QList<KvChartSample>& samples);
    void clear();

    QLineSeries* inUseSeries() const { return m_inUse; }
    QLineSeries* fullSeries() const { return m_full; }
    QLineSeries* allocatedSeries() const { return m_allocated; }

private:
    void updateAllocatedLine();

    QLineSeries* m_inUse = nullptr;
    QLineSeries* m_full = nullptr;
    QLineSeries* m_allocated = nullptr;
    QValueAxis* m_axisX = nullptr;
    QValueAxis* m_axisY = nullptr;
    double m_allocatedMiB = 0;
    double m_maxTokens = 0;
    double m_maxDataMiB = 0;
};
