// AVX2 kernels: quantized weights in row groups of 8 (gemm_quant_groups.h with maddubs + madd),
// and f16/f32 weights as register-tiled FMA over rows × tokens.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/gemm_quant_groups.h"

namespace workbench {
namespace {

inline float hsum(__m256 v) {
    __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}

// f32 activations: 64 × n_in × 4 bytes stay in L2 while rows stream past (see kQuantTokenBlock).
constexpr int64_t kTokenBlock = 64;

// NR rows × NT tokens of an f32 matrix (3 × 4 measured fastest here: 12 accumulators, 4
// activation vectors and one weight vector fill the 16 registers): 8 elements per step, one accumulator per pair, the
// same order for every pair whatever the tile, so results stay batch-invariant.
template <PackedLayout L, int NR, int NT>
void float_tile(const PackedView& w, const float* x, int64_t r0, int64_t t0, float* y, int64_t ldy) {
    const uint8_t* row[NR];
    for (int i = 0; i < NR; ++i) row[i] = w.data + (r0 + i) * w.row_bytes;
    __m256 acc[NR][NT];
    for (int i = 0; i < NR; ++i)
        for (int k = 0; k < NT; ++k) acc[i][k] = _mm256_setzero_ps();
    // Rows are contiguous: prefetch the rows two tiles ahead while streaming these (see above).
    const uint8_t* ahead = row[0] + 2 * NR * w.row_bytes;
    const int64_t ahead_lines = (NR * w.row_bytes + 63) / 64;
    const int64_t steps = w.n_in / 8 > 0 ? w.n_in / 8 : 1;
    const int64_t lines_per_step = (ahead_lines + steps - 1) / steps;
    int64_t e = 0;
    for (; e + 8 <= w.n_in; e += 8) {
        if constexpr (NT == 1)  // decode streams each row once (see quant_tile)
            for (int64_t l = (e / 8) * lines_per_step; l < (e / 8 + 1) * lines_per_step && l < ahead_lines; ++l)
                _mm_prefetch(reinterpret_cast<const char*>(ahead + l * 64), _MM_HINT_T0);
        __m256 xv[NT];
        for (int k = 0; k < NT; ++k) xv[k] = _mm256_loadu_ps(x + (t0 + k) * w.n_in + e);
        for (int i = 0; i < NR; ++i) {
            const __m256 wv = _mm256_loadu_ps(reinterpret_cast<const float*>(row[i]) + e);
            for (int k = 0; k < NT; ++k) acc[i][k] = _mm256_fmadd_ps(wv, xv[k], acc[i][k]);
        }
    }
    for (int i = 0; i < NR; ++i)
        for (int k = 0; k < NT; ++k) {
            float sum = hsum(acc[i][k]);
            for (int64_t j = e; j < w.n_in; ++j) sum += reinterpret_cast<const float*>(row[i])[j] * x[(t0 + k) * w.n_in + j];
            y[(t0 + k) * ldy + r0 + i] = sum;
        }
}

template <PackedLayout L, int NR>
void float_rows_of(const PackedView& w, const float* x, int64_t t_begin, int64_t t_end, int64_t r, float* y, int64_t ldy) {
    int64_t t = t_begin;
    for (; t + 4 <= t_end; t += 4) float_tile<L, NR, 4>(w, x, r, t, y, ldy);
    for (; t < t_end; ++t) float_tile<L, NR, 1>(w, x, r, t, y, ldy);
}

template <PackedLayout L>
void float_rows(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    for (int64_t tb = 0; tb < n_tokens; tb += kTokenBlock) {
        const int64_t te = tb + kTokenBlock < n_tokens ? tb + kTokenBlock : n_tokens;
        int64_t r = r0;
        for (; r + 3 <= r1; r += 3) float_rows_of<L, 3>(w, x, tb, te, r, y, ldy);
        for (; r < r1; ++r) float_rows_of<L, 1>(w, x, tb, te, r, y, ldy);
    }
}

// f16x8 and bf16x8 (packed_matrix.h): NG groups of 8 rows × NT tokens. Per element k, one convert gives 8
// rows and one broadcast gives a token's activation; every (row, token) lane sums its products
// in element order, whatever NG and NT are, so results are batch-invariant. With NG = 2 and
// NT = 6 the 12 accumulators stay in registers and per 12 FMAs only 6 activations (24 bytes)
// come from L2; the weights (16 rows) stay in L1 while a block of tokens passes.
template <PackedLayout L>
inline __m256 load_8_rows(const uint16_t* p) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (L == PackedLayout::f16x8) return _mm256_cvtph_ps(v);
    else return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));  // bf16: the top half of an f32
}

template <PackedLayout L, int NG, int NT>
void f16_group_tile(const PackedView& w, const float* x, int64_t g0, int64_t t0, float* out) {
    const uint16_t* group[NG];
    for (int g = 0; g < NG; ++g) group[g] = reinterpret_cast<const uint16_t*>(w.data + (g0 + g) * w.row_bytes);
    const float* xt[NT];
    for (int t = 0; t < NT; ++t) xt[t] = x + (t0 + t) * w.n_in;
    __m256 acc[NG][NT];
    for (int g = 0; g < NG; ++g)
        for (int t = 0; t < NT; ++t) acc[g][t] = _mm256_setzero_ps();
    for (int64_t k = 0; k < w.n_in; ++k) {
        if constexpr (NT == 1)  // decode streams the groups once: fetch ahead (see group_tile)
            if (k % 4 == 0)
                for (int g = 0; g < NG; ++g) _mm_prefetch(reinterpret_cast<const char*>(group[g] + (k + 128) * 8), _MM_HINT_T0);
        __m256 wv[NG];
        for (int g = 0; g < NG; ++g) wv[g] = load_8_rows<L>(group[g] + k * 8);
        for (int t = 0; t < NT; ++t) {
            const __m256 xv = _mm256_broadcast_ss(xt[t] + k);
            for (int g = 0; g < NG; ++g) acc[g][t] = _mm256_fmadd_ps(wv[g], xv, acc[g][t]);
        }
    }
    for (int t = 0; t < NT; ++t)
        for (int g = 0; g < NG; ++g) _mm256_storeu_ps(out + t * NG * 8 + g * 8, acc[g][t]);
}

// NG groups from g × tokens [t, t + n), n ≤ 6.
template <PackedLayout L, int NG>
void f16_group_tokens(const PackedView& w, const float* x, int64_t g, int64_t t, int64_t n, float* out) {
    switch (n) {
        case 6: f16_group_tile<L, NG, 6>(w, x, g, t, out); break;
        case 5: f16_group_tile<L, NG, 5>(w, x, g, t, out); break;
        case 4: f16_group_tile<L, NG, 4>(w, x, g, t, out); break;
        case 3: f16_group_tile<L, NG, 3>(w, x, g, t, out); break;
        case 2: f16_group_tile<L, NG, 2>(w, x, g, t, out); break;
        default: f16_group_tile<L, NG, 1>(w, x, g, t, out); break;
    }
}

template <PackedLayout L>
void f16_group_rows(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    alignas(32) float out[6 * 16 > 64 ? 6 * 16 : 64];
    const int64_t g_end = (r1 + 7) / 8;
    // Rows [8g, 8g + 8·ng) of `n` tokens from t, clipped to [r0, r1).
    auto emit = [&](int64_t g, int ng, int64_t t, int64_t n) {
        const int64_t lo = g * 8 > r0 ? g * 8 : r0, hi = (g + ng) * 8 < r1 ? (g + ng) * 8 : r1;
        for (int64_t k = 0; k < n; ++k) {
            float* dst = y + (t + k) * ldy + lo;
            const float* src = out + k * ng * 8 + (lo - g * 8);
            int64_t i = 0;
            for (; i + 8 <= hi - lo; i += 8) _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
            std::memcpy(dst + i, src + i, static_cast<size_t>(hi - lo - i) * sizeof(float));
        }
    };
    if (n_tokens == 1) {
        int64_t g = r0 / 8;
        for (; g + 8 <= g_end; g += 8) {
            f16_group_tile<L, 8, 1>(w, x, g, 0, out);
            emit(g, 8, 0, 1);
        }
        for (; g < g_end; ++g) {
            f16_group_tile<L, 1, 1>(w, x, g, 0, out);
            emit(g, 1, 0, 1);
        }
        return;
    }
    for (int64_t tb = 0; tb < n_tokens; tb += kTokenBlock) {
        const int64_t te = tb + kTokenBlock < n_tokens ? tb + kTokenBlock : n_tokens;
        for (int64_t g = r0 / 8; g < g_end; g += 2) {
            const int ng = g + 2 <= g_end ? 2 : 1;
            for (int64_t t = tb; t < te; t += 6) {
                const int64_t n = te - t < 6 ? te - t : 6;
                if (ng == 2) f16_group_tokens<L, 2>(w, x, g, t, n, out);
                else f16_group_tokens<L, 1>(w, x, g, t, n, out);
                emit(g, ng, t, n);
            }
        }
    }
}

}  // namespace

void gemm_quant_avx2(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    quant_group_rows<TilesWith<Maddubs>::template type>(w, a, r0, r1, y, ldy);
}

void gemm_float_avx2(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    if (w.layout == PackedLayout::f16x8) f16_group_rows<PackedLayout::f16x8>(w, x, n_tokens, r0, r1, y, ldy);
    else if (w.layout == PackedLayout::bf16x8) f16_group_rows<PackedLayout::bf16x8>(w, x, n_tokens, r0, r1, y, ldy);
    else if (w.layout == PackedLayout::f32) float_rows<PackedLayout::f32>(w, x, n_tokens, r0, r1, y, ldy);
    // f16 rows in place are the AVX-512 kernels' layout
}

}  // namespace workbench
