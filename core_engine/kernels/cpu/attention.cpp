// Attention over span lists, per (query token, KV head): the query heads that share a KV head (GQA) are handled
// together, so each cached K and V row is converted from f16 once for all of them. Scores for one
// query live in a row of length ≤ context (O(T) memory, never a T×T matrix); softmax subtracts
// the max, exponentiates eight lanes at a time and sums in double; each result depends only on
// its own inputs, whatever the batch.
#include "kernels/cpu/attention.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/half_convert.h"
#include "kv_cache/kv_row_codec.h"

namespace workbench {
namespace {

constexpr int kMaxGroup = 16;  // query heads per KV head handled together

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// e^x for 8 lanes (x ≤ 0 here): 2^n · p(r) with r = x − n·ln2, a degree-6 polynomial; relative
// error about 2e-7, like a libm expf.
inline __m256 exp8(__m256 x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

}  // namespace

namespace {

// One KV head's row of entry j in a stream.
inline const uint8_t* k_row(const KvStreamView& s, int64_t j, int64_t kvh) {
    const BlockId b = s.blocks[j / s.block_tokens];
    return s.k_base + b * s.k.block_stride + (j % s.block_tokens) * s.k.token_stride + kvh * s.k.row_bytes;
}
inline const uint8_t* v_row(const KvStreamView& s, int64_t j, int64_t kvh) {
    const BlockId b = s.blocks[j / s.block_tokens];
    return s.v_base + b * s.v.block_stride + (j % s.block_tokens) * s.v.token_stride + kvh * s.v.row_bytes;
}

// Row as floats: f16 rows convert eight lanes at a time inside the loops below; other types are
// decoded into `tmp` first.
inline const float* decoded(KvDType type, const uint8_t* row, float* tmp, int64_t hd) {
    kv_decode_row(type, row, tmp, hd);
    return tmp;
}

}  // namespace

void attend_spans(const float* q, int64_t n_tokens, std::span<const KvStreamView> streams, const AttendPlan& plan,
                  const AttentionShape& s, float scale, float* out, ThreadPool& pool) {
    const int64_t group = s.n_head / s.n_head_kv;
    const int64_t hd = s.head_dim;
    const bool simd = hd % 8 == 0 && group <= kMaxGroup && hd <= 128;
    pool.run(n_tokens * s.n_head_kv, [&](int64_t item) {
        const int64_t t = item / s.n_head_kv, kvh = item % s.n_head_kv;
        const std::span<const KvSpan> list = plan.list(plan.per_kv_head ? item : t);
        int64_t n_keys = 0;
        for (const KvSpan& sp : list) n_keys += sp.end - sp.begin;
        const int64_t h0 = kvh * group;
        float* o = out + (t * s.n_head + h0) * hd;
        if (n_keys == 0) {
            std::fill(o, o + group * hd, 0.0f);
            return;
        }
        thread_local std::vector<float> scores, qr, tmp;
        scores.resize(static_cast<size_t>(group * n_keys));
        qr.resize(static_cast<size_t>(group * hd));
        tmp.resize(static_cast<size_t>(hd));
        // Q and the softmax weights are rounded to f16, as llama.cpp's CPU path does when it
        // multiplies them with the f16 cache; matching it keeps our logits within its noise.
        for (int64_t g = 0; g < group; ++g)
            for (int64_t i = 0; i < hd; ++i) qr[g * hd + i] = half_to_float(float_to_half(q[(t * s.n_head + h0 + g) * hd + i]));

        // Scores, one key at a time, each reduced with the same horizontal sum: the order of these
        // additions shows in the logits (see tests/core_engine/model/test_model_oracle.cpp).
        int64_t col = 0;
        for (const KvSpan& sp : list) {
            const KvStreamView& st = streams[static_cast<size_t>(sp.stream)];
            const bool f16 = st.k.type == KvDType::f16;
            for (int64_t j = sp.begin; j < sp.end; ++j, ++col) {
                const uint8_t* kr = k_row(st, j, kvh);
                if (!simd) {
                    const float* kf = decoded(st.k.type, kr, tmp.data(), hd);
                    for (int64_t g = 0; g < group; ++g) {
                        float dot = 0;
                        for (int64_t i = 0; i < hd; ++i) dot += qr[g * hd + i] * kf[i];
                        scores[g * n_keys + col] = dot * scale;
                    }
                    continue;
                }
                const float* kf = f16 ? nullptr : decoded(st.k.type, kr, tmp.data(), hd);
                for (int64_t g = 0; g < group; ++g) {
                    __m256 acc = _mm256_setzero_ps();
                    for (int64_t i = 0; i < hd; i += 8) {
                        const __m256 kv = f16 ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kr + 2 * i)))
                                              : _mm256_loadu_ps(kf + i);
                        acc = _mm256_fmadd_ps(_mm256_loadu_ps(&qr[g * hd + i]), kv, acc);
                    }
                    scores[g * n_keys + col] = hsum(acc) * scale;
                }
            }
        }
        for (int64_t g = 0; g < group; ++g) {
            float* sc = &scores[g * n_keys];
            const float mx = *std::max_element(sc, sc + n_keys);
            double sum = 0;
            int64_t j = 0;
            for (; j + 8 <= n_keys; j += 8) {
                const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(sc + j), _mm256_set1_ps(mx)));
                _mm256_storeu_ps(sc + j, e);
                alignas(32) float lanes[8];
                _mm256_store_ps(lanes, e);
                for (float v : lanes) sum += v;
            }
            for (; j < n_keys; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
            const float inv = static_cast<float>(1.0 / sum);
            for (j = 0; j < n_keys; ++j) sc[j] = half_to_float(float_to_half(sc[j] * inv));
        }
        // Values: each head's output stays in registers while the rows stream past.
        const int64_t nv = hd / 8;
        for (int64_t g = 0; g < group; ++g) {
            const float* p = &scores[g * n_keys];
            float* og = o + g * hd;
            if (simd) {
                __m256 acc[16];
                for (int64_t i = 0; i < nv; ++i) acc[i] = _mm256_setzero_ps();
                col = 0;
                for (const KvSpan& sp : list) {
                    const KvStreamView& st = streams[static_cast<size_t>(sp.stream)];
                    const bool f16 = st.v.type == KvDType::f16;
                    for (int64_t j = sp.begin; j < sp.end; ++j, ++col) {
                        const uint8_t* vr = v_row(st, j, kvh);
                        const float* vf = f16 ? nullptr : decoded(st.v.type, vr, tmp.data(), hd);
                        const __m256 pj = _mm256_set1_ps(p[col]);
                        for (int64_t i = 0; i < nv; ++i) {
                            const __m256 vv = f16 ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(vr + 16 * i)))
                                                  : _mm256_loadu_ps(vf + 8 * i);
                            acc[i] = _mm256_fmadd_ps(pj, vv, acc[i]);
                        }
                    }
                }
                for (int64_t i = 0; i < nv; ++i) _mm256_storeu_ps(og + i * 8, acc[i]);
            } else {
                std::fill(og, og + hd, 0.0f);
                col = 0;
                for (const KvSpan& sp : list) {
                    const KvStreamView& st = streams[static_cast<size_t>(sp.stream)];
                    for (int64_t j = sp.begin; j < sp.end; ++j, ++col) {
                        const float* vf = decoded(st.v.type, v_row(st, j, kvh), tmp.data(), hd);
                        for (int64_t i = 0; i < hd; ++i) og[i] += p[col] * vf[i];
                    }
                }
            }
        }
    });
}

}  // namespace workbench
