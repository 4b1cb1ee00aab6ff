// Activation quantization (AVX2), written straight into the split layout.
#include "kernels/cpu/quantized_activations.h"

#include <immintrin.h>

#include <cstring>

#include "tensor/half_convert.h"
#include "tensor/dequantize.h"

namespace workbench {

void resize_activations(QuantizedActivations& a, int64_t n_tokens, int64_t n_in) {
    a.n_tokens = n_tokens;
    a.n_in = n_in;
    a.n_blocks = n_in / 32;
    a.block_stride = (a.n_blocks + 15) / 16 * 16;
    const size_t nb = static_cast<size_t>(n_tokens * a.block_stride);
    a.qs.resize(static_cast<size_t>(n_tokens * n_in) + 64);
    // Padding lanes must stay zero: assign, not resize, when the shape changes.
    if (a.d.size() != nb) {
        a.d.assign(nb, 0.0f);
        a.s.assign(nb, 0.0f);
        a.sum_q.assign(nb, 0.0f);
        a.half_sum_q.assign(2 * nb, 0);
    }
}

// Mirrors what llama.cpp's x86 kernels do to activations (its SIMD quantize_row_q8_1, not the
// scalar reference): d = amax/127, q = round-half-even(x · 127/amax), s = d·Σq; d and s are
// then rounded to f16 as the block format stores them.
void quantize_activations(const float* x, int64_t t0, int64_t t1, QuantizedActivations& a) {
    for (int64_t t = t0; t < t1; ++t) quantize_activation_blocks(x + t * a.n_in, t, 0, a.n_blocks, a);
}

void quantize_activation_blocks(const float* xt, int64_t t, int64_t b0, int64_t b1, QuantizedActivations& a) {
    const __m256 sign_bit = _mm256_set1_ps(-0.0f);
    {
        int8_t* q = a.qs.data() + t * a.n_in;
        float* d = a.d.data() + t * a.block_stride;
        float* s = a.s.data() + t * a.block_stride;
        float* sum_q = a.sum_q.data() + t * a.block_stride;
        int16_t* half_sum_q = a.half_sum_q.data() + 2 * t * a.block_stride;
        for (int64_t b = b0; b < b1; ++b) {
            __m256 v[4];
            __m256 amax = _mm256_setzero_ps();
            for (int j = 0; j < 4; ++j) {
                v[j] = _mm256_loadu_ps(xt + b * 32 + j * 8);
                amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_bit, v[j]));
            }
            __m128 m4 = _mm_max_ps(_mm256_extractf128_ps(amax, 1), _mm256_castps256_ps128(amax));
            m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
            m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
            const float max_abs = _mm_cvtss_f32(m4);
            const float scale = max_abs / 127.0f;
            const __m256 id = _mm256_set1_ps(max_abs != 0.0f ? 127.0f / max_abs : 0.0f);
            // Finite rows give |q| <= 127 as they are. A NaN (a corrupt file's weights) can hide
            // the block's largest value from amax and converts to INT_MIN itself: the clamp keeps
            // such blocks from overflowing their sums (their output is garbage, not undefined).
            __m256i i32[4];
            for (int j = 0; j < 4; ++j)
                i32[j] = _mm256_min_epi32(
                    _mm256_max_epi32(_mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[j], id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)),
                                     _mm256_set1_epi32(-127)),
                    _mm256_set1_epi32(127));
            // Σq of each half in int32, then pack 32 int32 → 32 int8 in element order.
            auto sum_lanes = [](__m256i lanes) {
                __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1));
                s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(1, 0, 3, 2)));
                s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(2, 3, 0, 1)));
                return _mm_cvtsi128_si32(s4);
            };
            const int first = sum_lanes(_mm256_add_epi32(i32[0], i32[1])), second = sum_lanes(_mm256_add_epi32(i32[2], i32[3]));
            const int total = first + second;
            const __m256i p16a = _mm256_packs_epi32(i32[0], i32[1]);
            const __m256i p16b = _mm256_packs_epi32(i32[2], i32[3]);
            const __m256i p8 = _mm256_packs_epi16(p16a, p16b);
            // packs interleave 128-bit lanes: restore element order.
            const __m256i ordered = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + b * 32), ordered);
            d[b] = half_to_float(float_to_half(scale));
            s[b] = half_to_float(float_to_half(scale * static_cast<float>(total)));
            sum_q[b] = static_cast<float>(total);
            half_sum_q[2 * b] = static_cast<int16_t>(first);
            half_sum_q[2 * b + 1] = static_cast<int16_t>(second);
        }
    }
}

}  // namespace workbench
