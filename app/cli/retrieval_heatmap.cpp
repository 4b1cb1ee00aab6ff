// The SVG of retrieval_heatmap.h: fixed-size cells, panels laid out in rows of three, a legend.
#include "retrieval_heatmap.h"

#include <algorithm>
#include <cstdio>

#include "svg_text.h"

namespace wbcli {
namespace {

constexpr double kCellW = 52, kCellH = 30, kRowLabel = 56, kPanelTitle = 40, kGap = 36, kTop = 56, kMargin = 20;
constexpr int kPerRow = 3;

// Red through yellow to green; grey where no trial ran.
std::string accuracy_colour(double a) {
    if (a < 0) return "#eeeeee";
    a = std::clamp(a, 0.0, 1.0);
    const double stops[3][3] = {{215, 48, 39}, {254, 224, 139}, {26, 152, 80}};
    const int i = a < 0.5 ? 0 : 1;
    const double f = a < 0.5 ? a * 2 : (a - 0.5) * 2;
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(stops[i][0] + f * (stops[i + 1][0] - stops[i][0])),
                  static_cast<int>(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
                  static_cast<int>(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])));
    return buf;
}

std::string text(double x, double y, const std::string& s, const std::string& extra = "") {
    return "<text x=\"" + svg_num(x) + "\" y=\"" + svg_num(y) + "\"" + extra + ">" + svg_escape(s) + "</text>\n";
}

}  // namespace

std::string retrieval_heatmap_svg(const std::vector<HeatmapPanel>& all, const std::string& title) {
    std::vector<const HeatmapPanel*> panels;
    size_t most_depths = 1, most_lengths = 1;
    for (const HeatmapPanel& p : all)
        if (!p.grid.empty()) {
            panels.push_back(&p);
            most_depths = std::max(most_depths, p.grid.depths.size());
            most_lengths = std::max(most_lengths, p.grid.lengths.size());
        }
    const double panel_w = kRowLabel + static_cast<double>(most_depths) * kCellW, panel_h = kPanelTitle + static_cast<double>(most_lengths) * kCellH + 22;
    const size_t columns = std::min<size_t>(kPerRow, std::max<size_t>(1, panels.size()));
    const size_t rows = (panels.size() + kPerRow - 1) / kPerRow;
    const double width = std::max(480.0, 2 * kMargin + static_cast<double>(columns) * panel_w + static_cast<double>(columns - 1) * kGap);
    const double height = kTop + static_cast<double>(std::max<size_t>(rows, 1)) * (panel_h + kGap) + 30;
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svg_num(width, 0) + "\" height=\"" + svg_num(height, 0) +
                      "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    svg += text(width / 2, 26, title, " text-anchor=\"middle\" font-size=\"15\"");
    svg += text(width / 2, 44, "accuracy by prompt length (down) and the fact's depth in % (across); \"whole\": tasks over the whole context",
                " text-anchor=\"middle\" fill=\"#555\"");
    if (panels.empty()) return svg + text(width / 2, 90, "no retrieval measured", " text-anchor=\"middle\"") + "</svg>\n";
    for (size_t i = 0; i < panels.size(); ++i) {
        const HeatmapPanel& p = *panels[i];
        const double x0 = kMargin + static_cast<double>(i % kPerRow) * (panel_w + kGap), y0 = kTop + static_cast<double>(i / kPerRow) * (panel_h + kGap);
        int32_t n = 0, ok = 0;
        for (size_t c = 0; c < p.grid.trials.size(); ++c) n += p.grid.trials[c], ok += p.grid.correct[c];
        const std::string overall = n > 0 ? "  " + svg_num(static_cast<double>(ok) / n, 2) + " of " + std::to_string(n) : std::string();
        svg += text(x0, y0 + 14, p.label + overall, " font-weight=\"bold\"");
        const double gx = x0 + kRowLabel, gy = y0 + kPanelTitle;
        for (size_t d = 0; d < p.grid.depths.size(); ++d)
            svg += text(gx + (static_cast<double>(d) + 0.5) * kCellW, gy - 6, p.grid.depths[d] < 0 ? "whole" : std::to_string(p.grid.depths[d]) + " %",
                        " text-anchor=\"middle\" fill=\"#444\"");
        for (size_t l = 0; l < p.grid.lengths.size(); ++l) {
            const double y = gy + static_cast<double>(l) * kCellH;
            svg += text(gx - 6, y + kCellH / 2 + 4, std::to_string(p.grid.lengths[l]), " text-anchor=\"end\" fill=\"#444\"");
            for (size_t d = 0; d < p.grid.depths.size(); ++d) {
                const double a = p.grid.accuracy(l, d), x = gx + static_cast<double>(d) * kCellW;
                const int32_t trials = p.grid.trials[l * p.grid.depths.size() + d];
                svg += "<rect x=\"" + svg_num(x) + "\" y=\"" + svg_num(y) + "\" width=\"" + svg_num(kCellW - 2) + "\" height=\"" +
                       svg_num(kCellH - 2) + "\" fill=\"" + accuracy_colour(a) + "\"><title>" +
                       svg_escape(std::to_string(p.grid.lengths[l]) + " tokens: " + std::to_string(p.grid.correct[l * p.grid.depths.size() + d]) +
                                  " of " + std::to_string(trials)) +
                       "</title></rect>\n";
                if (a >= 0) svg += text(x + kCellW / 2 - 1, y + kCellH / 2 + 4, svg_num(a, 2), " text-anchor=\"middle\"");
            }
        }
        svg += text(gx, gy + static_cast<double>(p.grid.lengths.size()) * kCellH + 14, "tokens ↓", " fill=\"#777\" font-size=\"10\"");
    }
    // The colour scale.
    const double ly = height - 22;
    for (int i = 0; i <= 10; ++i)
        svg += "<rect x=\"" + svg_num(kMargin + i * 20.0) + "\" y=\"" + svg_num(ly) + "\" width=\"20\" height=\"10\" fill=\"" + accuracy_colour(i / 10.0) + "\"/>\n";
    svg += text(kMargin, ly - 4, "0", " fill=\"#444\"") + text(kMargin + 220 - 8, ly - 4, "1", " fill=\"#444\"");
    return svg + "</svg>\n";
}

}  // namespace wbcli
