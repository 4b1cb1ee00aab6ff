// Rotary position embedding applied in place to [n_tokens, n_heads, head_dim] vectors.
// normal: rotates adjacent pairs (2i, 2i+1), as GGUF stores llama Q/K; neox: pairs (i, i+n_rot/2).
// Angles: pos · freq_scale · base^(−2i/n_rot), divided by an optional per-pair factor.
#pragma once

#include <cstdint>

#include "model/hparams.h"

namespace workbench {

struct RopeParams {
    int32_t n_rot = 0;
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;
    RopeStyle style = RopeStyle::normal;
    const float* freq_factors = nullptr;  // [n_rot/2] or null
};

void rope(float* x, const int32_t* positions, int64_t n_tokens, int64_t n_heads, int64_t head_dim, const RopeParams& p);

}  // namespace workbench
