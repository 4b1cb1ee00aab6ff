// AVX-512 VNNI kernels. This file alone is compiled with AVX-512 flags and only runs when
// cpu_features() says so; it uses intrinsics and file-local helpers only (no shared inline code),
// so no AVX-512 instruction can leak into code that runs on other CPUs.
//
// Quantized rows: two 32-element blocks per 512-bit register. vpdpbusd multiplies the unsigned
// weight quants by the signed activation quants and sums groups of four into 16 int32 lanes
// (lanes 0-7: first block, 8-15: second). Each lane is scaled by its block's d_w·d_a, looked up
// from 16 precomputed scales with one permute, and accumulated in float. The bias of the stored
// quants (q4_0: 8, q8_0: 128) comes off at the end through Σq of the activations; q4_1's offset
// adds m·s. Every token in a tile runs the identical sequence, so tiling never changes a result.
#include <immintrin.h>

#include "kernels/cpu/gemm_kernels.h"

namespace workbench {
namespace {

constexpr int kMaxTile = 4;

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// A pair of pair-interleaved 4-bit blocks (32 bytes) → 64 quants: [block 2p | block 2p+1].
// A lone last block was packed with zero high nibbles, so its partner lanes come out zero.
inline __m512i unpack_two_blocks(const uint8_t* q, bool /*two*/) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    const __m256i mask = _mm256_set1_epi8(0x0F);
    const __m256i lo = _mm256_and_si256(raw, mask);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), mask);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

inline __m512i load_q8_two_blocks(const uint8_t* q, bool two) {
    return two ? _mm512_loadu_si512(q) : _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
}

template <int NT>
void quant_row_tile(const PackedView& w, const ActivationView& a, int64_t r, int64_t t0, float* y, int64_t ldy) {
    const uint8_t* q = w.data + r * w.row_bytes;
    const auto* wd = reinterpret_cast<const uint16_t*>(q + w.scales_at);
    const int64_t nb = w.n_blocks;
    __m512 acc[NT], corr[NT];
    for (int k = 0; k < NT; ++k) acc[k] = corr[k] = _mm512_setzero_ps();
    for (int64_t c = 0; c < nb; c += 16) {
        const int64_t nbc = min64(16, nb - c);
        const __mmask16 m16 = static_cast<__mmask16>((1u << nbc) - 1);
        const __m512 dw = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m16, wd + c));
        __m512 scale[NT];
        for (int k = 0; k < NT; ++k) {
            const int64_t at = (t0 + k) * a.block_stride + c;
            scale[k] = _mm512_mul_ps(dw, _mm512_loadu_ps(a.d + at));
            if (w.layout == PackedLayout::q4_1) {
                const __m512 mw = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m16, wd + nb + c));
                corr[k] = _mm512_fmadd_ps(mw, _mm512_loadu_ps(a.s + at), corr[k]);
            } else {
                corr[k] = _mm512_fmadd_ps(scale[k], _mm512_loadu_ps(a.sum_q + at), corr[k]);
            }
        }
        for (int64_t p = 0; p < nbc; p += 2) {
            const int64_t b = c + p;
            const bool two = p + 1 < nbc;
            const __m512i wq = w.layout == PackedLayout::q8_0 ? load_q8_two_blocks(q + b * 32, two)
                                                              : unpack_two_blocks(q + (b / 2) * 32, two);
            const __m512i idx = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi32(static_cast<int>(p))),
                                                   _mm256_set1_epi32(static_cast<int>(p + 1)), 1);
            for (int k = 0; k < NT; ++k) {
                const __m512i aq = _mm512_loadu_si512(a.qs + (t0 + k) * a.n_in + b * 32);
                const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wq, aq);
                acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_permutexvar_ps(idx, scale[k]), acc[k]);
            }
        }
    }
    const float bias = w.layout == PackedLayout::q8_0 ? -128.0f : w.layout == PackedLayout::q4_0 ? -8.0f : 1.0f;
    for (int k = 0; k < NT; ++k)
        y[(t0 + k) * ldy + r] = _mm512_reduce_add_ps(acc[k]) + bias * _mm512_reduce_add_ps(corr[k]);
}

template <int NT>
void float_row_tile(const PackedView& w, const float* x, int64_t r, int64_t t0, float* y, int64_t ldy) {
    const uint8_t* row = w.data + r * w.row_bytes;
    __m512 acc[NT];
    for (int k = 0; k < NT; ++k) acc[k] = _mm512_setzero_ps();
    for (int64_t i = 0; i < w.n_in; i += 16) {
        const int64_t n = min64(16, w.n_in - i);
        const __mmask16 m = static_cast<__mmask16>((1u << n) - 1);
        const __m512 wv = w.layout == PackedLayout::f16
                              ? _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, reinterpret_cast<const uint16_t*>(row) + i))
                              : _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + i);
        for (int k = 0; k < NT; ++k) acc[k] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m, x + (t0 + k) * w.n_in + i), acc[k]);
    }
    for (int k = 0; k < NT; ++k) y[(t0 + k) * ldy + r] = _mm512_reduce_add_ps(acc[k]);
}

}  // namespace

void gemm_quant_avx512(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    for (int64_t r = r0; r < r1; ++r) {
        int64_t t = 0;
        for (; t + kMaxTile <= a.n_tokens; t += kMaxTile) quant_row_tile<kMaxTile>(w, a, r, t, y, ldy);
        for (; t < a.n_tokens; ++t) quant_row_tile<1>(w, a, r, t, y, ldy);
    }
}

void gemm_float_avx512(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    for (int64_t r = r0; r < r1; ++r) {
        int64_t t = 0;
        for (; t + kMaxTile <= n_tokens; t += kMaxTile) float_row_tile<kMaxTile>(w, x, r, t, y, ldy);
        for (; t < n_tokens; ++t) float_row_tile<1>(w, x, r, t, y, ldy);
    }
}

}  // namespace workbench
