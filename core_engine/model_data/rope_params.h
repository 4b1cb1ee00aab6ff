// How a model rotates its queries and keys (RoPE): the parameters the backends' kernels and the
// KV cache (which re-rotates keys it moves) both read.
#pragma once

#include <cstdint>

#include "model_data/model_hparams.h"

namespace workbench {

struct RopeParams {
    int32_t n_rot = 0;
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;
    RopeStyle style = RopeStyle::normal;
    const float* freq_factors = nullptr;  // [n_rot/2] or null
    // YaRN (ext_factor 1): pair i turns at a mix of the interpolated (freq_scale) and the
    // original frequency, ramping from original below pair corr_low to interpolated above
    // corr_high, and cos/sin are scaled by attn_factor · (1 + 0.1 ln(1/freq_scale)) — ggml's
    // rope_yarn, with the factors llama.cpp derives from the file (model/rope_scaling.h).
    float ext_factor = 0.0f;
    float attn_factor = 1.0f;
    float corr_low = 0.0f, corr_high = 0.0f;
    bool unit_magnitude = false;  // turn only, magnitude 1: for keys already rotated once

    bool yarn() const { return ext_factor != 0.0f || attn_factor != 1.0f; }
    // The same angles without the magnitude: what re-rotating a stored key by a shift needs.
    RopeParams rotation_only() const {
        RopeParams r = *this;
        r.unit_magnitude = true;
        return r;
    }
};

}  // namespace workbench
