// The SVG of sweep_plot.h: a fixed 960×600 canvas, decades on the x axis, five ticks on y, a
// legend strip for the colour scale.
#include "sweep_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "svg_text.h"
#include "workbench/pareto.h"

namespace wbcli {
namespace {

constexpr double kWidth = 960, kHeight = 600, kLeft = 90, kRight = 200, kTop = 50, kBottom = 70;

std::string escape(const std::string& s) { return svg_escape(s); }
std::string num(double v, int digits = 1) { return svg_num(v, digits); }

// The axis's decades, in SI units (10 MB, not 9.5 MiB).
std::string bytes_label(double b) {
    if (b >= 1e9) return num(b / 1e9, 0) + " GB";
    if (b >= 1e6) return num(b / 1e6, 0) + " MB";
    if (b >= 1e3) return num(b / 1e3, 0) + " kB";
    return num(b, 0) + " B";
}

// Slow (dark blue) to fast (yellow), through teal and green.
std::string speed_colour(double t) {
    t = std::clamp(t, 0.0, 1.0);
    const double stops[4][3] = {{68, 1, 84}, {49, 104, 142}, {53, 183, 121}, {253, 231, 37}};
    const double x = t * 3;
    const int i = std::min(2, static_cast<int>(x));
    const double f = x - i;
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(stops[i][0] + f * (stops[i + 1][0] - stops[i][0])),
                  static_cast<int>(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
                  static_cast<int>(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])));
    return buf;
}

}  // namespace

std::vector<size_t> pareto_front(const std::vector<MapPoint>& points, bool higher_is_better) {
    std::vector<double> cost, quality;
    for (const MapPoint& p : points) cost.push_back(p.kv_bytes), quality.push_back(p.quality);
    return workbench::pareto_front(cost, quality, higher_is_better);
}

std::string variants_map_svg(const std::vector<MapPoint>& all, const MapAxis& quality, const std::string& title) {
    std::vector<MapPoint> points;
    for (const MapPoint& p : all)
        if (p.kv_bytes > 0 && std::isfinite(p.quality)) points.push_back(p);
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth, 0) + "\" height=\"" + num(kHeight, 0) +
                      "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    svg += "<text x=\"" + num(kWidth / 2, 0) + "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">" + escape(title) + "</text>\n";
    if (points.empty()) return svg + "<text x=\"480\" y=\"300\" text-anchor=\"middle\">no measured rows</text>\n</svg>\n";
    double x0 = INFINITY, x1 = 0, y0 = INFINITY, y1 = -INFINITY, s0 = INFINITY, s1 = 0;
    for (const MapPoint& p : points) {
        x0 = std::min(x0, p.kv_bytes), x1 = std::max(x1, p.kv_bytes);
        y0 = std::min(y0, p.quality), y1 = std::max(y1, p.quality);
        if (p.decode_tok_s) s0 = std::min(s0, *p.decode_tok_s), s1 = std::max(s1, *p.decode_tok_s);
    }
    // A broken configuration (ΔPPL in the thousands of %) would flatten every other point: the
    // axis stops at twice the 80th percentile's distance and such points sit on its edge,
    // drawn as triangles with their value.
    std::vector<double> values;
    for (const MapPoint& p : points) values.push_back(p.quality);
    const std::optional<double> cap = workbench::quality_axis_cap(values, quality.higher_is_better);
    const bool clip_hi = cap && !quality.higher_is_better, clip_lo = cap && quality.higher_is_better;
    if (clip_hi) y1 = *cap;
    if (clip_lo) y0 = *cap;
    const double lx0 = std::floor(std::log10(x0)), lx1 = std::max(lx0 + 1, std::ceil(std::log10(x1)));
    if (y1 - y0 < 1e-9) y0 -= 1, y1 += 1;
    const double pad = (y1 - y0) * 0.08;
    y0 -= pad, y1 += pad;
    const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
    auto X = [&](double b) { return kLeft + (std::log10(b) - lx0) / (lx1 - lx0) * plot_w; };
    auto Y = [&](double q) { return kTop + (1.0 - (std::clamp(q, y0, y1) - y0) / (y1 - y0)) * plot_h; };
    auto off_chart = [&](double q) { return (clip_hi && q > y1) || (clip_lo && q < y0); };
    // Axes, decade ticks, five y ticks.
    svg += "<rect x=\"" + num(kLeft, 0) + "\" y=\"" + num(kTop, 0) + "\" width=\"" + num(plot_w, 0) + "\" height=\"" + num(plot_h, 0) +
           "\" fill=\"none\" stroke=\"#444\"/>\n";
    for (double d = lx0; d <= lx1 + 1e-9; d += 1) {
        const double x = X(std::pow(10.0, d));
        svg += "<line x1=\"" + num(x) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(x) + "\" y2=\"" + num(kTop + plot_h) +
               "\" stroke=\"#ddd\"/>\n<text x=\"" + num(x) + "\" y=\"" + num(kTop + plot_h + 18) + "\" text-anchor=\"middle\">" +
               bytes_label(std::pow(10.0, d)) + "</text>\n";
    }
    for (int i = 0; i <= 4; ++i) {
        const double q = y0 + (y1 - y0) * i / 4.0, y = Y(q);
        svg += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(y) + "\" x2=\"" + num(kLeft + plot_w) + "\" y2=\"" + num(y) +
               "\" stroke=\"#eee\"/>\n<text x=\"" + num(kLeft - 8) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" +
               num(q, std::abs(y1 - y0) < 5 ? 2 : 1) + "</text>\n";
    }
    svg += "<text x=\"" + num(kLeft + plot_w / 2) + "\" y=\"" + num(kHeight - 22) +
           "\" text-anchor=\"middle\">KV bytes held (log scale)</text>\n";
    svg += "<text transform=\"translate(24," + num(kTop + plot_h / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
           escape(quality.title) + (quality.higher_is_better ? " ↑ better" : " ↓ better") + "</text>\n";
    // The Pareto front, then the points on top of it.
    const std::vector<size_t> front = pareto_front(points, quality.higher_is_better);
    std::string path;
    for (size_t i : front) path += (path.empty() ? "M" : " L") + num(X(points[i].kv_bytes)) + " " + num(Y(points[i].quality));
    if (front.size() > 1) svg += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#d0342c\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>\n";
    for (const MapPoint& p : points) {
        const double t = p.decode_tok_s && s1 > s0 ? (*p.decode_tok_s - s0) / (s1 - s0) : 0.5;
        const std::string colour = p.decode_tok_s ? speed_colour(t) : std::string("#999");
        const double cx = X(p.kv_bytes), cy = Y(p.quality);
        if (off_chart(p.quality)) {
            const double d = clip_hi ? -1 : 1;   // the triangle points off the chart
            svg += "<path d=\"M" + num(cx) + " " + num(cy + d * 7) + " L" + num(cx - 6) + " " + num(cy - d * 4) + " L" + num(cx + 6) + " " +
                   num(cy - d * 4) + " Z\" fill=\"" + colour + "\" stroke=\"#222\"><title>" + escape(p.label) + "</title></path>\n";
            svg += "<text x=\"" + num(cx + 8) + "\" y=\"" + num(cy + (clip_hi ? 12 : -6)) + "\" font-size=\"9\" fill=\"#333\">" +
                   escape(p.label) + " (" + num(p.quality, 1) + ", off the chart)</text>\n";
            continue;
        }
        svg += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"6\" fill=\"" + colour + "\" stroke=\"#222\"><title>" + escape(p.label) +
               "</title></circle>\n";
        svg += "<text x=\"" + num(cx + 8) + "\" y=\"" + num(cy - 6) + "\" font-size=\"9\" fill=\"#333\">" + escape(p.label) + "</text>\n";
    }
    // The colour scale.
    const double lx = kWidth - kRight + 40;
    svg += "<text x=\"" + num(lx) + "\" y=\"" + num(kTop + 10) + "\">decode tok/s</text>\n";
    for (int i = 0; i <= 10; ++i)
        svg += "<rect x=\"" + num(lx) + "\" y=\"" + num(kTop + 20 + (10 - i) * 14) + "\" width=\"18\" height=\"14\" fill=\"" +
               speed_colour(i / 10.0) + "\"/>\n";
    if (s1 > 0) {
        svg += "<text x=\"" + num(lx + 24) + "\" y=\"" + num(kTop + 32) + "\">" + num(s1, 0) + "</text>\n";
        svg += "<text x=\"" + num(lx + 24) + "\" y=\"" + num(kTop + 20 + 10 * 14 + 12) + "\">" + num(s0, 0) + "</text>\n";
    }
    svg += "<text x=\"" + num(lx) + "\" y=\"" + num(kTop + 200) + "\" fill=\"#d0342c\">- - Pareto front</text>\n";
    return svg + "</svg>\n";
}

}  // namespace wbcli
