// A sweep row's or an evaluation's retrieval cells (the JSON "cells" array the engine writes) as
// the grid the AccuracyHeatmap widget draws: lengths down, depths across, "whole" for tasks over
// the whole context, every task's cells of one place summed (workbench::retrieval_grid).
#pragma once

#include <QJsonValue>

#include "widgets/accuracy_heatmap.h"

// An empty grid (no rows) when `cells` holds none.
HeatmapGrid retrievalHeatmapGrid(const QString& title, const QJsonValue& cells);
