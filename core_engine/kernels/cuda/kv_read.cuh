// Device helpers both attention kernels read the paged KV cache with (kv_attention.cu's split-key
// kernel, attention_tiles.cu's prompt kernel): an element of a stored row in each KV type, where
// a span's entry keeps its row, and one query's online softmax — a warp folds up to 32 keys at a
// time (lane j scores key j; the running max and sum rescaled; each key's value added across the
// lanes' dimensions).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/kv_attention.h"

namespace workbench::cuda {

constexpr unsigned kFullWarp = 0xffffffffu;

__device__ inline float f16_scale(const uint8_t* b) { return __half2float(__ushort_as_half(static_cast<uint16_t>(b[0] | (b[1] << 8)))); }

// e4m3 (bias 7, no infinities, 0x7f/0xff NaN): (8 + m) · 2^(e − 10), or m · 2^−9 when e is 0.
__device__ inline float e4m3_value(uint8_t b) {
    const int e = (b >> 3) & 0xf, m = b & 7;
    if (e == 0xf && m == 7) return __int_as_float(0x7fc00000);
    const float v = ldexpf(static_cast<float>(e != 0 ? 8 + m : m), (e != 0 ? e : 1) - 10);
    return (b & 0x80) ? -v : v;
}

// Element d of a stored row (kv_dtype.h's layouts).
__device__ inline float kv_element(DeviceKvType type, const uint8_t* row, int d) {
    switch (type) {
        case DeviceKvType::f32: return reinterpret_cast<const float*>(row)[d];
        case DeviceKvType::f16: return __half2float(reinterpret_cast<const __half*>(row)[d]);
        case DeviceKvType::bf16: return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(row)[d]);
        case DeviceKvType::q4_0: {
            const uint8_t* b = row + (d / 32) * 18;
            const int i = d % 32;
            const int nibble = i < 16 ? (b[2 + i] & 0x0f) : (b[2 + i - 16] >> 4);
            return f16_scale(b) * static_cast<float>(nibble - 8);
        }
        case DeviceKvType::fp8: {
            const uint8_t* b = row + (d / 32) * 34;
            return f16_scale(b) * e4m3_value(b[2 + d % 32]);
        }
        case DeviceKvType::q2_0: {
            const uint8_t* b = row + (d / 32) * 10;
            const int i = d % 32;
            return f16_scale(b) * (static_cast<float>((b[2 + i % 8] >> (2 * (i / 8))) & 3) - 1.5f);
        }
        default: {
            const uint8_t* b = row + (d / 32) * 34;
            return f16_scale(b) * static_cast<float>(static_cast<int8_t>(b[2 + d % 32]));
        }
    }
}

// A query element as the kernels score with it: rounded to f16, as the CPU's attention kernel
// (and llama.cpp's) rounds Q before its products with the cache.
__device__ inline float query_element(float q) { return __half2float(__float2half_rn(q)); }

__device__ inline float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullWarp, v, o));
    return v;
}

__device__ inline float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullWarp, v, o);
    return v;
}

// Where `entry` of a span keeps its K (or V) row of KV head kvh: the arenas through the span's
// block table, or the host-built f32 rows uploaded with the plan.
__device__ inline const uint8_t* kv_row(const DeviceKvPlan& plan, const DeviceKvSpan& sp, const DeviceKvLayout& L, bool is_v,
                                        const uint8_t* arena, int32_t entry, int32_t kvh) {
    if (sp.flat_k >= 0)
        return reinterpret_cast<const uint8_t*>(plan.flat + (is_v ? sp.flat_v : sp.flat_k) +
                                                (static_cast<int64_t>(entry) * L.n_kv_heads + kvh) * L.head_dim);
    const int32_t bt = L.block_tokens;
    const int64_t block = plan.tables[sp.table_offset + entry / bt - sp.begin / bt];
    return arena + block * (is_v ? L.v_block_stride : L.k_block_stride) + (entry % bt) * (is_v ? L.v_token_stride : L.k_token_stride) +
           kvh * (is_v ? L.v_head_stride : L.k_head_stride);
}

// One query's online softmax in a warp: the running max and sum, and this lane's value
// dimensions (lane + 32 · i).
template <int kDims>
struct SoftmaxState {
    float m = -INFINITY, l = 0.0f, acc[kDims] = {};
};

// Folds up to 32 keys into `st`: lane j scored key j (`valid` false past the last), and
// value_row(j) is key j's value row in `v_type` (every lane calls it for every j, in order).
template <int kDims, typename ValueRow>
__device__ inline void fold_keys(float score, bool valid, int n_valid, int hd, DeviceKvType v_type, ValueRow value_row,
                                 SoftmaxState<kDims>& st) {
    const int lane = threadIdx.x % 32;
    const float m_new = fmaxf(st.m, warp_max(score));
    const float p = valid ? expf(score - m_new) : 0.0f;
    const float correction = expf(st.m - m_new);   // 0 while m is still −∞
    st.l = st.l * correction + warp_sum(p);
#pragma unroll
    for (int i = 0; i < kDims; ++i) st.acc[i] *= correction;
    for (int j = 0; j < n_valid; ++j) {
        const float pj = __shfl_sync(kFullWarp, p, j);
        const uint8_t* vr = value_row(j);
#pragma unroll
        for (int i = 0; i < kDims; ++i) {
            const int d = lane + 32 * i;
            if (d < hd) st.acc[i] = fmaf(pj, kv_element(v_type, vr, d), st.acc[i]);
        }
    }
    st.m = m_new;
}

// Keys [first_key, last_key) of `list` (counted from the list's start, across its spans) read
// from global memory and folded into `st`; qs: the query (shared memory).
template <int kDims>
__device__ inline void attend_keys(const float* qs, float scale, const DeviceKvPlan& plan, const DeviceKvLayout& L, const uint8_t* k_arena,
                                   const uint8_t* v_arena, int64_t list, int32_t kvh, int64_t first_key, int64_t last_key,
                                   SoftmaxState<kDims>& st) {
    const int lane = threadIdx.x % 32, hd = L.head_dim;
    int64_t base = 0;   // keys of the list before this span
    for (int32_t s = plan.offsets[list]; s < plan.offsets[list + 1] && base < last_key; ++s) {
        const DeviceKvSpan sp = plan.spans[s];
        const int64_t len = sp.end - sp.begin;
        const bool flat = sp.flat_k >= 0;
        const DeviceKvType k_type = flat ? DeviceKvType::f32 : L.k_type, v_type = flat ? DeviceKvType::f32 : L.v_type;
        const int64_t lo = first_key > base ? first_key : base, hi = last_key < base + len ? last_key : base + len;
        for (int64_t c = lo; c < hi; c += 32) {
            const int64_t key = c + lane;
            const bool valid = key < hi;
            const int32_t entry = sp.begin + static_cast<int32_t>((valid ? key : c) - base);
            float score = -INFINITY;
            if (valid) {
                const uint8_t* kr = kv_row(plan, sp, L, false, k_arena, entry, kvh);
                float dot = 0.0f;
                for (int d = 0; d < hd; ++d) dot = fmaf(qs[d], kv_element(k_type, kr, d), dot);
                score = dot * scale + sp.bias;
            }
            const int n_valid = hi - c < 32 ? static_cast<int>(hi - c) : 32;
            fold_keys(score, valid, n_valid, hd, v_type,
                      [&](int j) { return kv_row(plan, sp, L, true, v_arena, __shfl_sync(kFullWarp, entry, j), kvh); }, st);
        }
        base += len;
    }
}

// The query's result: the weighted values over the sum, or zeros for a list that read nothing.
template <int kDims>
__device__ inline void store_result(const SoftmaxState<kDims>& st, int hd, float* out) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < kDims; ++i) {
        const int d = lane + 32 * i;
        if (d < hd) out[d] = st.l > 0.0f ? st.acc[i] / st.l : 0.0f;
    }
}

}  // namespace workbench::cuda
