#include "ui/pages/retrieval_heatmap_grid.h"

#include <QJsonArray>
#include <QJsonDocument>

#include "workbench/retrieval.h"

HeatmapGrid retrievalHeatmapGrid(const QString& title, const QJsonValue& cells) {
    HeatmapGrid g;
    g.title = title;
    if (!cells.isArray()) return g;
    auto parsed = workbench::parse_json(QJsonDocument(cells.toArray()).toJson(QJsonDocument::Compact).toStdString());
    if (!parsed.ok()) return g;
    const workbench::RetrievalGrid grid = workbench::retrieval_grid(*parsed);
    if (grid.empty()) return g;
    for (int32_t length : grid.lengths) g.rows.append(QString::number(length));
    for (int32_t depth : grid.depths) g.columns.append(depth < 0 ? QStringLiteral("whole") : QStringLiteral("%1 %").arg(depth));
    for (size_t i = 0; i < grid.trials.size(); ++i) {
        g.trials.append(grid.trials[i]);
        g.correct.append(grid.correct[i]);
    }
    return g;
}
