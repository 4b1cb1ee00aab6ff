// YaRN's parameters as llama.cpp computes them (see rope_scaling.h).
#include "model/rope_scaling.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace workbench {
namespace {

// The pair index at which a frequency turns `n_turns` times over the original context.
float corr_dim(int32_t n_rot, int32_t n_ctx_orig, float n_turns, float base) {
    return static_cast<float>(n_rot) * std::log(static_cast<float>(n_ctx_orig) / (n_turns * 2.0f * std::numbers::pi_v<float>)) /
           (2.0f * std::log(base));
}

float yarn_mscale(float scale, float mscale) { return scale <= 1.0f ? 1.0f : 0.1f * mscale * std::log(scale) + 1.0f; }

}  // namespace

RopeParams model_rope(const ModelHparams& hp, bool local_layer, const float* freq_factors) {
    RopeParams p{hp.n_rot, local_layer ? hp.rope_freq_base_local : hp.rope_freq_base, local_layer ? hp.rope_freq_scale_local : hp.rope_freq_scale,
                 hp.rope_style, freq_factors};
    if (!hp.rope_yarn) return p;
    p.ext_factor = 1.0f;
    const float factor = 1.0f / p.freq_scale;
    float attn = hp.rope_yarn_log_mul != 0.0f ? yarn_mscale(factor, hp.rope_yarn_mscale) / yarn_mscale(factor, hp.rope_yarn_log_mul)
                                              : yarn_mscale(factor, 1.0f);
    attn *= 1.0f / (1.0f + 0.1f * std::log(factor));  // rope_yarn multiplies this back in
    p.attn_factor = attn * hp.rope_attn_factor;
    constexpr float kBetaFast = 32.0f, kBetaSlow = 1.0f;
    p.corr_low = std::max(0.0f, std::floor(corr_dim(hp.n_rot, hp.n_ctx_orig_yarn, kBetaFast, p.freq_base)));
    p.corr_high = std::min(static_cast<float>(hp.n_rot - 1), std::ceil(corr_dim(hp.n_rot, hp.n_ctx_orig_yarn, kBetaSlow, p.freq_base)));
    return p;
}

}  // namespace workbench
