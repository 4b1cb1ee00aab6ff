// The f16x8/bf16x8 row-group kernels (packed_matrix.h) and their walk over rows × tokens, shared
// by gemm_avx2.cpp (256-bit tiles) and gemm_avx512_groups.cpp (two groups per 512-bit register).
// Internal linkage throughout (see gemm_avx2_groups.h): include it only from a kernel file.
#pragma once

#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/gemm_kernels.h"

namespace workbench {
namespace {  // internal linkage: each kernel file keeps its own copy

// f32 activations: 64 × n_in × 4 bytes stay in L2 while rows stream past (see kQuantTokenBlock).
constexpr int64_t kTokenBlock = 64;

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

// NG groups from g × tokens [t, t + n), n ≤ 6, through Tiles::tile<L, NG, NT>.
template <PackedLayout L, typename Tiles, int NG>
void f16_group_tokens(const PackedView& w, const float* x, int64_t g, int64_t t, int64_t n, float* out) {
    switch (n) {
        case 6: Tiles::template tile<L, NG, 6>(w, x, g, t, out); break;
        case 5: Tiles::template tile<L, NG, 5>(w, x, g, t, out); break;
        case 4: Tiles::template tile<L, NG, 4>(w, x, g, t, out); break;
        case 3: Tiles::template tile<L, NG, 3>(w, x, g, t, out); break;
        case 2: Tiles::template tile<L, NG, 2>(w, x, g, t, out); break;
        default: Tiles::template tile<L, NG, 1>(w, x, g, t, out); break;
    }
}

// Rows [r0, r1) × every token. Tiles::tile<L, NG, NT> writes NG groups × NT tokens to
// out[t·NG·8 + g·8 + i] (f16_group_tile, or a wider kernel's tile with the same operations per
// lane); a prompt walks Tiles::kPromptGroups groups at a time, then 2, then 1.
template <PackedLayout L, typename Tiles>
void f16_group_rows(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    constexpr int kPrompt = Tiles::kPromptGroups;
    alignas(64) float out[6 * 8 * kPrompt > 64 ? 6 * 8 * kPrompt : 64];
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
            Tiles::template tile<L, 8, 1>(w, x, g, 0, out);
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
        for (int64_t g = r0 / 8; g < g_end;) {
            const int ng = g + kPrompt <= g_end ? kPrompt : g + 2 <= g_end ? 2 : 1;
            for (int64_t t = tb; t < te; t += 6) {
                const int64_t n = te - t < 6 ? te - t : 6;
                if (ng == kPrompt) f16_group_tokens<L, Tiles, kPrompt>(w, x, g, t, n, out);
                else if (ng == 2) f16_group_tokens<L, Tiles, 2>(w, x, g, t, n, out);
                else f16_group_tokens<L, Tiles, 1>(w, x, g, t, n, out);
                emit(g, ng, t, n);
            }
            g += ng;
        }
    }
}

}  // namespace
}  // namespace workbench
