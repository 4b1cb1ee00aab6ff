// RMSNorm over each row on the device, as kernels/cpu/rms_norm: out = x / sqrt(mean(x²) + eps) ·
// weight, the sum of squares in double. One block a row; rows are the model width (≤ 16k). The
// residual stream's add may come fused in front (add_rms_norm).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "workbench/status.h"

namespace workbench::cuda {

// x, weight, out: device pointers; out may be x. Errors: the launch's.
Status rms_norm(const float* x, const float* weight, float* out, int64_t n_rows, int64_t n, float eps, cudaStream_t stream);
// The residual add and the next norm in one pass: x += y, then out = rms_norm(x) (out not x or y).
Status add_rms_norm(float* x, const float* y, const float* weight, float* out, int64_t n_rows, int64_t n, float eps, cudaStream_t stream);

}  // namespace workbench::cuda
