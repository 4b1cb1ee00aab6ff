// Shared by the row-group kernel files (gemm_avx2.cpp, gemm_avx2_k2k3.cpp and, through
// gemm_quant_groups.h, the VNNI files): the int8 building blocks and the loop that walks groups ×
// token tiles. Everything here has internal linkage: each file that includes it is built with its
// own instruction-set flags and keeps its own copy, so the linker can never pick a VNNI or
// AVX-512 build of an inline function for code that runs on a plain AVX2 CPU.
#pragma once

#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/gemm_kernels.h"

namespace workbench {
namespace {  // internal linkage: see above

inline __m256i broadcast4(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
}

// Registers [j0, j1) of an unsigned block against one token, summed in 16 bits (the caller
// bounds the sum: quant · 2 · 127 · (J1 − J0) must stay under 32,768).
template <int J0, int J1>
inline __m256i unsigned_dot16(const __m256i wq[8], const int8_t* aq) {
    __m256i sum16 = _mm256_maddubs_epi16(wq[J0], broadcast4(aq + 4 * J0));
    for (int j = J0 + 1; j < J1; ++j) sum16 = _mm256_add_epi16(sum16, _mm256_maddubs_epi16(wq[j], broadcast4(aq + 4 * j)));
    return sum16;
}

// Tokens are processed in blocks small enough that a block's activations stay in L2 while every
// group of the chunk streams past; a group's weights stay in L1 while the block's tokens pass.
constexpr int64_t kQuantTokenBlock = 256;   // int8 activations: 256 × n_in bytes

// Rows [r0, r1) × every token, in tiles of Tiles::kGroups groups (8 rows each) × Tiles::kTokens
// tokens (4; more where a block's unpacking costs more than its products), then
// single tokens: Tiles::tile<NT>(w, a, g, t, out) writes groups g.. × NT tokens from t to
// out[k·8·kGroups + i]; where fewer than kGroups groups are left, Tiles::single<NT> (needed only
// when kGroups > 1) writes one group to out[k·8 + i].
template <typename Tiles>
void walk_groups(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    constexpr int kGroups = Tiles::kGroups, kTokens = Tiles::kTokens;
    alignas(64) float out[kTokens * 8 * kGroups];
    const int64_t g_end = (r1 + 7) / 8;
    for (int64_t tb = 0; tb < a.n_tokens; tb += kQuantTokenBlock) {
        const int64_t te = tb + kQuantTokenBlock < a.n_tokens ? tb + kQuantTokenBlock : a.n_tokens;
        for (int64_t g = r0 / 8; g < g_end; g += kGroups) {
            const bool whole = g + kGroups <= g_end;
            const int64_t rows = whole ? 8 * kGroups : 8;
            const int64_t lo = g * 8 > r0 ? g * 8 : r0, hi = g * 8 + rows < r1 ? g * 8 + rows : r1;
            auto emit = [&](int64_t t, int n) {
                for (int k = 0; k < n; ++k) {
                    float* dst = y + (t + k) * ldy + lo;
                    const float* src = out + k * rows + (lo - g * 8);
                    if (hi - lo == rows)  // not a libc call per group
                        for (int64_t i = 0; i < rows; i += 8) _mm256_storeu_ps(dst + i, _mm256_load_ps(src + i));
                    else std::memcpy(dst, src, static_cast<size_t>(hi - lo) * sizeof(float));
                }
            };
            int64_t t = tb;
            for (; t + kTokens <= te; t += kTokens) {
                if (kGroups == 1 || whole) Tiles::template tile<kTokens>(w, a, g, t, out);
                else if constexpr (kGroups > 1) Tiles::template single<kTokens>(w, a, g, t, out);
                emit(t, kTokens);
            }
            for (; t < te; ++t) {
                if (kGroups == 1 || whole) Tiles::template tile<1>(w, a, g, t, out);
                else if constexpr (kGroups > 1) Tiles::template single<1>(w, a, g, t, out);
                emit(t, 1);
            }
        }
    }
}

}  // namespace
}  // namespace workbench
