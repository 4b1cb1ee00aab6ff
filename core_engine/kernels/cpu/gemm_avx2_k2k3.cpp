// AVX2 kernels for the 2-bit row groups (q2_kx8 from Q2_K, q3_kx8 from Q3_K; packed_matrix.h):
// quants unpacked to bytes in registers, integer dot products per 16-element half scaled by the
// integer sub-scales before one convert per block. Must match gemm_ref's crumb_block_dot.
#include <immintrin.h>

#include "kernels/cpu/gemm_avx2_groups.h"
#include "kernels/cpu/gemm_kernels.h"

namespace workbench {
namespace {

// The block's quants as 8 registers of unsigned bytes, register j holding elements 4j..4j+3 of
// each row: crumb s of plane h is register 4h + s. q3_kx8 stores Q3_K's q + 4 (0..7): its bit
// plane's bit j becomes bit 2 of register j. The 16-bit shifts carry bits across bytes, but only
// into positions the masks drop.
template <PackedLayout L>
inline void unpack_crumbs(const uint8_t* block, __m256i wq[8]) {
    const __m256i three = _mm256_set1_epi8(3);
    for (int h = 0; h < 2; ++h) {
        const __m256i plane = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32 * h));
        wq[4 * h] = _mm256_and_si256(plane, three);
        wq[4 * h + 1] = _mm256_and_si256(_mm256_srli_epi16(plane, 2), three);
        wq[4 * h + 2] = _mm256_and_si256(_mm256_srli_epi16(plane, 4), three);
        wq[4 * h + 3] = _mm256_and_si256(_mm256_srli_epi16(plane, 6), three);
    }
    if constexpr (L == PackedLayout::q3_kx8) {
        const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 64));
        const __m256i four = _mm256_set1_epi8(4);
        wq[0] = _mm256_or_si256(wq[0], _mm256_and_si256(_mm256_slli_epi16(bits, 2), four));
        wq[1] = _mm256_or_si256(wq[1], _mm256_and_si256(_mm256_slli_epi16(bits, 1), four));
        wq[2] = _mm256_or_si256(wq[2], _mm256_and_si256(bits, four));
        wq[3] = _mm256_or_si256(wq[3], _mm256_and_si256(_mm256_srli_epi16(bits, 1), four));
        wq[4] = _mm256_or_si256(wq[4], _mm256_and_si256(_mm256_srli_epi16(bits, 2), four));
        wq[5] = _mm256_or_si256(wq[5], _mm256_and_si256(_mm256_srli_epi16(bits, 3), four));
        wq[6] = _mm256_or_si256(wq[6], _mm256_and_si256(_mm256_srli_epi16(bits, 4), four));
        wq[7] = _mm256_or_si256(wq[7], _mm256_and_si256(_mm256_srli_epi16(bits, 5), four));
    }
}

// Group g (8 rows) × NT tokens from t0, out[k·8 + i] as gemm_avx2.cpp's group_tile. Per block
// and (row, token) lane: isum = Σ_h sc_h · Σ_{half h} q·a in int32 (16-bit partial sums: at most
// 4 · 2 · 7 · 127 = 7,112), q3_kx8 takes its −4 off as 4 · Σ_h sc_h · Σa_h, then acc +=
// float(isum) · (d·d_a); q2_kx8 subtracts float(Σ_h m_h · Σa_h) · (dmin·d_a). The same
// operations whatever NT is, so results are batch-invariant.
template <PackedLayout L, int NT>
void crumb_tile(const PackedView& w, const ActivationView& a, int64_t g, int64_t t0, float* out) {
    constexpr int64_t block_bytes = group_block_bytes(L);
    constexpr int64_t scales_at = group_quant_bytes(L);
    const uint8_t* group = w.data + g * w.row_bytes;
    __m256 acc[NT];
    for (int k = 0; k < NT; ++k) acc[k] = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < w.n_blocks / 8; ++sb) {
        const uint8_t* super = group + sb * super_block_bytes(L);
        const uint8_t* super_scales = super + 8 * block_bytes;
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(super_scales)));
        __m256 dmin = _mm256_setzero_ps();
        if constexpr (L == PackedLayout::q2_kx8) dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(super_scales + 16)));
        for (int64_t sub = 0; sub < 8; ++sub) {
            const int64_t b = sb * 8 + sub;
            const uint8_t* block = super + sub * block_bytes;
            if constexpr (NT == 1)  // decode streams the groups once (see group_tile)
                for (int64_t l = 0; l < block_bytes; l += 64) _mm_prefetch(reinterpret_cast<const char*>(block + 12 * block_bytes + l), _MM_HINT_T0);
            __m256i wq[8];
            unpack_crumbs<L>(block, wq);
            // Byte 2i + h of the sub-scales → 16-bit lane pair i: (half 0, half 1) of row i.
            const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + scales_at));
            __m256i scale_pairs, min_pairs = _mm256_setzero_si256();
            if constexpr (L == PackedLayout::q2_kx8) {
                const __m256i bytes = _mm256_cvtepu8_epi16(raw);
                scale_pairs = _mm256_and_si256(bytes, _mm256_set1_epi16(0x0F));
                min_pairs = _mm256_srli_epi16(bytes, 4);
            } else {
                scale_pairs = _mm256_cvtepi8_epi16(raw);
            }
            // Each row's half-0 (half-1) scale in both 16-bit lanes of its 32-bit lane, for madd.
            const __m256i scale_first = _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(scale_pairs, _MM_SHUFFLE(2, 2, 0, 0)), _MM_SHUFFLE(2, 2, 0, 0));
            const __m256i scale_second = _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(scale_pairs, _MM_SHUFFLE(3, 3, 1, 1)), _MM_SHUFFLE(3, 3, 1, 1));
            for (int k = 0; k < NT; ++k) {
                const int64_t at = (t0 + k) * a.block_stride + b;
                const int8_t* aq = a.qs + (t0 + k) * a.n_in + b * 32;
                __m256i isum = _mm256_add_epi32(_mm256_madd_epi16(unsigned_dot16<0, 4>(wq, aq), scale_first),
                                                _mm256_madd_epi16(unsigned_dot16<4, 8>(wq, aq), scale_second));
                // The token's two half sums as a 16-bit pair in every 32-bit lane.
                const __m256i half_sums = broadcast4(reinterpret_cast<const int8_t*>(a.half_sum_q + 2 * at));
                if constexpr (L == PackedLayout::q3_kx8) isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(_mm256_madd_epi16(scale_pairs, half_sums), 2));
                const __m256 da = _mm256_set1_ps(a.d[at]);
                acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dw, da), acc[k]);
                if constexpr (L == PackedLayout::q2_kx8)
                    acc[k] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(min_pairs, half_sums)), _mm256_mul_ps(dmin, da), acc[k]);
            }
        }
    }
    for (int k = 0; k < NT; ++k) _mm256_storeu_ps(out + k * 8, acc[k]);
}

template <PackedLayout L>
struct CrumbTiles {
    static constexpr int kGroups = 1, kTokens = 4;
    template <int NT>
    static void tile(const PackedView& w, const ActivationView& a, int64_t g, int64_t t0, float* out) { crumb_tile<L, NT>(w, a, g, t0, out); }
};

}  // namespace

void gemm_crumbs_avx2(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    if (w.layout == PackedLayout::q2_kx8) walk_groups<CrumbTiles<PackedLayout::q2_kx8>>(w, a, r0, r1, y, ldy);
    else if (w.layout == PackedLayout::q3_kx8) walk_groups<CrumbTiles<PackedLayout::q3_kx8>>(w, a, r0, r1, y, ldy);
}

}  // namespace workbench
