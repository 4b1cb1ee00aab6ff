// RMSNorm, one row at a time (rows are short: the model width).
#include "kernels/cpu/rms_norm.h"

#include <cmath>

namespace workbench {

void rms_norm(const float* x, const float* weight, float* out, int64_t n_rows, int64_t n, float eps) {
    for (int64_t r = 0; r < n_rows; ++r) {
        const float* xr = x + r * n;
        float* o = out + r * n;
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(xr[i]) * xr[i];
        const float scale = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(n)) + eps);
        for (int64_t i = 0; i < n; ++i) o[i] = xr[i] * scale * weight[i];
    }
}

}  // namespace workbench
