// The CUDA backend's per-element and per-row kernels (elementwise.cu), each the device twin of a
// CPU kernel with the same formula: the embedding lookup, residual adds and biases, RoPE from a
// step's angle table, SwiGLU/GeGLU, soft-capping, and gathering the rows the head reads. All
// pointers are device pointers; errors are the launch's.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/device_matrix.h"
#include "workbench/status.h"

namespace workbench::cuda {

// out[t] = table row tokens[t] (decoded) · scale; tokens: device int32.
Status embed_rows(const DeviceMatrix& table, const int32_t* tokens, int64_t n_tokens, float scale, float* out, cudaStream_t stream);
// x[i] += y[i].
Status add_into(float* x, const float* y, int64_t count, cudaStream_t stream);
// x[r, i] += bias[i] for `rows` rows of `width`.
Status add_bias(float* x, const float* bias, int64_t rows, int64_t width, cudaStream_t stream);
// Rotates the first n_rot features of each head of x ([n_tokens, width], heads of head_dim):
// pairs (2i, 2i+1) (normal) or (i, i + n_rot/2) (neox) by the angles cos/sin [n_tokens, n_rot/2].
Status rope_rows(float* x, int64_t n_tokens, int64_t width, int64_t head_dim, int32_t n_rot, bool neox, const float* cos,
                 const float* sin, cudaStream_t stream);
// gate[i] = act(gate[i]) · up[i]; act: SiLU, or tanh-GELU when gelu.
Status gated_activation(float* gate, const float* up, int64_t count, bool gelu, cudaStream_t stream);
// x[i] = cap · tanh(x[i] / cap).
Status soft_cap(float* x, int64_t count, float cap, cudaStream_t stream);
// Each of n_rows rows of head_dim (a power of two, at most 256) through the orthonormal
// Walsh–Hadamard transform, as the CPU's hadamard_rotate does it (the same butterflies, then the
// same scale): attention outputs over values stored rotated turn back by it.
Status hadamard_rows(float* x, int64_t n_rows, int64_t head_dim, cudaStream_t stream);
// out[i] = x[rows[i]] (rows of width); rows: device int64.
Status gather_rows(const float* x, const int64_t* rows, int64_t n_rows, int64_t width, float* out, cudaStream_t stream);

}  // namespace workbench::cuda
