// The variants map as an SVG, for `sweep --plot` (no Qt in the CLI): KV bytes held (log axis)
// against a quality measure, each configuration a marker coloured by its decode speed, the Pareto
// front (nothing both smaller and better) drawn through the points that make it, each point
// labelled. A small hand-written writer: the picture has a few dozen elements.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace wbcli {

struct MapPoint {
    std::string label;               // the configuration: "sliding:window=64,sinks=4 · KV f16"
    double kv_bytes = 0;             // x, log scale (> 0)
    double quality = 0;              // y
    std::optional<double> decode_tok_s;   // marker colour
};

struct MapAxis {
    std::string title;               // "ΔPPL vs full attention (%)"
    bool higher_is_better = false;   // retrieval and top-1: the front runs the other way
};

// The SVG text; points with kv_bytes ≤ 0 are left out.
std::string variants_map_svg(const std::vector<MapPoint>& points, const MapAxis& quality, const std::string& title);

// Indices of the Pareto-optimal points (smaller KV and better quality), in ascending KV.
std::vector<size_t> pareto_front(const std::vector<MapPoint>& points, bool higher_is_better);

}  // namespace wbcli
