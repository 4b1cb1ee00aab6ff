// Text for the CLI's hand-written SVG pictures (sweep_plot, retrieval_heatmap): XML escaping and
// fixed-point numbers.
#pragma once

#include <cstdio>
#include <string>

namespace wbcli {

inline std::string svg_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

inline std::string svg_num(double v, int digits = 1) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

}  // namespace wbcli
