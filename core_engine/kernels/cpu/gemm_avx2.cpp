// AVX2 kernels: quantized weights in row groups of 8 (gemm_quant_groups.h with maddubs + madd),
// and f16/f32 weights as register-tiled FMA over rows × tokens.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/gemm_f16_groups.h"
#include "kernels/cpu/gemm_quant_groups.h"

namespace workbench {
namespace {

inline float hsum(__m256 v) {
    __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}

// NR rows × NT tokens of an f32 matrix (3 × 4: 12 accumulators, 4 activation vectors and one
// weight vector fill the 16 registers): 8 elements per step, one accumulator per pair, the
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

struct F16Tiles256 {
    static constexpr int kPromptGroups = 2;
    template <PackedLayout L, int NG, int NT>
    static void tile(const PackedView& w, const float* x, int64_t g0, int64_t t0, float* out) { f16_group_tile<L, NG, NT>(w, x, g0, t0, out); }
};

}  // namespace

void gemm_quant_avx2(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    quant_group_rows<TilesWith<Maddubs>::template type>(w, a, r0, r1, y, ldy);
}

void gemm_float_avx2(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    if (w.layout == PackedLayout::f16x8) f16_group_rows<PackedLayout::f16x8, F16Tiles256>(w, x, n_tokens, r0, r1, y, ldy);
    else if (w.layout == PackedLayout::bf16x8) f16_group_rows<PackedLayout::bf16x8, F16Tiles256>(w, x, n_tokens, r0, r1, y, ldy);
    else if (w.layout == PackedLayout::f32) float_rows<PackedLayout::f32>(w, x, n_tokens, r0, r1, y, ldy);
    // f16 rows in place are the AVX-512 kernels' layout
}

}  // namespace workbench
