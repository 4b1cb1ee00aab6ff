// Y = X · Wᵀ over packed weights: X is [n_tokens, n_in] f32, Y is [n_tokens, n_out] f32.
// Quantized weights get their activations quantized once per call (8-bit blocks), then the best
// kernel this CPU runs (AVX-512 VNNI, else AVX2) computes each (row, token) dot product; other
// types are dequantized a row at a time. Rows are split across the pool's threads. Results do
// not depend on the thread count or on how many tokens share the call (batch-invariant).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kernels/cpu/packed_matrix.h"
#include "kernels/cpu/quantized_activations.h"
#include "kernels/cpu/thread_pool.h"

namespace workbench {

struct MatmulChunk {
    int matrix;  // −1: rows [r0, r1) of every matrix (MatmulFusion::same_rows)
    int64_t r0, r1;
};

struct MatmulScratch {
    QuantizedActivations activations;  // reused between calls
    std::vector<MatmulChunk> chunks;   // reused: a decode step makes ~150 calls
};

void matmul(const PackedMatrix& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool, MatmulScratch& scratch);

// What a caller fuses into a matmul instead of separate passes over memory: the input already
// quantized by the step that wrote it (RMSNorm quantizes each row as it normalizes it), and work
// run on each finished chunk of output rows, for every token, by the thread that computed it
// while the chunk is in its cache (biases, RoPE); chunk edges fall on multiples of row_align.
// same_rows (matrices of equal height): a chunk is the same rows of every matrix, computed in
// order by one thread, so the epilogue of the last sees all of them (SwiGLU of gate and up).
struct MatmulFusion {
    const QuantizedActivations* quantized_input = nullptr;
    std::function<void(int matrix, int64_t r0, int64_t r1)> epilogue;
    int64_t row_align = 1;
    bool same_rows = false;
};

// Several matrices reading the same input (Q, K and V; gate and up) in one parallel region:
// the input is quantized once and the threads meet once, not once per matrix.
void matmul_shared_input(std::span<const PackedMatrix* const> ws, const float* x, std::span<float* const> ys, int64_t n_tokens,
                         ThreadPool& pool, MatmulScratch& scratch, const MatmulFusion& fusion = {});

// One product of a group that runs in one parallel region with the others, each with its own
// matrix, input rows and output (a step's experts, each over the tokens routed to it): the
// threads meet once for the group, not once per product. Quantized layouts read the input as
// 8-bit blocks (rows [xq_row0, xq_row0 + n_tokens) of xq, which the caller quantized), the
// others as f32 rows x ([n_tokens, n_in]). y[t·ldy + r] for row r of token t.
struct MatmulItem {
    const PackedMatrix* w = nullptr;
    const float* x = nullptr;
    const QuantizedActivations* xq = nullptr;
    int64_t xq_row0 = 0;
    int64_t n_tokens = 0;
    float* y = nullptr;
    int64_t ldy = 0;
};
void matmul_items(std::span<const MatmulItem> items, ThreadPool& pool, MatmulScratch& scratch);

// Which kernel set matmul uses on this CPU: "avx512-vnni" or "avx2".
const char* matmul_kernel_name();

}  // namespace workbench
