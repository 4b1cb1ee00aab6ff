// A row's best logits, best first: all the sampler reads of a row when it is greedy or keeps
// only the top k (Sampler::top_logits_needed), so a backend can hand back these few pairs
// instead of the vocabulary (a device copies back bytes, not megabytes, per token).
// The order is the sampler's: a higher logit first, the lower id among equal ones, NaN read as
// -inf. A device backend's selection keeps this order exactly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "workbench/types.h"

namespace workbench {

struct TopLogit {
    float logit = 0;
    TokenId token = -1;
};
static_assert(sizeof(TopLogit) == 8, "a device writes these pairs as 8 bytes");

// The most a request may keep (its top_k) and still have its logits selected by the backend.
inline constexpr int32_t kMaxTopLogits = 64;

// The best `k` of the `n` logits of `row` into `out` (k ≤ n). Pointers, not spans: the CUDA
// files that share TopLogit are C++17.
void select_top_logits(const float* row, size_t n, TopLogit* out, size_t k);

}  // namespace workbench
