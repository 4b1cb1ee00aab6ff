// The matmul kernels of the CUDA backend (matmul_kernels.cu), launched on a stream:
//   gemv            y[n, n_out] = x[n, n_in] · Wᵀ for a few tokens: the warps of an output row
//                   (one, or up to 8 splitting its inputs when the rows are too few to fill the
//                   device) read W 16 bytes a lane, decode it in registers and serve up to 8
//                   tokens a pass, so the weights (the whole cost of a decode step) are read once
//                   per 8 tokens. Inputs of a quantized matrix start at a 16-byte boundary.
//   gemv_gated      the MLP's gate and up matrices in one pass, written as act(x·Gᵀ) · (x·Uᵀ):
//                   the activation fused into the decode step's matmuls.
//   decode_to_bf16  W's rows as bf16, for cuBLASLt (prompts): bf16 keeps f32's range, where f16
//                   would overflow on activations some models reach (Gemma's MLP).
//   f32_to_bf16     activations as bf16, likewise.
// Errors: the launch's (bad parameters), unsupported for a type the kernels do not read; faults
// surface at the stream's next synchronization.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/device_matrix.h"
#include "workbench/status.h"

namespace workbench::cuda {

constexpr int64_t kGemvTokensPerPass = 8;

// bias (n_out floats, optional) is added to every token's row.
Status gemv(const DeviceMatrix& w, const float* x, float* y, int64_t n_tokens, cudaStream_t stream, const float* bias = nullptr);
// gate and up of one type and shape (invalid_argument otherwise); act: SiLU, or tanh-GELU when gelu.
Status gemv_gated(const DeviceMatrix& gate, const DeviceMatrix& up, const float* x, float* y, int64_t n_tokens, bool gelu, cudaStream_t stream);
// out: [n_out, n_in] bf16 bits.
Status decode_to_bf16(const DeviceMatrix& w, uint16_t* out, cudaStream_t stream);
Status f32_to_bf16(const float* x, uint16_t* out, int64_t count, cudaStream_t stream);

}  // namespace workbench::cuda
