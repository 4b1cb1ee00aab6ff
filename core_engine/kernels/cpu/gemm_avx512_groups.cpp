// The row-group kernels on 512-bit registers (AVX-512: Ice Lake and later Xeons, Zen 4): two
// groups (16 rows) per register, group g in the low half and g + 1 in the high half, so one
// broadcast of an activation serves 16 rows. Quantized groups use vpdpbusd (AVX512-VNNI), f16/bf16
// groups FMA; a last odd group runs the 256-bit tile. Built with AVX-512 flags; runs only where
// cpu_features() finds AVX512-VNNI with AVX512BW/VL (matmul.cpp).
//
// Every lane is one row and sees the operations of the 256-bit tiles (gemm_quant_groups.h,
// gemm_f16_groups.h) in the same order: for quantized groups an exact int32 dot product per
// block, then the same float multiply-adds; for f16 groups one FMA per element in element order.
// So the results equal the AVX2 kernels' bit for bit. Signed quants (q8_0x8, q6_kx8) go in as
// w + 128 (a flip of the top bit, once per block for every token), and 128·Σa comes off in
// integers.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/gemm_f16_groups.h"
#include "kernels/cpu/gemm_quant_groups.h"

namespace workbench {
namespace {

struct Avx512VnniMultiplyAdd {
    static __m256i apply(__m256i acc, __m256i u8, __m256i s8) { return _mm256_dpbusd_epi32(acc, u8, s8); }
};
using Vnni256 = VnniDot<Avx512VnniMultiplyAdd>;

// 32 bytes of group g's block | the same 32 bytes of group g + 1's.
inline __m512i join(const uint8_t* low, const uint8_t* high) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(low))),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(high)), 1);
}

inline __m512i broadcast4_512(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return _mm512_set1_epi32(v);
}

template <PackedLayout L>
inline void unpack_pair_block(const uint8_t* low, const uint8_t* high, __m512i wq[8]) {
    if constexpr (group_six_bits(L)) {   // 4-bit plane | 2-bit plane << 4: q as 0..63 (pair_tile takes 32·Σa off)
        const __m512i mask = _mm512_set1_epi8(0x0F), top = _mm512_set1_epi8(0x30);
        const __m512i planes[2] = {join(low + 128, high + 128), join(low + 160, high + 160)};
        for (int k = 0; k < 4; ++k) {
            const __m512i packed = join(low + 32 * k, high + 32 * k);
            wq[k] = _mm512_and_si512(packed, mask);
            wq[k + 4] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), mask);
        }
        for (int j = 0; j < 8; ++j) {
            const __m512i h = planes[j / 4];
            const __m512i at4 = j % 4 == 0 ? _mm512_slli_epi16(h, 4) : j % 4 == 1 ? _mm512_slli_epi16(h, 2) : j % 4 == 2 ? h : _mm512_srli_epi16(h, 2);
            wq[j] = _mm512_ternarylogic_epi32(wq[j], at4, top, 0xF8);   // wq | (at4 & top)
        }
        return;
    }
    if constexpr (!group_nibbles(L) && !group_five_bits(L)) {
        for (int j = 0; j < 8; ++j) wq[j] = join(low + 32 * j, high + 32 * j);
    } else {
        const __m512i mask = _mm512_set1_epi8(0x0F);
        for (int k = 0; k < 4; ++k) {
            const __m512i packed = join(low + 32 * k, high + 32 * k);
            wq[k] = _mm512_and_si512(packed, mask);
            wq[k + 4] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), mask);
        }
        if constexpr (group_five_bits(L)) {   // wq[j] | bit j of the plane moved to bit 4
            const __m512i plane = join(low + 128, high + 128), fifth = _mm512_set1_epi8(0x10);
            for (int j = 0; j < 8; ++j) {
                const __m512i at4 = j < 4 ? _mm512_slli_epi16(plane, 4 - j) : j == 4 ? plane : _mm512_srli_epi16(plane, j - 4);
                wq[j] = _mm512_ternarylogic_epi32(wq[j], at4, fifth, 0xF8);   // wq | (at4 & fifth)
            }
        }
        if constexpr (group_e8m0_scales(L)) {  // nibble → its MXFP4 value, −12..12
            const __m512i table = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12));
            for (int j = 0; j < 8; ++j) wq[j] = _mm512_shuffle_epi8(table, wq[j]);
        }
    }
}

// q4_kx8, q5_kx8, q6_kx8: the two groups' super-block d (part 0) or dmin (part 1), 16 rows as floats.
template <PackedLayout L>
inline __m512 pair_super_factors(const uint8_t* low, const uint8_t* high, int64_t b, int part) {
    const auto* l = reinterpret_cast<const __m128i*>(super_block_scales(L, low, b) + 16 * part);
    const auto* h = reinterpret_cast<const __m128i*>(super_block_scales(L, high, b) + 16 * part);
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(l)), _mm_loadu_si128(h), 1));
}

// The 16 rows' scales (part 0) or offsets (part 1) of a block (q4_kx8, q5_kx8: formed as the 256-bit
// tile forms them, from the byte sub-scales or mins and `super`).
template <PackedLayout L>
inline __m512 pair_scales(const uint8_t* low, const uint8_t* high, int part, __m512 super = __m512()) {
    const int64_t at = group_quant_bytes(L) + part * group_scale_bytes(L);
    if constexpr (group_sub_mins(L)) {
        const __m128i bytes = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(low + at)),
                                                 _mm_loadl_epi64(reinterpret_cast<const __m128i*>(high + at)));
        const __m512 product = _mm512_mul_ps(super, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes)));
        return part == 0 ? product : _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(product), _mm512_set1_epi32(INT32_MIN)));
    } else if constexpr (group_six_bits(L)) {   // d·sc of either half, the sub-scales int8
        const __m128i bytes = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(low + at)),
                                                 _mm_loadl_epi64(reinterpret_cast<const __m128i*>(high + at)));
        return _mm512_mul_ps(super, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)));
    } else if constexpr (group_e8m0_scales(L)) {  // the two groups' 8 exponents each, as the 256-bit kernels decode them
        const __m256i first = _mm256_castps_si256(e8m0_half_8(low + at)), second = _mm256_castps_si256(e8m0_half_8(high + at));
        return _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(first), second, 1));
    }
    const __m256i halves = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(low + at))),
                                                   _mm_loadu_si128(reinterpret_cast<const __m128i*>(high + at)), 1);
    return _mm512_cvtph_ps(halves);
}

template <int J0, int J1>
inline __m512i pair_dot(const __m512i wq[8], const int8_t* aq) {
    __m512i sum = _mm512_setzero_si512();
    for (int j = J0; j < J1; ++j) sum = _mm512_dpbusd_epi32(sum, wq[j], broadcast4_512(aq + 4 * j));
    return sum;
}

// Groups g, g + 1 × NT tokens from t0 (NT > 1: prompts; decode takes the groups one by one): out[k·16 + i] = row 8g+i · token t0+k.
template <PackedLayout L, int NT>
void pair_tile(const PackedView& w, const ActivationView& a, int64_t g, int64_t t0, float* out) {
    // Signed quants go in as w + 128 and 128·Σa comes off; q6_kx8's go in as q (0..63) and 32·Σa
    // comes off: the same integer Σ(q − 32)·a, with no flip per register.
    constexpr bool kSigned = group_signed<L>() && !group_six_bits(L);
    constexpr int32_t kHalfBias = group_six_bits(L) ? 32 : 128;
    const uint8_t* low_group = w.data + g * w.row_bytes;
    const uint8_t* high_group = low_group + w.row_bytes;
    __m512 acc[NT];
    for (int k = 0; k < NT; ++k) acc[k] = _mm512_setzero_ps();
    __m512 super_d = _mm512_setzero_ps(), super_dmin = _mm512_setzero_ps();  // byte-scale layouts: this super-block's
    for (int64_t b = 0; b < w.n_blocks; ++b) {
        const uint8_t* low = low_group + group_block_offset(L, b);
        const uint8_t* high = high_group + group_block_offset(L, b);
        if constexpr (group_byte_scales(L))
            if (b % 8 == 0) {
                super_d = pair_super_factors<L>(low, high, b, 0);
                if constexpr (group_sub_mins(L)) super_dmin = pair_super_factors<L>(low, high, b, 1);
            }
        __m512i wq[8];
        unpack_pair_block<L>(low, high, wq);
        if constexpr (kSigned)
            for (int j = 0; j < 8; ++j) wq[j] = _mm512_xor_si512(wq[j], _mm512_set1_epi8(static_cast<char>(0x80)));
        const __m512 dw = pair_scales<L>(low, high, 0, super_d);
        __m512 mw = _mm512_setzero_ps();   // the offsets, once per block for every token
        if constexpr (group_offsets(L)) mw = pair_scales<L>(low, high, 1, super_dmin);
        for (int k = 0; k < NT; ++k) {
            const int64_t at = (t0 + k) * a.block_stride + b;
            const int8_t* aq = a.qs + (t0 + k) * a.n_in + b * 32;
            if constexpr (group_half_scales(L)) {  // a scale per 16 elements: two products per block
                const __m512 da = _mm512_set1_ps(a.d[at]);
                const __m512i first_dot = pair_dot<0, 4>(wq, aq), second_dot = pair_dot<4, 8>(wq, aq);
                const __m512i first = _mm512_sub_epi32(first_dot, _mm512_set1_epi32(kHalfBias * a.half_sum_q[2 * at]));
                const __m512i second = _mm512_sub_epi32(second_dot, _mm512_set1_epi32(kHalfBias * a.half_sum_q[2 * at + 1]));
                acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(first), _mm512_mul_ps(dw, da), acc[k]);
                acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(second), _mm512_mul_ps(pair_scales<L>(low, high, 1, super_d), da), acc[k]);
                continue;
            }
            __m512i isum = pair_dot<0, 8>(wq, aq);
            const int32_t sum_a = static_cast<int32_t>(a.sum_q[at]);
            if constexpr (kSigned) isum = _mm512_sub_epi32(isum, _mm512_set1_epi32(128 * sum_a));
            if constexpr (group_quant_bias(L) != 0) isum = _mm512_sub_epi32(isum, _mm512_set1_epi32(group_quant_bias(L) * sum_a));
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dw, _mm512_set1_ps(a.d[at])), acc[k]);
            if constexpr (group_offsets(L)) acc[k] = _mm512_fmadd_ps(mw, _mm512_set1_ps(a.s[at]), acc[k]);
        }
    }
    for (int k = 0; k < NT; ++k) _mm512_storeu_ps(out + k * 16, acc[k]);
}

template <PackedLayout L>
struct PairTiles {
    static constexpr int kGroups = 2;
    // The K-quant layouts unpack bit planes and form their scales per block: 16 tokens share
    // each unpacking (16 zmm accumulate beside the block's 8).
    static constexpr int kTokens = group_byte_scales(L) ? 16 : 4;
    // Decode (one token) runs the two groups one after the other on 256-bit registers: each group's
    // blocks are one contiguous stream the prefetchers follow, where a pair would read two streams
    // a group apart and start a fresh one at every pair (a matrix of short groups — an expert's —
    // lost a quarter of its read speed to that). The lanes' arithmetic is the same either way.
    template <int NT>
    static void tile(const PackedView& w, const ActivationView& a, int64_t g, int64_t t0, float* out) {
        if constexpr (NT == 1) {
            group_tile<L, Vnni256, 1>(w, a, g, t0, out);
            group_tile<L, Vnni256, 1>(w, a, g + 1, t0, out + 8);
        } else {
            pair_tile<L, NT>(w, a, g, t0, out);
        }
    }
    template <int NT>
    static void single(const PackedView& w, const ActivationView& a, int64_t g, int64_t t0, float* out) { group_tile<L, Vnni256, NT>(w, a, g, t0, out); }
};

template <PackedLayout L>
inline __m512 load_16_rows(const uint16_t* low, const uint16_t* high) {
    const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(low))),
                                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(high)), 1);
    if constexpr (L == PackedLayout::f16x8) return _mm512_cvtph_ps(v);
    else return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));  // bf16: the top half of an f32
}

// NG groups (NG even: NG/2 registers of 16 rows) × NT tokens, out as f16_group_tile's.
template <PackedLayout L, int NG, int NT>
void f16_pair_tile(const PackedView& w, const float* x, int64_t g0, int64_t t0, float* out) {
    constexpr int NP = NG / 2;
    const uint16_t* group[NG];
    for (int g = 0; g < NG; ++g) group[g] = reinterpret_cast<const uint16_t*>(w.data + (g0 + g) * w.row_bytes);
    const float* xt[NT];
    for (int t = 0; t < NT; ++t) xt[t] = x + (t0 + t) * w.n_in;
    __m512 acc[NP][NT];
    for (int p = 0; p < NP; ++p)
        for (int t = 0; t < NT; ++t) acc[p][t] = _mm512_setzero_ps();
    for (int64_t k = 0; k < w.n_in; ++k) {
        if constexpr (NT == 1)  // decode streams the groups once: fetch ahead (see f16_group_tile)
            if (k % 4 == 0)
                for (int g = 0; g < NG; ++g) _mm_prefetch(reinterpret_cast<const char*>(group[g] + (k + 128) * 8), _MM_HINT_T0);
        __m512 wv[NP];
        for (int p = 0; p < NP; ++p) wv[p] = load_16_rows<L>(group[2 * p] + k * 8, group[2 * p + 1] + k * 8);
        for (int t = 0; t < NT; ++t) {
            const __m512 xv = _mm512_set1_ps(xt[t][k]);
            for (int p = 0; p < NP; ++p) acc[p][t] = _mm512_fmadd_ps(wv[p], xv, acc[p][t]);
        }
    }
    for (int t = 0; t < NT; ++t)
        for (int p = 0; p < NP; ++p) _mm512_storeu_ps(out + t * NG * 8 + p * 16, acc[p][t]);
}

// Four groups × 6 tokens per prompt tile: 12 of the 32 registers accumulate.
struct F16Tiles512 {
    static constexpr int kPromptGroups = 4;
    template <PackedLayout L, int NG, int NT>
    static void tile(const PackedView& w, const float* x, int64_t g0, int64_t t0, float* out) {
        if constexpr (NG % 2 == 0) f16_pair_tile<L, NG, NT>(w, x, g0, t0, out);
        else f16_group_tile<L, NG, NT>(w, x, g0, t0, out);
    }
};

}  // namespace

void gemm_float_avx512_groups(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    if (w.layout == PackedLayout::f16x8) f16_group_rows<PackedLayout::f16x8, F16Tiles512>(w, x, n_tokens, r0, r1, y, ldy);
    else if (w.layout == PackedLayout::bf16x8) f16_group_rows<PackedLayout::bf16x8, F16Tiles512>(w, x, n_tokens, r0, r1, y, ldy);
    else gemm_float_avx2(w, x, n_tokens, r0, r1, y, ldy);  // f32 rows: the AVX2 kernel
}

void gemm_quant_avx512_vnni(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    quant_group_rows<PairTiles>(w, a, r0, r1, y, ldy);
}

}  // namespace workbench
