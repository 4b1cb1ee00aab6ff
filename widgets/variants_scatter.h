// The variants map's picture: each configuration a point at its KV bytes held (log axis) and a
// quality measure, coloured by decode speed (slow dark, fast bright, in five bands), the Pareto
// front as a dashed line through the points given as the front. Hovering a point shows its
// configuration and figures; clicking selects it. Plain numbers in; engine-agnostic.
#pragma once

#include <QList>
#include <optional>

#include "widgets/metric_chart_view.h"

class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QValueAxis;

struct ScatterPoint {
    QString label;              // the configuration
    QString details;            // the tooltip's figures
    double kvBytes = 0;         // x (> 0)
    double quality = 0;         // y
    std::optional<double> decodeTokS;
};

class VariantsScatter : public MetricChartView {
    Q_OBJECT
public:
    explicit VariantsScatter(QWidget* parent = nullptr);

    // Replaces the points; `front` indexes the Pareto-optimal ones in ascending KV.
    void setPoints(const QList<ScatterPoint>& points, const QList<int>& front, const QString& qualityTitle);
    int pointCount() const { return static_cast<int>(m_points.size()); }
    const QList<ScatterPoint>& points() const { return m_points; }
    QLineSeries* frontSeries() const { return m_front; }
    const QList<QScatterSeries*>& speedBands() const { return m_bands; }
    // Rings point `index` (-1: none), the one whose configuration is selected.
    void setSelected(int index);
    QScatterSeries* selectedSeries() const { return m_selected; }
    // The point nearest a position in the chart's values (KV in MiB, quality); -1 when there are none.
    int nearest(const QPointF& value) const;

signals:
    void pointClicked(int index);

private:
    QList<ScatterPoint> m_points;
    QList<QScatterSeries*> m_bands;   // slow → fast
    QLineSeries* m_front = nullptr;
    QScatterSeries* m_selected = nullptr;
    QLogValueAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
};
