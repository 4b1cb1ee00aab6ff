// RoPE: the angles for a position are computed once and reused for every head.
#include "kernels/cpu/rope.h"

#include <cmath>
#include <vector>

namespace workbench {

void rope(float* x, const int32_t* positions, int64_t n_tokens, int64_t n_heads, int64_t head_dim, const RopeParams& p) {
    const int64_t half = p.n_rot / 2;
    std::vector<float> cos_v(static_cast<size_t>(half)), sin_v(static_cast<size_t>(half));
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    for (int64_t t = 0; t < n_tokens; ++t) {
        // Same recurrence as ggml (theta *= theta_scale) so angles match its rounding.
        float theta = static_cast<float>(positions[t]) * p.freq_scale;
        for (int64_t i = 0; i < half; ++i) {
            float angle = p.freq_factors ? theta / p.freq_factors[i] : theta;
            cos_v[i] = std::cos(angle);
            sin_v[i] = std::sin(angle);
            theta *= theta_scale;
        }
        for (int64_t h = 0; h < n_heads; ++h) {
            float* v = x + (t * n_heads + h) * head_dim;
            for (int64_t i = 0; i < half; ++i) {
                const int64_t i0 = p.style == RopeStyle::normal ? 2 * i : i;
                const int64_t i1 = p.style == RopeStyle::normal ? 2 * i + 1 : i + half;
                const float a = v[i0], b = v[i1];
                v[i0] = a * cos_v[i] - b * sin_v[i];
                v[i1] = a * sin_v[i] + b * cos_v[i];
            }
        }
    }
}

}  // namespace workbench
