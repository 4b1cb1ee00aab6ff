// The quantized row-group kernels (q4_0x8 … q6_kx8 of packed_matrix.h) written once over a
// policy for the unsigned × signed byte multiply-add, so each instruction set's file instantiates
// the same walk: gemm_avx2.cpp with maddubs + madd (Maddubs below), gemm_avx_vnni.cpp with
// vpdpbusd (VnniDot), gemm_avx512_groups.cpp with its own 16-row tiles and these for a last odd
// group. Every block's integer dot product is exact in all, so they return the same floats, bit
// for bit. Internal linkage throughout (see
// gemm_avx2_groups.h): include it only from a kernel file, inside no namespace.
#pragma once

#include <immintrin.h>

#include "kernels/cpu/gemm_avx2_groups.h"
#include "kernels/cpu/gemm_kernels.h"

namespace workbench {
namespace {  // internal linkage: each kernel file keeps its own copy

// Row groups: a register holds 4 quants of each of 8 rows, so one broadcast of 4 activation bytes
// multiplies all 8 rows and every 32-bit lane ends with one row's sum. Unsigned quants are the
// unsigned operand as they are; signed int8 quants (q8_0x8, q6_kx8) go in as each policy says
// below. q4_0's bias 8 (q5_0's 16) comes off as 8·Σa (16·Σa) in integers, so each block's
// integer dot product equals the reference's exactly.
//
// A policy offers, for registers [J0, J1) of a block against one token's bytes aq, int32 lanes:
//   unsigned_sum<J0, J1>(wq, aq)               quants 0..31 as they are
//   prepare_signed(w)                          once per block and register of signed quants
//   signed_sum<J0, J1>(wq, wp, aq, sum_a)      signed quants, wp = prepare_signed(wq), sum_a = the
//                                              token's Σq over those registers' 4·(J1 − J0) bytes
// and kWholeBlock: whether unsigned_sum<0, 8> is exact for every unsigned layout.

// AVX2: maddubs sums pairs into 16 bits, and the 16-bit sums of several registers are added
// before one madd widens them: 4-bit quants 8 registers at a time (each lane at most
// 8 · 2 · 15 · 127 = 30,480), 0..31 bytes 4 at a time (31,496). Signed quants use the sign
// trick (|w| × a·sign(w): w + 128 would overflow maddubs' 16-bit pair sums), their products
// widened at once, since two of them can exceed 16 bits.
struct Maddubs {
    static constexpr bool kWholeBlock = false;
    template <int J0, int J1>
    static __m256i unsigned_sum(const __m256i wq[8], const int8_t* aq) {
        return _mm256_madd_epi16(unsigned_dot16<J0, J1>(wq, aq), _mm256_set1_epi16(1));
    }
    static __m256i prepare_signed(__m256i w) { return _mm256_abs_epi8(w); }
    template <int J0, int J1>
    static __m256i signed_sum(const __m256i wq[8], const __m256i wabs[8], const int8_t* aq, int32_t /*sum_a*/) {
        const __m256i ones = _mm256_set1_epi16(1);
        __m256i sum = _mm256_madd_epi16(_mm256_maddubs_epi16(wabs[J0], _mm256_sign_epi8(broadcast4(aq + 4 * J0), wq[J0])), ones);
        for (int j = J0 + 1; j < J1; ++j)
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(wabs[j], _mm256_sign_epi8(broadcast4(aq + 4 * j), wq[j])), ones));
        return sum;
    }
};

// VNNI: vpdpbusd multiplies 4 byte pairs and adds them to an int32 lane in one instruction, with
// no 16-bit intermediate, so a whole block is one chain. Signed quants go in as w + 128 (a flip of
// the top bit, once per block for all tokens) and 128·Σa comes off. MultiplyAdd::apply(acc, u8,
// s8) is the instruction in the encoding the including file is built for.
template <typename MultiplyAdd>
struct VnniDot {
    static constexpr bool kWholeBlock = true;
    template <int J0, int J1>
    static __m256i unsigned_sum(const __m256i wq[8], const int8_t* aq) {
        __m256i sum = _mm256_setzero_si256();
        for (int j = J0; j < J1; ++j) sum = MultiplyAdd::apply(sum, wq[j], broadcast4(aq + 4 * j));
        return sum;
    }
    static __m256i prepare_signed(__m256i w) { return _mm256_xor_si256(w, _mm256_set1_epi8(static_cast<char>(0x80))); }
    template <int J0, int J1>
    static __m256i signed_sum(const __m256i* /*wq*/, const __m256i biased[8], const int8_t* aq, int32_t sum_a) {
        return _mm256_sub_epi32(unsigned_sum<J0, J1>(biased, aq), _mm256_set1_epi32(128 * sum_a));
    }
};

// MXFP4's 16 E2M1 values (doubled) as signed bytes, in both 128-bit lanes for a byte shuffle.
inline __m256i mxfp4_table() {
    return _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12, 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
}

template <PackedLayout L>
inline void unpack_group_block(const uint8_t* block, __m256i wq[8]) {
    if constexpr (group_six_bits(L)) {   // 4-bit plane | 2-bit plane << 4, then q − 32
        const __m256i mask = _mm256_set1_epi8(0x0F), top = _mm256_set1_epi8(0x30), centre = _mm256_set1_epi8(32);
        const __m256i planes[2] = {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 128)),
                                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 160))};
        for (int k = 0; k < 4; ++k) {
            const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32 * k));
            wq[k] = _mm256_and_si256(packed, mask);
            wq[k + 4] = _mm256_and_si256(_mm256_srli_epi16(packed, 4), mask);
        }
        for (int j = 0; j < 8; ++j) {
            const __m256i h = planes[j / 4];   // element 4j + e's top bits at bits 2·(j % 4) of byte 4i + e
            const __m256i at4 = j % 4 == 0 ? _mm256_slli_epi16(h, 4) : j % 4 == 1 ? _mm256_slli_epi16(h, 2) : j % 4 == 2 ? h : _mm256_srli_epi16(h, 2);
            wq[j] = _mm256_sub_epi8(_mm256_or_si256(wq[j], _mm256_and_si256(at4, top)), centre);
        }
        return;
    }
    if constexpr (!group_nibbles(L) && !group_five_bits(L)) {
        for (int j = 0; j < 8; ++j) wq[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32 * j));
    } else {
        const __m256i mask = _mm256_set1_epi8(0x0F);
        for (int k = 0; k < 4; ++k) {
            const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32 * k));
            wq[k] = _mm256_and_si256(packed, mask);
            wq[k + 4] = _mm256_and_si256(_mm256_srli_epi16(packed, 4), mask);
        }
        if constexpr (group_five_bits(L)) {
            // Element 4j + e's fifth bit is bit j of the plane's byte 4i + e: moved to bit 4.
            const __m256i plane = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 128)), fifth = _mm256_set1_epi8(0x10);
            for (int j = 0; j < 8; ++j) {
                const __m256i at4 = j < 4 ? _mm256_slli_epi16(plane, 4 - j) : j == 4 ? plane : _mm256_srli_epi16(plane, j - 4);
                wq[j] = _mm256_or_si256(wq[j], _mm256_and_si256(at4, fifth));
            }
        }
        if constexpr (group_e8m0_scales(L)) {  // nibble → its value, −12..12
            const __m256i table = mxfp4_table();
            for (int j = 0; j < 8; ++j) wq[j] = _mm256_shuffle_epi8(table, wq[j]);
        }
    }
}

// Layouts whose quants are signed bytes (the policies' signed path).
template <PackedLayout L>
constexpr bool group_signed() { return L == PackedLayout::q8_0x8 || L == PackedLayout::q6_kx8 || L == PackedLayout::mxfp4x8; }

// 2^(e − 128) of 8 E8M0 bytes, as ggml's E8M0_TO_FP32_HALF (exponents under 2: subnormal).
inline __m256 e8m0_half_8(const uint8_t* at) {
    const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at)));
    const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
    const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
    return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, subnormal, _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e)));
}

// One token's block against the group's block: 8 int32 dot products, one per row (lane).
template <PackedLayout L, typename Dot>
inline __m256i group_block_dot(const __m256i wq[8], const __m256i wabs[8], const int8_t* aq, int32_t sum_a) {
    if constexpr (L == PackedLayout::q8_0x8 || L == PackedLayout::mxfp4x8) return Dot::template signed_sum<0, 8>(wq, wabs, aq, sum_a);
    else if constexpr (group_nibbles(L) || Dot::kWholeBlock) return Dot::template unsigned_sum<0, 8>(wq, aq);
    else return _mm256_add_epi32(Dot::template unsigned_sum<0, 4>(wq, aq), Dot::template unsigned_sum<4, 8>(wq, aq));
}

// q4_kx8, q5_kx8: 8 bytes (one per row) as floats; q6_kx8: 8 int8.
inline __m256 bytes_as_floats(const uint8_t* at) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at))));
}
inline __m256 int8s_as_floats(const uint8_t* at) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at))));
}
// The super-block factors for the 8 rows (q4_kx8, q5_kx8, q6_kx8): d (part 0) or dmin (part 1) as floats.
template <PackedLayout L>
inline __m256 group_super_factors(const uint8_t* block, int64_t b, int part) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(super_block_scales(L, block, b) + 16 * part)));
}

// The 8 rows' scales (part 0) or offsets (part 1) of a block; q4_kx8 and q5_kx8 form them from
// their byte sub-scales and mins and the super-block's d and dmin (super:
// group_super_factors(…, part)): d·sc and −(dmin·m), as ggml's dequantization forms them.
template <PackedLayout L>
inline __m256 group_scales(const uint8_t* block, int part, __m256 super = __m256()) {
    const uint8_t* at = block + group_quant_bytes(L) + part * group_scale_bytes(L);
    if constexpr (group_sub_mins(L)) {
        const __m256 product = _mm256_mul_ps(super, bytes_as_floats(at));
        return part == 0 ? product : _mm256_xor_ps(product, _mm256_set1_ps(-0.0f));
    }
    if constexpr (group_six_bits(L)) return _mm256_mul_ps(super, int8s_as_floats(at));   // d·sc of either half
    if constexpr (group_e8m0_scales(L)) return e8m0_half_8(at);
    else return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
}

// Group g (8 rows) × NT tokens from t0: out[k·8 + i] = row 8g+i · token t0+k. Per (row, token)
// lane the operations are the same whatever NT is, so results are batch-invariant: per block,
// acc += float(isum) · (d_w·d_a), then (types with offsets) acc += m_w·s_a, in block order.
template <PackedLayout L, typename Dot, int NT>
void group_tile(const PackedView& w, const ActivationView& a, int64_t g, int64_t t0, float* out) {
    constexpr int64_t block_bytes = group_block_bytes(L);
    const uint8_t* group = w.data + g * w.row_bytes;
    __m256 acc[NT];
    for (int k = 0; k < NT; ++k) acc[k] = _mm256_setzero_ps();
    __m256 super_d = _mm256_setzero_ps(), super_dmin = _mm256_setzero_ps();  // byte-scale layouts: this super-block's
    for (int64_t b = 0; b < w.n_blocks; ++b) {
        const uint8_t* block = group + group_block_offset(L, b);
        // Decode streams the groups once: fetch a few blocks ahead (hardware prefetch lags here).
        if constexpr (NT == 1)
            for (int64_t l = 0; l < block_bytes; l += 64) _mm_prefetch(reinterpret_cast<const char*>(block + 12 * block_bytes + l), _MM_HINT_T0);
        if constexpr (group_byte_scales(L))
            if (b % 8 == 0) {
                super_d = group_super_factors<L>(block, b, 0);
                if constexpr (group_sub_mins(L)) super_dmin = group_super_factors<L>(block, b, 1);
            }
        __m256i wq[8], wabs[8];
        unpack_group_block<L>(block, wq);
        if constexpr (group_signed<L>())
            for (int j = 0; j < 8; ++j) wabs[j] = Dot::prepare_signed(wq[j]);
        const __m256 dw = group_scales<L>(block, 0, super_d);
        __m256 mw = _mm256_setzero_ps();   // the offsets, once per block for every token
        if constexpr (group_offsets(L)) mw = group_scales<L>(block, 1, super_dmin);
        for (int k = 0; k < NT; ++k) {
            const int64_t at = (t0 + k) * a.block_stride + b;
            if constexpr (group_half_scales(L)) {  // a scale per 16 elements: two products per block
                const int8_t* aq = a.qs + (t0 + k) * a.n_in + b * 32;
                const __m256 da = _mm256_set1_ps(a.d[at]);
                const int16_t* half_sums = a.half_sum_q + 2 * at;
                acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(Dot::template signed_sum<0, 4>(wq, wabs, aq, half_sums[0])), _mm256_mul_ps(dw, da), acc[k]);
                acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(Dot::template signed_sum<4, 8>(wq, wabs, aq, half_sums[1])), _mm256_mul_ps(group_scales<L>(block, 1, super_d), da), acc[k]);
                continue;
            }
            __m256i isum = group_block_dot<L, Dot>(wq, wabs, a.qs + (t0 + k) * a.n_in + b * 32, static_cast<int32_t>(a.sum_q[at]));
            if constexpr (group_quant_bias(L) != 0)
                isum = _mm256_sub_epi32(isum, _mm256_set1_epi32(group_quant_bias(L) * static_cast<int32_t>(a.sum_q[at])));
            acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dw, _mm256_set1_ps(a.d[at])), acc[k]);
            if constexpr (group_offsets(L)) acc[k] = _mm256_fmadd_ps(mw, _mm256_set1_ps(a.s[at]), acc[k]);
        }
    }
    for (int k = 0; k < NT; ++k) _mm256_storeu_ps(out + k * 8, acc[k]);
}

// One group per tile (kGroups = 1): the 256-bit kernels.
template <PackedLayout L, typename Dot>
struct GroupTiles {
    static constexpr int kGroups = 1, kTokens = 4;
    template <int NT>
    static void tile(const PackedView& w, const ActivationView& a, int64_t g, int64_t t0, float* out) { group_tile<L, Dot, NT>(w, a, g, t0, out); }
};

// Rows [r0, r1) of any quantized row-group matrix through Tiles<L> (GroupTiles<L, Dot> or a
// wider kernel's own); the 2-bit groups go to gemm_crumbs_avx2.
template <template <PackedLayout> class Tiles>
void quant_group_rows(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    switch (w.layout) {
        case PackedLayout::q4_0x8: walk_groups<Tiles<PackedLayout::q4_0x8>>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::q4_1x8: walk_groups<Tiles<PackedLayout::q4_1x8>>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::q8_0x8: walk_groups<Tiles<PackedLayout::q8_0x8>>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::q5_0x8: walk_groups<Tiles<PackedLayout::q5_0x8>>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::q5_1x8: walk_groups<Tiles<PackedLayout::q5_1x8>>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::q4_kx8: walk_groups<Tiles<PackedLayout::q4_kx8>>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::q5_kx8: walk_groups<Tiles<PackedLayout::q5_kx8>>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::q6_kx8: walk_groups<Tiles<PackedLayout::q6_kx8>>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::mxfp4x8: walk_groups<Tiles<PackedLayout::mxfp4x8>>(w, a, r0, r1, y, ldy); break;
        case PackedLayout::q2_kx8: case PackedLayout::q3_kx8: gemm_crumbs_avx2(w, a, r0, r1, y, ldy); break;
        default: break;  // split-row layouts are the AVX-512 kernels'
    }
}

template <typename Dot>
struct TilesWith {
    template <PackedLayout L>
    using type = GroupTiles<L, Dot>;
};

}  // namespace
}  // namespace workbench
