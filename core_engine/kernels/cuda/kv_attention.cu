// One warp per (query row, head, split of its keys): 32 keys at a time, a lane scoring one key
// (from the arenas or from host-built rows, plus the span's bias) against the query held in
// shared memory, the warp's running max and sum rescaled as in
// online softmax, then each key's value added across the lanes' dimensions. The merge kernel
// combines a query's splits by their maxima (log-sum-exp), so the result does not depend on how
// the keys were split beyond rounding.
#include "kernels/cuda/kv_attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <string>

#include "kernels/cuda/cuda_status.h"

namespace workbench::cuda {
namespace {

constexpr int kMaxHeadDim = 256;
constexpr int kDimsPerLane = kMaxHeadDim / 32;
constexpr int kKeysPerSplit = 256;
constexpr unsigned kFull = 0xffffffffu;

__device__ inline float q8_scale(const uint8_t* b) {
    return __half2float(__ushort_as_half(static_cast<uint16_t>(b[0] | (b[1] << 8))));
}

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
            return q8_scale(b) * static_cast<float>(nibble - 8);
        }
        case DeviceKvType::fp8: {
            const uint8_t* b = row + (d / 32) * 34;
            return q8_scale(b) * e4m3_value(b[2 + d % 32]);
        }
        default: {
            const uint8_t* b = row + (d / 32) * 34;
            return q8_scale(b) * static_cast<float>(static_cast<int8_t>(b[2 + d % 32]));
        }
    }
}

__device__ inline float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFull, v, o));
    return v;
}

__device__ inline float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
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
           kvh * (is_v ? L.v_row_bytes : L.k_row_bytes);
}

// One warp per (row, K or V, KV head): the row encoded into its slot.
__global__ void append_kernel(const float* __restrict__ k, const float* __restrict__ v, const int32_t* __restrict__ slots,
                              DeviceKvLayout L, uint8_t* k_arena, uint8_t* v_arena) {
    const int lane = threadIdx.x;
    const int64_t item = blockIdx.x;
    const int head = static_cast<int>(item % L.n_kv_heads);
    const bool is_v = (item / L.n_kv_heads) % 2 == 1;
    const int64_t t = item / (2 * L.n_kv_heads);
    const int32_t at = slots[t];
    if (at < 0) return;
    const int hd = L.head_dim;
    const float* x = (is_v ? v : k) + (t * L.n_kv_heads + head) * hd;
    const DeviceKvType type = is_v ? L.v_type : L.k_type;
    uint8_t* row = (is_v ? v_arena : k_arena) + (at / L.block_tokens) * (is_v ? L.v_block_stride : L.k_block_stride) +
                   (at % L.block_tokens) * (is_v ? L.v_token_stride : L.k_token_stride) + head * (is_v ? L.v_row_bytes : L.k_row_bytes);
    if (type == DeviceKvType::q8_0) {
        // As the CPU's reference: d = amax / 127, q = round(x / d), d stored as f16.
        for (int b0 = 0; b0 < hd; b0 += 32) {
            const float value = x[b0 + lane];
            const float amax = warp_max(fabsf(value));
            const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
            uint8_t* blk = row + (b0 / 32) * 34;
            if (lane == 0) {
                const uint16_t bits = __half_as_ushort(__float2half_rn(d));
                blk[0] = static_cast<uint8_t>(bits & 0xff);
                blk[1] = static_cast<uint8_t>(bits >> 8);
            }
            blk[2 + lane] = static_cast<uint8_t>(static_cast<int8_t>(roundf(value * id)));
        }
        return;
    }
    for (int d = lane; d < hd; d += 32) {
        if (type == DeviceKvType::f32) reinterpret_cast<float*>(row)[d] = x[d];
        else if (type == DeviceKvType::f16) reinterpret_cast<__half*>(row)[d] = __float2half_rn(x[d]);
        else reinterpret_cast<__nv_bfloat16*>(row)[d] = __float2bfloat16_rn(x[d]);
    }
}

// Partial results: per (query, split) the max m, the sum l and the weighted values, hd + 2 floats.
__global__ void attend_split_kernel(const float* __restrict__ q, int32_t n_head, float scale, DeviceKvPlan plan, DeviceKvLayout L,
                                    const uint8_t* __restrict__ k_arena, const uint8_t* __restrict__ v_arena, int32_t keys_per_split,
                                    int32_t n_splits, float* __restrict__ partial) {
    __shared__ float qs[kMaxHeadDim];
    const int lane = threadIdx.x;
    const int64_t query = blockIdx.x;   // row · n_head + head
    const int32_t split = blockIdx.y;
    const int hd = L.head_dim;
    const int64_t t = query / n_head;
    const int32_t h = static_cast<int32_t>(query % n_head), kvh = h / (n_head / L.n_kv_heads);
    for (int d = lane; d < hd; d += 32) qs[d] = q[query * hd + d];
    __syncwarp();
    const int64_t list = plan.per_kv_head ? t * L.n_kv_heads + kvh : t;
    const int64_t first_key = static_cast<int64_t>(split) * keys_per_split, last_key = first_key + keys_per_split;
    float m = -INFINITY, l = 0.0f, acc[kDimsPerLane];
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) acc[i] = 0.0f;
    int64_t base = 0;   // keys of the list before this span
    for (int32_t s = plan.offsets[list]; s < plan.offsets[list + 1]; ++s) {
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
            const float m_new = fmaxf(m, warp_max(score));
            const float p = valid ? expf(score - m_new) : 0.0f;
            const float correction = expf(m - m_new);   // 0 while m is still −∞
            l = l * correction + warp_sum(p);
#pragma unroll
            for (int i = 0; i < kDimsPerLane; ++i) acc[i] *= correction;
            const int n_valid = hi - c < 32 ? static_cast<int>(hi - c) : 32;
            for (int j = 0; j < n_valid; ++j) {
                const float pj = __shfl_sync(kFull, p, j);
                const int32_t ej = __shfl_sync(kFull, entry, j);
                const uint8_t* vr = kv_row(plan, sp, L, true, v_arena, ej, kvh);
#pragma unroll
                for (int i = 0; i < kDimsPerLane; ++i) {
                    const int d = lane + 32 * i;
                    if (d < hd) acc[i] = fmaf(pj, kv_element(v_type, vr, d), acc[i]);
                }
            }
            m = m_new;
        }
        base += len;
    }
    float* out = partial + (query * n_splits + split) * (hd + 2);
    if (lane == 0) {
        out[0] = m;
        out[1] = l;
    }
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) {
        const int d = lane + 32 * i;
        if (d < hd) out[2 + d] = acc[i];
    }
}

__global__ void merge_splits_kernel(const float* __restrict__ partial, int32_t n_splits, int32_t hd, float* __restrict__ out) {
    const int64_t query = blockIdx.x;
    const float* p = partial + query * n_splits * (hd + 2);
    float m = -INFINITY;
    for (int s = 0; s < n_splits; ++s)
        if (p[s * (hd + 2) + 1] > 0.0f) m = fmaxf(m, p[s * (hd + 2)]);
    float l = 0.0f;
    for (int s = 0; s < n_splits; ++s)
        if (p[s * (hd + 2) + 1] > 0.0f) l += p[s * (hd + 2) + 1] * expf(p[s * (hd + 2)] - m);
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
        float sum = 0.0f;
        for (int s = 0; s < n_splits; ++s)
            if (p[s * (hd + 2) + 1] > 0.0f) sum += p[s * (hd + 2) + 2 + d] * expf(p[s * (hd + 2)] - m);
        out[query * hd + d] = l > 0.0f ? sum / l : 0.0f;   // an empty list reads nothing: zeros, as the CPU
    }
}

// Splits of a query's keys: enough to fill the device for a few decode rows, few for a prompt
// (its rows already fill it, and every split costs scratch).
int32_t split_count(int64_t n_rows, int32_t n_head, int32_t max_keys) {
    int32_t splits = (max_keys + kKeysPerSplit - 1) / kKeysPerSplit;
    const int32_t cap = n_rows * n_head >= 1024 ? 4 : 32;
    if (splits > cap) splits = cap;
    return splits < 1 ? 1 : splits;
}

}  // namespace

Status kv_append(const float* k, const float* v, const int32_t* slots, int64_t n, const DeviceKvLayout& layout, uint8_t* k_arena,
                 uint8_t* v_arena, cudaStream_t stream) {
    if (n <= 0) return Status::ok_status();
    for (const DeviceKvType type : {layout.k_type, layout.v_type})
        if (type == DeviceKvType::q4_0 || type == DeviceKvType::fp8)
            return error(StatusCode::unsupported, "the device writes KV rows in f32, f16, bf16 and q8_0 only");
    const int64_t items = n * 2 * layout.n_kv_heads;
    append_kernel<<<static_cast<unsigned>(items), 32, 0, stream>>>(k, v, slots, layout, k_arena, v_arena);
    return check_launch("KV append launch");
}

size_t attend_kv_scratch_bytes(int64_t n_rows, int32_t n_head, int32_t head_dim, int32_t max_keys) {
    return static_cast<size_t>(n_rows * n_head) * static_cast<size_t>(split_count(n_rows, n_head, max_keys)) *
           static_cast<size_t>(head_dim + 2) * sizeof(float);
}

Status attend_kv(const float* q, int64_t n_rows, int32_t n_head, float scale, const DeviceKvPlan& plan, const DeviceKvLayout& layout,
                 const uint8_t* k_arena, const uint8_t* v_arena, float* scratch, float* out, cudaStream_t stream) {
    if (layout.head_dim > kMaxHeadDim)
        return error(StatusCode::unsupported, "the CUDA attention kernel takes heads of at most " + std::to_string(kMaxHeadDim) + " dimensions");
    if (n_rows <= 0) return Status::ok_status();
    const int32_t splits = split_count(n_rows, n_head, plan.max_keys);
    const int32_t keys_per_split = (plan.max_keys + splits - 1) / splits > 0 ? (plan.max_keys + splits - 1) / splits : 1;
    const dim3 grid(static_cast<unsigned>(n_rows * n_head), static_cast<unsigned>(splits));
    attend_split_kernel<<<grid, 32, 0, stream>>>(q, n_head, scale, plan, layout, k_arena, v_arena, keys_per_split, splits, scratch);
    WB_RETURN_IF_ERROR(check_launch("attention launch"));
    merge_splits_kernel<<<static_cast<unsigned>(n_rows * n_head), 64, 0, stream>>>(scratch, splits, layout.head_dim, out);
    return check_launch("attention merge launch");
}

}  // namespace workbench::cuda
