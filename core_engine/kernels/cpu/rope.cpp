// RoPE from a table of angles: sin and cos are computed once per (token, pair) of a step.
#include "kernels/cpu/rope.h"

#include <algorithm>
#include <cmath>

namespace workbench {

void rope_angles(const int32_t* positions, int64_t n_tokens, const RopeParams& p, RopeAngles& out) {
    const int64_t half = p.n_rot / 2;
    out.n_tokens = n_tokens;
    out.half = half;
    out.cos.resize(static_cast<size_t>(n_tokens * half));
    out.sin.resize(static_cast<size_t>(n_tokens * half));
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    if (p.yarn()) {
        // ggml's rope_yarn, operation for operation: the extrapolated angle by the recurrence
        // from the position, the interpolated one scaled, the ramp between by pair.
        float mscale = p.attn_factor;
        if (p.ext_factor != 0.0f) mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
        if (p.unit_magnitude) mscale = 1.0f;
        for (int64_t t = 0; t < n_tokens; ++t) {
            float theta_extrap = static_cast<float>(positions[t]);
            for (int64_t i = 0; i < half; ++i) {
                const float extrap = p.freq_factors ? theta_extrap / p.freq_factors[i] : theta_extrap;
                const float interp = p.freq_scale * extrap;
                float angle = interp;
                if (p.ext_factor != 0.0f) {
                    const float y = (static_cast<float>(i) - p.corr_low) / std::max(0.001f, p.corr_high - p.corr_low);
                    const float ramp = (1.0f - std::min(1.0f, std::max(0.0f, y))) * p.ext_factor;
                    angle = interp * (1.0f - ramp) + extrap * ramp;
                }
                out.cos[static_cast<size_t>(t * half + i)] = std::cos(angle) * mscale;
                out.sin[static_cast<size_t>(t * half + i)] = std::sin(angle) * mscale;
                theta_extrap *= theta_scale;
            }
        }
        return;
    }
    for (int64_t t = 0; t < n_tokens; ++t) {
        // Same recurrence as ggml (theta *= theta_scale) so angles match its rounding.
        float theta = static_cast<float>(positions[t]) * p.freq_scale;
        for (int64_t i = 0; i < half; ++i) {
            const float angle = p.freq_factors ? theta / p.freq_factors[i] : theta;
            out.cos[static_cast<size_t>(t * half + i)] = std::cos(angle);
            out.sin[static_cast<size_t>(t * half + i)] = std::sin(angle);
            theta *= theta_scale;
        }
    }
}

void rope_features(float* x, int64_t width, int64_t head_dim, int64_t f0, int64_t f1, const RopeParams& p, const RopeAngles& a,
                   int64_t t0, int64_t t1) {
    const int64_t half = a.half;
    for (int64_t t = t0; t < t1; ++t) {
        const float* cs = a.cos.data() + t * half;
        const float* sn = a.sin.data() + t * half;
        float* row = x + t * width;
        auto turn = [&](int64_t i0, int64_t i1, int64_t pair) {
            const float u = row[i0], v = row[i1];
            row[i0] = u * cs[pair] - v * sn[pair];
            row[i1] = u * sn[pair] + v * cs[pair];
        };
        if (p.style == RopeStyle::normal) {
            // Head by head: the rotated pairs, then past the head's unrotated tail (n_rot < head_dim).
            for (int64_t f = f0; f < f1;) {
                const int64_t head = f - f % head_dim;
                for (const int64_t end = std::min(f1, head + p.n_rot); f < end; f += 2) turn(f, f + 1, (f - head) / 2);
                f = std::max(f, std::min(f1, head + head_dim));
            }
        } else {
            for (int64_t h0 = f0; h0 < f1; h0 += head_dim)
                for (int64_t i = 0; i < half; ++i) turn(h0 + i, h0 + i + half, i);
        }
    }
}

void rope(float* x, const int32_t* positions, int64_t n_tokens, int64_t n_heads, int64_t head_dim, const RopeParams& p) {
    RopeAngles a;
    rope_angles(positions, n_tokens, p, a);
    rope_features(x, n_heads * head_dim, head_dim, 0, n_heads * head_dim, p, a, 0, n_tokens);
}

}  // namespace workbench
