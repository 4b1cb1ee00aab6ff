// RoPE's rotation of one pair, shared by rope_rows and the KV append that rotates K on its way
// into the arenas, so both give the same bits: each product rounded before the sum (no fused
// multiply-add the compiler might choose differently in the two kernels).
#pragma once

#include <cstdint>

namespace workbench::cuda {

__device__ inline float rope_first(float u, float v, float c, float s) { return __fsub_rn(__fmul_rn(u, c), __fmul_rn(v, s)); }
__device__ inline float rope_second(float u, float v, float c, float s) { return __fadd_rn(__fmul_rn(u, s), __fmul_rn(v, c)); }

// Element d of head row x (features past n_rot unrotated) after RoPE at angle-table row t:
// pairs (2i, 2i+1), or (i, i + n_rot/2) for neox.
__device__ inline float rope_element(const float* x, int d, int32_t n_rot, bool neox, const float* cos, const float* sin, int64_t t) {
    if (d >= n_rot) return x[d];
    const int half = n_rot / 2;
    const bool first = neox ? d < half : d % 2 == 0;
    const int pair = neox ? (first ? d : d - half) : d / 2;
    const int partner = neox ? (first ? d + half : d - half) : d ^ 1;
    const float c = cos[t * half + pair], s = sin[t * half + pair];
    return first ? rope_first(x[d], x[partner], c, s) : rope_second(x[partner], x[d], c, s);
}

}  // namespace workbench::cuda
