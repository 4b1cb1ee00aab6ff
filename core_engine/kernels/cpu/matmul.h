// Y = X · Wᵀ for a weight matrix in any loadable GGUF type: X is [n_tokens, n_in] f32, Y is
// [n_tokens, n_out] f32. Quantized weights with an integer kernel get their activations
// quantized once per row (Q8_0/Q8_1); other types are dequantized a row at a time. Rows are
// split across the pool's threads; each output depends only on its own row and token, so
// results do not change with the thread count or with how many tokens share the call.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "model/weights.h"

namespace workbench {

class MatmulScratch {
public:
    std::vector<uint8_t> activations;  // quantized X, reused between calls
};

void matmul(const WeightTensor& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool, MatmulScratch& scratch);

// Copies row `row` of an embedding-like matrix to f32 (any dequantizable type).
void get_row_f32(const WeightTensor& w, int64_t row, float* out);

}  // namespace workbench
