// The register-blocked pieces of the attention kernel (attention.cpp only; AVX2): a key's
// resolved K/V rows, scores of (query, head) rows against four keys per register tile, value
// passes over lane groups, and a block's max and exponentiation. Each (row, key) score is one FMA
// chain over the head's dimensions and one horizontal sum, whatever the rows and keys sharing it.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "tensor/half_convert.h"
#include "kernels/cpu/vector_math.h"

namespace workbench::attention_blocks {

constexpr int64_t kMaxAcc = 12;  // (query, head) accumulators kept in registers

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// How a key row is scored by int8 dot products in place (int8_key_scores below); none: as floats.
enum class Int8Key : uint8_t { none, q8_0, q4_0, q2_0 };

// One key's K and V rows, resolved: f16 and f32 rows are read in place, q8_0, q4_0 and q2_0 keys
// too (k8 says which: scored by int8 dot products), any other type is decoded once into the
// block's scratch and read as f32.
struct KeyRef {
    const void* k;
    const void* v;
    bool k16, v16;
    Int8Key k8;
    float bias;
};

inline __m256 load8(const void* row, bool is_f16, int64_t i) {
    return is_f16 ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i)))
                  : _mm256_loadu_ps(static_cast<const float*>(row) + i);
}
inline float load1(const void* row, bool is_f16, int64_t i) {
    return is_f16 ? half_to_float(static_cast<const uint16_t*>(row)[i]) : static_cast<const float*>(row)[i];
}

// The K and V rows of the key kPrefetchKeys ahead are fetched meanwhile: a long context's cache
// is far beyond L2 and its blocks are scattered, so the hardware prefetcher leaves each load
// waiting on memory (V is fetched here too, for the value pass that follows).
constexpr int64_t kPrefetchKeys = 8;

inline void prefetch_row(const void* row, bool is_f16, int64_t hd) {
    const char* p = static_cast<const char*>(row);
    for (int64_t b = 0; b < hd * (is_f16 ? 2 : 4); b += 64) _mm_prefetch(p + b, _MM_HINT_T0);
}

// Four keys' horizontal sums at once, each added in hsum's order ((lo + hi), then lanes 0 + 2 and
// 1 + 3, then those two), so a score is the same float whichever way it was summed: [a, b, c, d].
inline __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 d) {
    const __m256 ab = _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
    const __m256 cd = _mm256_add_ps(_mm256_permute2f128_ps(c, d, 0x20), _mm256_permute2f128_ps(c, d, 0x31));
    // Per 128-bit half (a | b, c | d): [x0 + x2, x1 + x3] of the first, then of the second.
    const __m256 pairs = _mm256_add_ps(_mm256_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)), _mm256_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
    const __m256 sums = _mm256_add_ps(_mm256_shuffle_ps(pairs, pairs, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(pairs, pairs, _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm_unpacklo_ps(_mm256_castps256_ps128(sums), _mm256_extractf128_ps(sums, 1));  // [a, c, ..] ∪ [b, d, ..]
}

// R rows × 4 keys of one element type (K16: f16): a chunk of each row's query and of each key is
// loaded once for the R · 4 FMAs it feeds, and the four sums come out of one hsum4.
template <int R, bool K16>
inline void score_key_quad(const KeyRef* r, const float* qr, int64_t hd, float* out, int64_t out_stride, float scale) {
    __m256 acc[R][4];
#pragma GCC unroll 4
    for (int k = 0; k < R; ++k)
        for (int c = 0; c < 4; ++c) acc[k][c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < hd; i += 8) {
        __m256 q[R];
#pragma GCC unroll 4
        for (int k = 0; k < R; ++k) q[k] = _mm256_loadu_ps(qr + k * hd + i);
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const __m256 kv = load8(r[c].k, K16, i);
#pragma GCC unroll 4
            for (int k = 0; k < R; ++k) acc[k][c] = _mm256_fmadd_ps(q[k], kv, acc[k][c]);
        }
    }
    const __m128 bias = _mm_setr_ps(r[0].bias, r[1].bias, r[2].bias, r[3].bias);
#pragma GCC unroll 4
    for (int k = 0; k < R; ++k)
        _mm_storeu_ps(out + k * out_stride, _mm_fmadd_ps(hsum4(acc[k][0], acc[k][1], acc[k][2], acc[k][3]), _mm_set1_ps(scale), bias));
}

// Rows [R0, NQ) against keys r[0..3], kQuadRows rows at a time (12 accumulators).
constexpr int kQuadRows = 3;
template <int R0, int NQ, bool K16>
inline void score_rows_quad(const KeyRef* r, const float* qr, int64_t hd, float* out, int64_t out_stride, float scale) {
    if constexpr (R0 < NQ) {
        constexpr int R = NQ - R0 < kQuadRows ? NQ - R0 : kQuadRows;
        score_key_quad<R, K16>(r, qr + R0 * hd, hd, out + R0 * out_stride, out_stride, scale);
        score_rows_quad<R0 + R, NQ, K16>(r, qr, hd, out, out_stride, scale);
    }
}

// One key against NQ rows, the same sums one at a time: the tail of a list, and groups of four
// whose keys differ in element type.
template <int NQ>
void score_one_key(const KeyRef& r, const float* qr, int64_t hd, float* out, int64_t out_stride, float scale) {
    __m256 acc[NQ];
#pragma GCC unroll 12
    for (int k = 0; k < NQ; ++k) acc[k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < hd; i += 8) {
        const __m256 kv = load8(r.k, r.k16, i);
#pragma GCC unroll 12
        for (int k = 0; k < NQ; ++k) acc[k] = _mm256_fmadd_ps(_mm256_loadu_ps(qr + k * hd + i), kv, acc[k]);
    }
#pragma GCC unroll 12
    for (int k = 0; k < NQ; ++k) out[k * out_stride] = std::fma(hsum(acc[k]), scale, r.bias);
}

// Scores of NQ (query, head) rows against n keys: out[k·out_stride + j] = q_k · K_j · scale + bias_j,
// each one FMA chain over the head's 8-lane chunks, hsum's horizontal sum and one fused
// multiply-add, whether the key went in a group of four or alone.
template <int NQ>
void score_rows(const KeyRef* keys, int64_t n, const float* qr, int64_t hd, float* out, int64_t out_stride, float scale) {
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        for (int64_t a = j + kPrefetchKeys; a < j + 4 + kPrefetchKeys && a < n; ++a) {
            prefetch_row(keys[a].k, keys[a].k16, hd);
            prefetch_row(keys[a].v, keys[a].v16, hd);
        }
        const KeyRef* r = keys + j;
        const int n16 = r[0].k16 + r[1].k16 + r[2].k16 + r[3].k16;
        if (n16 == 4) score_rows_quad<0, NQ, true>(r, qr, hd, out + j, out_stride, scale);
        else if (n16 == 0) score_rows_quad<0, NQ, false>(r, qr, hd, out + j, out_stride, scale);
        else
            for (int c = 0; c < 4; ++c) score_one_key<NQ>(r[c], qr, hd, out + j + c, out_stride, scale);
    }
    for (; j < n; ++j) score_one_key<NQ>(keys[j], qr, hd, out + j, out_stride, scale);
}

// Quantized keys (blocks of 32 values and an f16 step) against query rows quantized to q8_0
// (quantize_row q8_0, as llama.cpp's CPU path does when it multiplies q8_0 or q4_0 by q8_0): per
// block, the key's 32 codes as int8 (q8_0 as stored, q4_0 nibble − 8, q2_0 2·code − 3 at half
// the step), one int8 dot product of 32 pairs (sign trick, maddubs, madd: pair sums stay within
// int16 for values in ±127) scaled by d_k · d_q, accumulated in 8 float lanes, then hsum's sum.
// The integer sums are exact, so a key scores as its decoded row would against the q8_0 query.
// Rows of one call share each loaded key block; a row's score does not depend on the rows beside it.
// A query block as the scores read it: q8_0's step widened to a float (converted once per step,
// not once per key), then its 32 codes.
constexpr int64_t kQueryBlockBytes = 36;
inline void query_blocks_from_q8_0(const uint8_t* q8_0_row, uint8_t* out, int64_t n_blocks) {
    for (int64_t b = 0; b < n_blocks; ++b, q8_0_row += 34, out += kQueryBlockBytes) {
        uint16_t d16;
        std::memcpy(&d16, q8_0_row, 2);
        const float d = half_to_float(d16);
        std::memcpy(out, &d, 4);
        std::memcpy(out + 4, q8_0_row + 2, 32);
    }
}
inline __m256 q8_block_dot(__m256i k_abs, __m256i k, const uint8_t* q_block) {
    const __m256i qs = _mm256_sign_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q_block + 4)), k);
    const __m256i pairs = _mm256_maddubs_epi16(k_abs, qs);
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}
inline float q8_scale(const uint8_t* block) {
    uint16_t d;
    std::memcpy(&d, block, 2);
    return half_to_float(d);
}
// One key block loaded for every query row it meets: add_dot adds d_k · d_q · (k · q) of a query
// block to a row's 8 float lanes.
struct Q8KeyBlock {
    __m256i k, k_abs;
    float d;
    __m256 add_dot(const uint8_t* q_block, __m256 acc) const {
        const __m256 step = _mm256_mul_ps(_mm256_set1_ps(d), _mm256_broadcast_ss(reinterpret_cast<const float*>(q_block)));
        return _mm256_fmadd_ps(step, q8_block_dot(k_abs, k, q_block), acc);
    }
};
// Each key format: its block's bytes and its codes as int8 with their step.
struct Q8Keys {
    static constexpr int64_t kBlockBytes = 34;
    static Q8KeyBlock load(const uint8_t* block) {
        const __m256i k = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
        return {k, _mm256_sign_epi8(k, k), q8_scale(block)};
    }
};
struct Q4Keys {   // byte j: value j in its low nibble, value j + 16 in its high one
    static constexpr int64_t kBlockBytes = 18;
    static Q8KeyBlock load(const uint8_t* block) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
        const __m256i nibbles = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(bytes, 4), bytes), _mm256_set1_epi8(0x0f));
        const __m256i k = _mm256_sub_epi8(nibbles, _mm256_set1_epi8(8));
        return {k, _mm256_sign_epi8(k, k), q8_scale(block)};
    }
};
struct Q2Keys {   // byte j: value 8i + j in bits 2i..2i+1; level (c − 1.5)·d = (2c − 3)·d/2
    static constexpr int64_t kBlockBytes = 10;
    static Q8KeyBlock load(const uint8_t* block) {
        const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + 2));
        const __m128i lo = _mm_unpacklo_epi64(bytes, _mm_srli_epi16(bytes, 2));
        const __m128i hi = _mm_unpacklo_epi64(_mm_srli_epi16(bytes, 4), _mm_srli_epi16(bytes, 6));
        const __m256i c = _mm256_and_si256(_mm256_set_m128i(hi, lo), _mm256_set1_epi8(3));
        const __m256i k = _mm256_sub_epi8(_mm256_add_epi8(c, c), _mm256_set1_epi8(3));
        return {k, _mm256_sign_epi8(k, k), 0.5f * q8_scale(block)};
    }
};

template <class Fmt, int NR>
void int8_key_rows(const uint8_t* key, const uint8_t* const* q_rows, int64_t n_blocks, float* out, int64_t out_stride, float scale, float bias) {
    __m256 acc[NR];
#pragma GCC unroll 4
    for (int r = 0; r < NR; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < n_blocks; ++b) {
        const Q8KeyBlock kb = Fmt::load(key + b * Fmt::kBlockBytes);
#pragma GCC unroll 4
        for (int r = 0; r < NR; ++r) acc[r] = kb.add_dot(q_rows[r] + b * kQueryBlockBytes, acc[r]);
    }
#pragma GCC unroll 4
    for (int r = 0; r < NR; ++r) out[r * out_stride] = std::fma(hsum(acc[r]), scale, bias);
}

// NR rows × 4 keys: each key block is loaded once for the NR rows, and each row's four sums
// come out of one hsum4 (the same floats as int8_key_rows' hsum, key by key).
template <class Fmt, int NR>
void int8_key_quad(const KeyRef* r, const uint8_t* const* q_rows, int64_t n_blocks, float* out, int64_t out_stride, float scale) {
    __m256 acc[NR][4];
#pragma GCC unroll 4
    for (int k = 0; k < NR; ++k)
        for (int c = 0; c < 4; ++c) acc[k][c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < n_blocks; ++b) {
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const Q8KeyBlock kb = Fmt::load(static_cast<const uint8_t*>(r[c].k) + b * Fmt::kBlockBytes);
#pragma GCC unroll 4
            for (int q = 0; q < NR; ++q) acc[q][c] = kb.add_dot(q_rows[q] + b * kQueryBlockBytes, acc[q][c]);
        }
    }
    const __m128 bias = _mm_setr_ps(r[0].bias, r[1].bias, r[2].bias, r[3].bias);
#pragma GCC unroll 4
    for (int q = 0; q < NR; ++q)
        _mm_storeu_ps(out + q * out_stride, _mm_fmadd_ps(hsum4(acc[q][0], acc[q][1], acc[q][2], acc[q][3]), _mm_set1_ps(scale), bias));
}

// Scores of n_rows query rows (q_rows: their q8_0 blocks) against n keys of format Fmt, four keys
// and up to three rows at a time: out[r·out_stride + j].
template <class Fmt>
void int8_key_scores(const KeyRef* keys, int64_t n, const uint8_t* const* q_rows, int64_t n_rows, int64_t hd, float* out,
                     int64_t out_stride, float scale) {
    const int64_t n_blocks = hd / 32;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        for (int64_t a = j + kPrefetchKeys; a < j + 4 + kPrefetchKeys && a < n; ++a) {
            const char* k_ahead = static_cast<const char*>(keys[a].k);
            for (int64_t at = 0; at < n_blocks * Fmt::kBlockBytes; at += 64) _mm_prefetch(k_ahead + at, _MM_HINT_T0);
            prefetch_row(keys[a].v, keys[a].v16, hd);
        }
        for (int64_t r = 0; r < n_rows; r += 3) {
            float* o = out + r * out_stride + j;
            switch (std::min<int64_t>(3, n_rows - r)) {
            case 1: int8_key_quad<Fmt, 1>(keys + j, q_rows + r, n_blocks, o, out_stride, scale); break;
            case 2: int8_key_quad<Fmt, 2>(keys + j, q_rows + r, n_blocks, o, out_stride, scale); break;
            default: int8_key_quad<Fmt, 3>(keys + j, q_rows + r, n_blocks, o, out_stride, scale); break;
            }
        }
    }
    for (; j < n; ++j) {
        const auto* key = static_cast<const uint8_t*>(keys[j].k);
        for (int64_t r = 0; r < n_rows; r += 3) {
            float* o = out + r * out_stride + j;
            switch (std::min<int64_t>(3, n_rows - r)) {
            case 1: int8_key_rows<Fmt, 1>(key, q_rows + r, n_blocks, o, out_stride, scale, keys[j].bias); break;
            case 2: int8_key_rows<Fmt, 2>(key, q_rows + r, n_blocks, o, out_stride, scale, keys[j].bias); break;
            default: int8_key_rows<Fmt, 3>(key, q_rows + r, n_blocks, o, out_stride, scale, keys[j].bias); break;
            }
        }
    }
}

// The keys' run, all of one format (k8 ≠ none), by its format.
inline void int8_scores(const KeyRef* keys, int64_t n, const uint8_t* const* q_rows, int64_t n_rows, int64_t hd, float* out,
                        int64_t out_stride, float scale) {
    switch (keys[0].k8) {
    case Int8Key::q4_0: return int8_key_scores<Q4Keys>(keys, n, q_rows, n_rows, hd, out, out_stride, scale);
    case Int8Key::q2_0: return int8_key_scores<Q2Keys>(keys, n, q_rows, n_rows, hd, out, out_stride, scale);
    default: return int8_key_scores<Q8Keys>(keys, n, q_rows, n_rows, hd, out, out_stride, scale);
    }
}

using ScoreFn = void (*)(const KeyRef*, int64_t, const float*, int64_t, float*, int64_t, float);
template <int... N>
constexpr std::array<ScoreFn, sizeof...(N)> score_table(std::integer_sequence<int, N...>) { return {&score_rows<N + 1>...}; }
constexpr auto kScoreRows = score_table(std::make_integer_sequence<int, 12>{});

// Adds Σ_j p[k][j] · V_j[i0 .. i0 + 8·NL) to acc[k·NL + c], key by key in order.
template <int NQ, int NL>
void value_rows(const KeyRef* keys, int64_t n, const float* p, int64_t p_stride, int64_t i0, __m256* acc) {
    __m256 a[NQ * NL];
#pragma GCC unroll 12
    for (int k = 0; k < NQ * NL; ++k) a[k] = acc[k];
    for (int64_t j = 0; j < n; ++j) {
        const KeyRef& r = keys[j];
#pragma GCC unroll 8
        for (int c = 0; c < NL; ++c) {
            const __m256 vv = load8(r.v, r.v16, i0 + 8 * c);
#pragma GCC unroll 12
            for (int k = 0; k < NQ; ++k) a[k * NL + c] = _mm256_fmadd_ps(_mm256_set1_ps(p[k * p_stride + j]), vv, a[k * NL + c]);
        }
    }
#pragma GCC unroll 12
    for (int k = 0; k < NQ * NL; ++k) acc[k] = a[k];
}

using ValueFn = void (*)(const KeyRef*, int64_t, const float*, int64_t, int64_t, __m256*);

// The lane groups a pass keeps per (query, head): the most that fit the registers and divide the
// head's 8-lane chunks.
int64_t lane_groups(int64_t nqh, int64_t chunks) {
    for (int64_t nl : {8, 4, 2, 1})
        if (nl * nqh <= kMaxAcc && chunks % nl == 0) return nl;
    return 1;
}

// Rows per value pass: each key's V chunk is loaded once per pass and each weight broadcast once
// per row, so (rows + lanes) loads feed rows · lanes FMAs; 3 rows × 4 lane groups needs the fewest
// loads per FMA (a pass over 12 rows × 1 lane group, about one load per FMA, was load-bound).
int64_t value_pass_rows(int64_t chunks) { return chunks % 4 == 0 ? 3 : chunks % 2 == 0 ? 6 : kMaxAcc; }

ValueFn value_fn(int64_t nqh, int64_t nl) {
    switch (nqh * 16 + nl) {
    case 1 * 16 + 8: return &value_rows<1, 8>;
    case 1 * 16 + 4: return &value_rows<1, 4>;
    case 1 * 16 + 2: return &value_rows<1, 2>;
    case 1 * 16 + 1: return &value_rows<1, 1>;
    case 2 * 16 + 4: return &value_rows<2, 4>;
    case 2 * 16 + 2: return &value_rows<2, 2>;
    case 2 * 16 + 1: return &value_rows<2, 1>;
    case 3 * 16 + 4: return &value_rows<3, 4>;
    case 3 * 16 + 2: return &value_rows<3, 2>;
    case 3 * 16 + 1: return &value_rows<3, 1>;
    case 4 * 16 + 2: return &value_rows<4, 2>;
    case 4 * 16 + 1: return &value_rows<4, 1>;
    case 5 * 16 + 2: return &value_rows<5, 2>;
    case 5 * 16 + 1: return &value_rows<5, 1>;
    case 6 * 16 + 2: return &value_rows<6, 2>;
    case 6 * 16 + 1: return &value_rows<6, 1>;
    case 7 * 16 + 1: return &value_rows<7, 1>;
    case 8 * 16 + 1: return &value_rows<8, 1>;
    case 9 * 16 + 1: return &value_rows<9, 1>;
    case 10 * 16 + 1: return &value_rows<10, 1>;
    case 11 * 16 + 1: return &value_rows<11, 1>;
    case 12 * 16 + 1: return &value_rows<12, 1>;
    default: return nullptr;
    }
}

// Exponentiates a block's scores against the new running max in place and returns their sum,
// taken in double. The weights stay f32: llama.cpp's non-flash path rounds its normalized weights
// to f16, but these are not normalized yet, and rounding them moved our logits away from its
// (tests/core_engine/model/test_model_oracle.cpp: mean per-position max 0.393 unrounded, 0.400 rounded).
float block_max(const float* sc, int64_t n) {
    __m256 m8 = _mm256_set1_ps(-INFINITY);
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) m8 = _mm256_max_ps(m8, _mm256_loadu_ps(sc + j));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, m8);
    float mx = *std::max_element(lanes, lanes + 8);
    for (; j < n; ++j) mx = std::max(mx, sc[j]);
    return mx;
}

double exponentiate(float* sc, int64_t n, float mx) {
    const __m256 m8 = _mm256_set1_ps(mx);
    __m256d sum = _mm256_setzero_pd();
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(sc + j), m8));
        sum = _mm256_add_pd(sum, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(e)), _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1))));
        _mm256_storeu_ps(sc + j, e);
    }
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, sum);
    double total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    if (j < n) {
        alignas(32) float tail[8];
        std::fill(tail, tail + 8, mx);
        std::copy(sc + j, sc + n, tail);
        _mm256_store_ps(tail, exp8(_mm256_sub_ps(_mm256_load_ps(tail), m8)));
        for (int64_t i = 0; i < n - j; ++i) total += (sc[j + i] = tail[i]);
    }
    return total;
}

}  // namespace workbench::attention_blocks
