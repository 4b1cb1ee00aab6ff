// RMSNorm over each row on the device, as kernels/cpu/rms_norm: out = x / sqrt(mean(x²) + eps) ·
// weight, the sum of squares in double. One block a row; rows are the model width (≤ 16k).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "workbench/status.h"

namespace workbench::cuda {

// x, weight, out: device pointers; out may be x. Errors: the launch's.
Status rms_norm(const float* x, const float* weight, float* out, int64_t n_rows, int64_t n, float eps, cudaStream_t stream);

}  // namespace workbench::cuda
