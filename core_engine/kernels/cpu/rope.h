// Rotary position embedding applied in place to [n_tokens, n_heads, head_dim] vectors.
// normal: rotates adjacent pairs (2i, 2i+1), as GGUF stores llama Q/K; neox: pairs (i, i+n_rot/2).
// Angles: pos · freq_scale · base^(−2i/n_rot), divided by an optional per-pair factor. A forward
// step computes its tokens' angles once (`rope_angles`) and every layer's Q and K reuse them,
// rotated a range of features × tokens at a time (`rope_features`): by the matmul that writes
// them for a few tokens, by a pass over token rows for a prompt.
#pragma once

#include <cstdint>
#include <vector>

#include "model_data/rope_params.h"

namespace workbench {

// cos and sin of every (token, pair): [n_tokens, n_rot / 2] each.
struct RopeAngles {
    int64_t n_tokens = 0, half = 0;
    std::vector<float> cos, sin;
};

void rope_angles(const int32_t* positions, int64_t n_tokens, const RopeParams& p, RopeAngles& out);

// Rotates features [f0, f1) of tokens [t0, t1)'s rows (`width` features: heads of head_dim; x
// holds every token of the step). The feature range holds whole pairs: even edges for normal,
// whole heads for neox (rope_feature_align says which).
void rope_features(float* x, int64_t width, int64_t head_dim, int64_t f0, int64_t f1, const RopeParams& p, const RopeAngles& a,
                   int64_t t0, int64_t t1);
inline int64_t rope_feature_align(const RopeParams& p, int64_t head_dim) { return p.style == RopeStyle::neox ? head_dim : 2; }

void rope(float* x, const int32_t* positions, int64_t n_tokens, int64_t n_heads, int64_t head_dim, const RopeParams& p);

}  // namespace workbench
