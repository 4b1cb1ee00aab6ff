// RMSNorm, one row at a time (rows are short: the model width). The squares are summed in double
// four lanes at a time (four chains); the output is x · scale · weight, eight lanes at a time.
#include "kernels/cpu/rms_norm.h"

#include <immintrin.h>

#include <cmath>

namespace workbench {

void rms_norm(const float* x, const float* weight, float* out, int64_t n_rows, int64_t n, float eps) {
    for (int64_t r = 0; r < n_rows; ++r) {
        const float* xr = x + r * n;
        float* o = out + r * n;
        __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
        int64_t i = 0;
        for (; i + 16 <= n; i += 16)
            for (int c = 0; c < 4; ++c) {
                const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(xr + i + 4 * c));
                acc[c] = _mm256_fmadd_pd(v, v, acc[c]);
            }
        alignas(32) double lanes[4];
        _mm256_store_pd(lanes, _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3])));
        double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
        for (; i < n; ++i) sum += static_cast<double>(xr[i]) * xr[i];
        const float scale = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(n)) + eps);
        const __m256 s8 = _mm256_set1_ps(scale);
        for (i = 0; i + 8 <= n; i += 8)
            _mm256_storeu_ps(o + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + i), s8), _mm256_loadu_ps(weight + i)));
        for (; i < n; ++i) o[i] = xr[i] * scale * weight[i];
    }
}

}  // namespace workbench
