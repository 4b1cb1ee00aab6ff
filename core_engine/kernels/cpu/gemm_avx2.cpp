// AVX2 kernels: one 32-element block per 256-bit register. Nibble quants (0..15) go straight into
// maddubs (unsigned × signed, no saturation at these magnitudes); Q8_0's biased quants are turned
// back to signed and multiplied with the sign trick, since 255·127·2 would saturate maddubs. The
// per-block scale d_w·d_a is a broadcast; biases and Q4_1 offsets are added as in the reference.
#include <immintrin.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/gemm_kernels.h"

namespace workbench {
namespace {

inline float hsum(__m256 v) {
    __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}

inline float half(uint16_t h) { return _cvtsh_ss(h); }

// Signed layouts multiply with the sign trick (|w| × a·sign(w)), since maddubs takes one
// unsigned operand; q4_1's quants are already unsigned (0..15).
template <PackedLayout L>
constexpr bool kSigned = L == PackedLayout::q8_0 || L == PackedLayout::q4_0;

// Block b's 32 quants, in element order, signed for q8_0 (bias 128 removed) and q4_0 (bias 8).
// 4-bit pairs share one 32-byte load (see packed_matrix.h).
inline __m256i load_weight_block(PackedLayout layout, const uint8_t* q, int64_t b) {
    if (layout == PackedLayout::q8_0)
        return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + b * 32)), _mm256_set1_epi8(static_cast<char>(0x80)));
    const __m256i pair = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + (b / 2) * 32));
    const __m256i nibbles = _mm256_and_si256(b % 2 == 0 ? pair : _mm256_srli_epi16(pair, 4), _mm256_set1_epi8(0x0F));
    return layout == PackedLayout::q4_0 ? _mm256_sub_epi8(nibbles, _mm256_set1_epi8(8)) : nibbles;
}

// NR rows × NT tokens at once. Each (row, token) pair keeps its own accumulators and sees the
// same operations in the same order whatever NR and NT are; tiling only lets the CPU overlap the
// pairs' dependency chains (the q4_1 offset sum is a serial chain, kept in block order to round
// as llama.cpp does) and share loads of weights and activations.
template <PackedLayout L, int NR, int NT>
void quant_tile(const PackedView& w, const ActivationView& a, int64_t r0, int64_t t0, float* y, int64_t ldy) {
    static_assert(NT == 1 || NT == 4, "q4_1 offsets are kept as one 4-lane vector per row");
    const uint8_t* q[NR];
    const uint16_t* wd[NR];
    for (int i = 0; i < NR; ++i) {
        q[i] = w.data + (r0 + i) * w.row_bytes;
        wd[i] = reinterpret_cast<const uint16_t*>(q[i] + w.scales_at);
    }
    __m256 acc[NR][NT];
    // q4_1: Σ m_w·s_a per (row, token), one lane per token: each lane is its own serial chain in
    // block order (fused multiply-adds, exactly as the one-token path computes it).
    __m128 offsets[NR];
    float offset1[NR];
    for (int i = 0; i < NR; ++i) {
        for (int k = 0; k < NT; ++k) acc[i][k] = _mm256_setzero_ps();
        offsets[i] = _mm_setzero_ps();
        offset1[i] = 0;
    }
    // The tile's rows are contiguous: while working through them, pull in the rows two tiles
    // ahead so the stream from DRAM never waits (hardware prefetch alone falls behind here).
    const uint8_t* ahead = q[0] + 2 * NR * w.row_bytes;
    const int64_t ahead_lines = (NR * w.row_bytes + 63) / 64;
    const int64_t lines_per_block = (ahead_lines + w.n_blocks - 1) / w.n_blocks;
    for (int64_t b = 0; b < w.n_blocks; ++b) {
        // Only decode streams each row once; prefill tiles revisit rows that are already cached.
        if constexpr (NT == 1)
            for (int64_t l = b * lines_per_block; l < (b + 1) * lines_per_block && l < ahead_lines; ++l)
                _mm_prefetch(reinterpret_cast<const char*>(ahead + l * 64), _MM_HINT_T0);
        __m256i wq[NR], wu[NR];
        float dw[NR];
        for (int i = 0; i < NR; ++i) {
            wq[i] = load_weight_block(L, q[i], b);
            wu[i] = kSigned<L> ? _mm256_sign_epi8(wq[i], wq[i]) : wq[i];
            dw[i] = half(wd[i][b]);
            if constexpr (L == PackedLayout::q4_1) {
                const float mw = half(wd[i][w.n_blocks + b]);
                if constexpr (NT == 4) offsets[i] = _mm_fmadd_ps(_mm_set1_ps(mw), _mm_loadu_ps(a.s_by_block + b * a.n_tokens + t0), offsets[i]);
                else offset1[i] = std::fma(mw, a.s[t0 * a.block_stride + b], offset1[i]);
            }
        }
        for (int k = 0; k < NT; ++k) {
            const int64_t at = (t0 + k) * a.block_stride + b;
            const __m256i aq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs + (t0 + k) * a.n_in + b * 32));
            const float da = a.d[at];
            for (int i = 0; i < NR; ++i) {
                const __m256i p16 = _mm256_maddubs_epi16(wu[i], kSigned<L> ? _mm256_sign_epi8(aq, wq[i]) : aq);
                const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)));
                const float scale = dw[i] * da;
                acc[i][k] = _mm256_fmadd_ps(dot, _mm256_set1_ps(scale), acc[i][k]);
            }
        }
    }
    for (int i = 0; i < NR; ++i) {
        alignas(16) float lanes[4];
        _mm_store_ps(lanes, offsets[i]);
        for (int k = 0; k < NT; ++k) {
            float v = hsum(acc[i][k]);
            if constexpr (L == PackedLayout::q4_1) v += NT == 4 ? lanes[k] : offset1[i];
            y[(t0 + k) * ldy + r0 + i] = v;
        }
    }
}

// Tokens are processed in blocks small enough that a block's activations stay in L2 while every
// row of the chunk streams past; without it each row tile would re-read all tokens from L3.
constexpr int64_t kTokenBlock = 64;         // f32 activations: 64 × n_in × 4 bytes
constexpr int64_t kQuantTokenBlock = 256;   // int8 activations are 4× smaller

template <PackedLayout L, int NR>
void quant_rows_of(const PackedView& w, const ActivationView& a, int64_t r, int64_t t_begin, int64_t t_end, float* y, int64_t ldy) {
    int64_t t = t_begin;
    for (; t + 4 <= t_end; t += 4) quant_tile<L, NR, 4>(w, a, r, t, y, ldy);
    for (; t < t_end; ++t) quant_tile<L, NR, 1>(w, a, r, t, y, ldy);
}

template <PackedLayout L>
void quant_rows(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    for (int64_t tb = 0; tb < a.n_tokens; tb += kQuantTokenBlock) {
        const int64_t te = tb + kQuantTokenBlock < a.n_tokens ? tb + kQuantTokenBlock : a.n_tokens;
        // Decode (one token): 4 rows at a time hide the serial chains; prefill: 2 rows × 4 tokens.
        int64_t r = r0;
        if (a.n_tokens < 4)
            for (; r + 4 <= r1; r += 4) quant_rows_of<L, 4>(w, a, r, tb, te, y, ldy);
        for (; r + 2 <= r1; r += 2) quant_rows_of<L, 2>(w, a, r, tb, te, y, ldy);
        for (; r < r1; ++r) quant_rows_of<L, 1>(w, a, r, tb, te, y, ldy);
    }
}

// NR rows × NT tokens of an f16/f32 matrix (3 × 4 measured fastest here: 12 accumulators, 4
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
            const __m256 wv = L == PackedLayout::f16
                                  ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(reinterpret_cast<const uint16_t*>(row[i]) + e)))
                                  : _mm256_loadu_ps(reinterpret_cast<const float*>(row[i]) + e);
            for (int k = 0; k < NT; ++k) acc[i][k] = _mm256_fmadd_ps(wv, xv[k], acc[i][k]);
        }
    }
    for (int i = 0; i < NR; ++i)
        for (int k = 0; k < NT; ++k) {
            float sum = hsum(acc[i][k]);
            for (int64_t j = e; j < w.n_in; ++j) {
                const float wv = L == PackedLayout::f16 ? half(reinterpret_cast<const uint16_t*>(row[i])[j])
                                                               : reinterpret_cast<const float*>(row[i])[j];
                sum += wv * x[(t0 + k) * w.n_in + j];
            }
            y[(t0 + k) * ldy + r0 + i] = sum;
        }
}

template <PackedLayout L, int NR>
void float_rows_of(const PackedView& w, const float* x, int64_t t_begin, int64_t t_end, int64_t r, float* y, int64_t ldy) {
    if constexpr (L == PackedLayout::f16) {
        // Many tokens: convert the NR rows to f32 once (they stay in L1) instead of once per
        // token tile. The conversion is exact, so results are identical to the direct path.
        if (t_end - t_begin >= 6) {
            thread_local std::vector<float> rows;
            rows.resize(static_cast<size_t>(NR * w.n_in));
            for (int i = 0; i < NR; ++i) {
                const auto* src = reinterpret_cast<const uint16_t*>(w.data + (r + i) * w.row_bytes);
                float* dst = rows.data() + i * w.n_in;
                int64_t e = 0;
                for (; e + 8 <= w.n_in; e += 8) _mm256_storeu_ps(dst + e, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + e))));
                for (; e < w.n_in; ++e) dst[e] = half(src[e]);
            }
            PackedView converted = w;
            converted.layout = PackedLayout::f32;
            converted.row_bytes = w.n_in * static_cast<int64_t>(sizeof(float));
            converted.data = reinterpret_cast<const uint8_t*>(rows.data());
            float_rows_of<PackedLayout::f32, NR>(converted, x, t_begin, t_end, 0, y + r, ldy);  // row 0 of the copy is row r
            return;
        }
    }
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

}  // namespace

void gemm_quant_avx2(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    switch (w.layout) {
        case PackedLayout::q4_0: quant_rows<PackedLayout::q4_0>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::q4_1: quant_rows<PackedLayout::q4_1>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::q8_0: quant_rows<PackedLayout::q8_0>(w, a, r0, r1, y, ldy); break;
        default: break;
    }
}

void gemm_float_avx2(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    if (w.layout == PackedLayout::f16) float_rows<PackedLayout::f16>(w, x, n_tokens, r0, r1, y, ldy);
    else float_rows<PackedLayout::f32>(w, x, n_tokens, r0, r1, y, ldy);
}

}  // namespace workbench
