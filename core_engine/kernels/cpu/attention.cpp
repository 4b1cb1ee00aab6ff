// Attention per (query, head): scores against every visible key, a max-subtracted softmax, then
// the weighted sum of values. Scores live in a per-thread row of length ≤ context (O(T) memory,
// never a T×T matrix).
#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/half_convert.h"

#if defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)
#include <immintrin.h>
#define WB_ATTN_SIMD 1
#endif

namespace workbench {
namespace {

float dot_f32_f16(const float* q, const uint16_t* k, int64_t n) {
#ifdef WB_ATTN_SIMD
    if (n % 8 == 0) {
        __m256 acc = _mm256_setzero_ps();
        for (int64_t i = 0; i < n; i += 8) {
            __m256 kv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(k + i)));
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), kv, acc);
        }
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        s = _mm_add_ss(s, _mm_movehdup_ps(s));
        return _mm_cvtss_f32(s);
    }
#endif
    float sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += q[i] * half_to_float(k[i]);
    return sum;
}

// out += w · v
void axpy_f16(float w, const uint16_t* v, float* out, int64_t n) {
#ifdef WB_ATTN_SIMD
    if (n % 8 == 0) {
        __m256 wv = _mm256_set1_ps(w);
        for (int64_t i = 0; i < n; i += 8) {
            __m256 vv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i)));
            _mm256_storeu_ps(out + i, _mm256_fmadd_ps(wv, vv, _mm256_loadu_ps(out + i)));
        }
        return;
    }
#endif
    for (int64_t i = 0; i < n; ++i) out[i] += w * half_to_float(v[i]);
}

}  // namespace

void attention_f16_kv(const float* q, const int32_t* q_pos, int64_t n_tokens, const uint16_t* k_cache,
                      const uint16_t* v_cache, const AttentionShape& s, float scale, float* out, ThreadPool& pool) {
    const int64_t group = s.n_head / s.n_head_kv;
    pool.run(n_tokens * s.n_head, [&](int64_t item) {
        const int64_t t = item / s.n_head, h = item % s.n_head;
        const int64_t kvh = h / group;
        const int64_t n_keys = static_cast<int64_t>(q_pos[t]) + 1;
        thread_local std::vector<float> scores;
        scores.resize(static_cast<size_t>(n_keys));
        // Q and the softmax weights are rounded to f16, as llama.cpp's CPU path does when it
        // multiplies them with the f16 cache; matching it keeps our logits within its noise.
        thread_local std::vector<float> q_rounded;
        q_rounded.resize(static_cast<size_t>(s.head_dim));
        for (int64_t i = 0; i < s.head_dim; ++i) q_rounded[i] = half_to_float(float_to_half(q[(t * s.n_head + h) * s.head_dim + i]));
        const float* qv = q_rounded.data();
        float max_score = -INFINITY;
        for (int64_t j = 0; j < n_keys; ++j) {
            scores[j] = dot_f32_f16(qv, k_cache + j * s.kv_row_stride + kvh * s.head_dim, s.head_dim) * scale;
            max_score = std::max(max_score, scores[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < n_keys; ++j) {
            scores[j] = std::exp(scores[j] - max_score);
            sum += scores[j];
        }
        const float inv = static_cast<float>(1.0 / sum);
        float* o = out + (t * s.n_head + h) * s.head_dim;
        std::fill(o, o + s.head_dim, 0.0f);
        for (int64_t j = 0; j < n_keys; ++j) axpy_f16(half_to_float(float_to_half(scores[j] * inv)), v_cache + j * s.kv_row_stride + kvh * s.head_dim, o, s.head_dim);
    });
}

}  // namespace workbench
