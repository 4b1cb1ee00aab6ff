// Colour contrast as WCAG defines it (relative luminance, contrast ratio), and a colour moved in
// lightness until it reads on a background. The light and dark themes use it so text, code and
// chart lines stay readable on either; the tests check their colours with the same formula.
#pragma once

#include <QColor>
#include <algorithm>
#include <cmath>

inline double relativeLuminance(const QColor& c) {
    auto channel = [](int v) {
        const double x = v / 255.0;
        return x <= 0.03928 ? x / 12.92 : std::pow((x + 0.055) / 1.055, 2.4);
    };
    const QColor rgb = c.toRgb();
    return 0.2126 * channel(rgb.red()) + 0.7152 * channel(rgb.green()) + 0.0722 * channel(rgb.blue());
}

// 1 (same) to 21 (black on white); WCAG asks 4.5 for text, 3 for large text and graphics.
inline double contrastRatio(const QColor& a, const QColor& b) {
    const double la = relativeLuminance(a), lb = relativeLuminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// `fg` with its hue and saturation kept, lighter on a dark `bg` or darker on a light one, just
// enough to reach `ratio` against it (or as far as it goes).
inline QColor readableAgainst(const QColor& fg, const QColor& bg, double ratio) {
    if (contrastRatio(fg, bg) >= ratio) return fg;
    // Below this luminance white contrasts more than black: move towards white.
    const bool lighten = relativeLuminance(bg) < 0.18;
    const QColor hsl = fg.toHsl();
    const int hue = std::max(0, hsl.hslHue()), saturation = hsl.hslSaturation();
    int lightness = hsl.lightness();
    QColor c = fg;
    while (contrastRatio(c, bg) < ratio && (lighten ? lightness < 255 : lightness > 0)) {
        lightness = std::clamp(lightness + (lighten ? 5 : -5), 0, 255);
        c = QColor::fromHsl(hue, saturation, lightness).toRgb();
    }
    return c;
}
