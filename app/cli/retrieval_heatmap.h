// Retrieval accuracy as a picture, for `sweep --heatmap` and `eval --retrieval --heatmap`: one
// panel per configuration, prompt length down, the fact's depth across (tasks without a depth in
// a last "whole" column), each cell shaded from red (0) to green (1) with its accuracy and n.
#pragma once

#include <string>
#include <vector>

#include "workbench/retrieval.h"

namespace wbcli {

struct HeatmapPanel {
    std::string label;                 // the configuration
    workbench::RetrievalGrid grid;
};

// The SVG text; panels with an empty grid are left out, three panels a row.
std::string retrieval_heatmap_svg(const std::vector<HeatmapPanel>& panels, const std::string& title);

}  // namespace wbcli
