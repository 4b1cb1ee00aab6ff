// The roofline picture: arithmetic intensity (ops per byte read) against achieved throughput
// (GOP/s), log-log, under this machine's ceilings — the memory slope (bandwidth × intensity)
// and the compute roof. The last prompt step and the last decode step each show two points,
// the matmuls and attention (a third, the indexer, for variants that choose what to read: its
// time is apart from attention's), so a user sees why decode sits on the memory slope while a
// prompt's matmuls climb towards the roof (their intensity grows with the tokens per step;
// attention's stays near S·T/(S+T) whatever the batch). Plain numbers in.
#pragma once

#include "widgets/metric_chart_view.h"

class QLineSeries;
class QLogValueAxis;
class QScatterSeries;

struct RooflineDot {
    QString label;         // "decode · matmuls"
    double opsPerByte = 0;
    double gops = 0;       // achieved
};

class RooflinePlot : public MetricChartView {
    Q_OBJECT
public:
    explicit RooflinePlot(QWidget* parent = nullptr);

    // The ceilings: read bandwidth (GB/s) and compute (GOP/s). Zero hides that line.
    void setCeilings(double bandwidthGbS, double computeGops, const QString& computeName);
    // Replaces the points (prompt points drawn as circles, decode as squares).
    void setPoints(const QList<RooflineDot>& prompt, const QList<RooflineDot>& decode);

    QLineSeries* ceilingSeries() const { return m_ceiling; }
    QScatterSeries* promptSeries() const { return m_prompt; }
    QScatterSeries* decodeSeries() const { return m_decode; }
    // The roof's value at an intensity: min(bandwidth · intensity, compute).
    double roofAt(double opsPerByte) const;

private:
    void rescale();
    QLineSeries* m_ceiling = nullptr;
    QScatterSeries* m_prompt = nullptr;
    QScatterSeries* m_decode = nullptr;
    QLogValueAxis* m_x = nullptr;
    QLogValueAxis* m_y = nullptr;
    double m_bandwidth = 0, m_compute = 0;
    QList<RooflineDot> m_dots;
};
