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
};

}  // namespace workbench
