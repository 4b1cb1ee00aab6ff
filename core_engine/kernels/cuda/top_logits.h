// The best logits of each row, selected on the device (top_logits.cu): the sampler's order
// (sampling/top_logits.h: a higher logit first, the lower id among equals, NaN read as -inf),
// so the host samples from k pairs a row instead of the whole vocabulary. Device pointers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "sampling/top_logits.h"
#include "workbench/status.h"

namespace workbench::cuda {

// out[r, 0..k) = the best k of logits[r, 0..n_vocab), best first; 1 ≤ k ≤ min(n_vocab, kMaxTopLogits).
Status top_logits(const float* logits, int64_t n_rows, int64_t n_vocab, int32_t k, TopLogit* out, cudaStream_t stream);

}  // namespace workbench::cuda
