// SwiGLU and GeGLU, elementwise, eight lanes at a time with the shared vector exp.
#include "kernels/cpu/swiglu.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/vector_math.h"

namespace workbench {

void swiglu(const float* gate, const float* up, float* out, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = _mm256_loadu_ps(gate + i);
        const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
    }
    for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// gelu_tanh(x) = x/2 · (1 + tanh(u)), u = sqrt(2/pi)·(x + 0.044715·x³), which equals
// x · sigmoid(2u) = x / (1 + e^(−2u)): one exp, as SwiGLU's.
void geglu_tanh(const float* gate, const float* up, float* out, int64_t n) {
    constexpr float kTwoSqrt2OverPi = 1.5957691216057308f, kCubic = 0.044715f;
    const __m256 one = _mm256_set1_ps(1.0f), c = _mm256_set1_ps(-kTwoSqrt2OverPi), cubic = _mm256_set1_ps(kCubic);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = _mm256_loadu_ps(gate + i);
        const __m256 inner = _mm256_fmadd_ps(_mm256_mul_ps(cubic, g), _mm256_mul_ps(g, g), g);
        const __m256 e = exp8(_mm256_mul_ps(c, inner));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
    }
    for (; i < n; ++i) {
        const float g = gate[i];
        out[i] = g / (1.0f + std::exp(-kTwoSqrt2OverPi * (g + kCubic * g * g * g))) * up[i];
    }
}

// The constants are gpt-oss's (llama.cpp fixes them too: the file does not carry them).
void swiglu_clamped(const float* gate, const float* up, float* out, int64_t n) {
    constexpr float kAlpha = 1.702f, kLimit = 7.0f;
    const __m256 one = _mm256_set1_ps(1.0f), alpha = _mm256_set1_ps(-kAlpha), limit = _mm256_set1_ps(kLimit), low = _mm256_set1_ps(-kLimit);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_min_ps(_mm256_loadu_ps(gate + i), limit);
        const __m256 y = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(up + i), low), limit);
        const __m256 e = exp8(_mm256_mul_ps(alpha, x));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_div_ps(x, _mm256_add_ps(one, e)), _mm256_add_ps(y, one)));
    }
    for (; i < n; ++i) {
        const float x = std::min(gate[i], kLimit), y = std::min(std::max(up[i], -kLimit), kLimit);
        out[i] = x / (1.0f + std::exp(-kAlpha * x)) * (y + 1.0f);
    }
}

}  // namespace workbench
