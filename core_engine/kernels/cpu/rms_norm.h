// RMSNorm over each row: out = x / sqrt(mean(x²) + eps) * weight. The sum of squares is kept in
// double, as ggml does, so long rows do not drift.
#pragma once

#include <cstdint>

namespace workbench {

void rms_norm(const float* x, const float* weight, float* out, int64_t n_rows, int64_t n, float eps);

}  // namespace workbench
