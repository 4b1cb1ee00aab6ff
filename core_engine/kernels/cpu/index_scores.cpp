// Indexer scores, eight lanes at a time with one horizontal sum per candidate; a head_dim that is
// not a multiple of 8 finishes in scalar code. Rows go to four accumulators, so the chains of
// additions stay short (a single accumulator made each score wait on its latency).
#include "kernels/cpu/index_scores.h"

#include <immintrin.h>

#include <algorithm>

#include "tensor/half_convert.h"

namespace workbench {
namespace {

float hsum8(__m256 a, __m256 b, __m256 c, __m256 d) {
    const __m256 v = _mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

__m256 load_f16x8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

// Σ over rows of term(q row chunk) for one 8-lane chunk of the candidate, rows r, r+1, r+2, r+3
// into the four named accumulators (named, not an array: an indexed array lives on the stack).
template <typename Term>
void add_rows(const float* q, int64_t n_rows, int64_t hd, int64_t d, Term term, __m256& a0, __m256& a1, __m256& a2, __m256& a3) {
    int64_t r = 0;
    for (; r + 4 <= n_rows; r += 4) {
        a0 = _mm256_add_ps(a0, term(_mm256_loadu_ps(q + r * hd + d)));
        a1 = _mm256_add_ps(a1, term(_mm256_loadu_ps(q + (r + 1) * hd + d)));
        a2 = _mm256_add_ps(a2, term(_mm256_loadu_ps(q + (r + 2) * hd + d)));
        a3 = _mm256_add_ps(a3, term(_mm256_loadu_ps(q + (r + 3) * hd + d)));
    }
    if (r < n_rows) a0 = _mm256_add_ps(a0, term(_mm256_loadu_ps(q + r * hd + d)));
    if (r + 1 < n_rows) a1 = _mm256_add_ps(a1, term(_mm256_loadu_ps(q + (r + 1) * hd + d)));
    if (r + 2 < n_rows) a2 = _mm256_add_ps(a2, term(_mm256_loadu_ps(q + (r + 2) * hd + d)));
}

// An f16 or f32 key row: eight lanes, or one value.
__m256 load8(const uint16_t* p) { return load_f16x8(p); }
__m256 load8(const float* p) { return _mm256_loadu_ps(p); }
float value(uint16_t h) { return half_to_float(h); }
float value(float f) { return f; }

template <typename Key>
float group_dot(const float* q, int64_t n_rows, const Key* k, int64_t hd) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const int64_t hd8 = hd - hd % 8;
    for (int64_t d = 0; d < hd8; d += 8) {
        const __m256 kv = load8(k + d);
        add_rows(q, n_rows, hd, d, [&](__m256 qv) { return _mm256_mul_ps(qv, kv); }, a0, a1, a2, a3);
    }
    float sum = hsum8(a0, a1, a2, a3);
    for (int64_t d = hd8; d < hd; ++d)
        for (int64_t r = 0; r < n_rows; ++r) sum += q[r * hd + d] * value(k[d]);
    return sum;
}

}  // namespace

float quest_bound(const float* q, int64_t n_rows, const uint16_t* range, int64_t hd) {
    const uint16_t* lo = range;
    const uint16_t* hi = range + hd;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const int64_t hd8 = hd - hd % 8;
    for (int64_t d = 0; d < hd8; d += 8) {
        const __m256 l = load_f16x8(lo + d), h = load_f16x8(hi + d);
        add_rows(q, n_rows, hd, d, [&](__m256 qv) { return _mm256_max_ps(_mm256_mul_ps(qv, l), _mm256_mul_ps(qv, h)); }, a0, a1, a2, a3);
    }
    float sum = hsum8(a0, a1, a2, a3);
    for (int64_t d = hd8; d < hd; ++d)
        for (int64_t r = 0; r < n_rows; ++r) {
            const float qd = q[r * hd + d];
            sum += std::max(qd * half_to_float(lo[d]), qd * half_to_float(hi[d]));
        }
    return sum;
}

float group_dot_f16(const float* q, int64_t n_rows, const uint16_t* k, int64_t hd) { return group_dot(q, n_rows, k, hd); }

float group_dot_f32(const float* q, int64_t n_rows, const float* k, int64_t hd) { return group_dot(q, n_rows, k, hd); }

}  // namespace workbench
