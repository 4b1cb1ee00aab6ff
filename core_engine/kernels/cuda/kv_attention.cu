// The KV append kernel and the split-key attention: one warp per (query row, head, split of its
// keys), each split's online softmax (kv_read.cuh) over 32 keys at a time, read from the arenas
// or from host-built rows; the merge kernel combines a query's splits by their maxima
// (log-sum-exp), so the result does not depend on how the keys were split beyond rounding. A
// prompt's plan with tiles goes to attention_tiles.cu instead.
#include "kernels/cuda/kv_attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <string>

#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/kv_read.cuh"
#include "kernels/cuda/rope_rotate.cuh"

namespace workbench::cuda {
namespace {

constexpr int kMaxHeadDim = 256;
constexpr int kDimsPerLane = kMaxHeadDim / 32;
constexpr int kKeysPerSplit = 256;

// One warp per (row, K or V, KV head): the row encoded into its slot, K rotated by RoPE on the
// way when `rope` has angles.
__global__ void append_kernel(const float* __restrict__ k, const float* __restrict__ v, const int32_t* __restrict__ slots,
                              DeviceKvLayout L, KeyRope rope, uint8_t* k_arena, uint8_t* v_arena) {
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
    const bool rotate = !is_v && rope.cos != nullptr;
    const auto element = [&](int d) { return rotate ? rope_element(x, d, rope.n_rot, rope.neox, rope.cos, rope.sin, t) : x[d]; };
    uint8_t* row = (is_v ? v_arena : k_arena) + (at / L.block_tokens) * (is_v ? L.v_block_stride : L.k_block_stride) +
                   (at % L.block_tokens) * (is_v ? L.v_token_stride : L.k_token_stride) + head * (is_v ? L.v_head_stride : L.k_head_stride);
    if (type == DeviceKvType::q8_0) {
        // As the CPU's reference: d = amax / 127, q = round(x / d), d stored as f16.
        for (int b0 = 0; b0 < hd; b0 += 32) {
            const float value = element(b0 + lane);
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
        const float value = element(d);
        if (type == DeviceKvType::f32) reinterpret_cast<float*>(row)[d] = value;
        else if (type == DeviceKvType::f16) reinterpret_cast<__half*>(row)[d] = __float2half_rn(value);
        else reinterpret_cast<__nv_bfloat16*>(row)[d] = __float2bfloat16_rn(value);
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
    for (int d = lane; d < hd; d += 32) qs[d] = query_element(q[query * hd + d]);
    __syncwarp();
    const int64_t list = plan.per_kv_head ? t * L.n_kv_heads + kvh : t;
    const int64_t first_key = static_cast<int64_t>(split) * keys_per_split;
    SoftmaxState<kDimsPerLane> st;
    attend_keys(qs, scale, plan, L, k_arena, v_arena, list, kvh, first_key, first_key + keys_per_split, st);
    float* out = partial + (query * n_splits + split) * (hd + 2);
    if (lane == 0) {
        out[0] = st.m;
        out[1] = st.l;
    }
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) {
        const int d = lane + 32 * i;
        if (d < hd) out[2 + d] = st.acc[i];
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
                 uint8_t* v_arena, cudaStream_t stream, const KeyRope& rope) {
    if (n <= 0) return Status::ok_status();
    for (const DeviceKvType type : {layout.k_type, layout.v_type})
        if (type == DeviceKvType::q4_0 || type == DeviceKvType::fp8 || type == DeviceKvType::q2_0)
            return error(StatusCode::unsupported, "the device writes KV rows in f32, f16, bf16 and q8_0 only");
    const int64_t items = n * 2 * layout.n_kv_heads;
    append_kernel<<<static_cast<unsigned>(items), 32, 0, stream>>>(k, v, slots, layout, rope, k_arena, v_arena);
    return check_launch("KV append launch");
}

size_t attend_kv_scratch_bytes(int64_t n_rows, int32_t n_head, int32_t head_dim, int32_t max_keys, bool tiles) {
    if (tiles && head_dim <= kAttendTileMaxHeadDim) return 0;
    return static_cast<size_t>(n_rows * n_head) * static_cast<size_t>(split_count(n_rows, n_head, max_keys)) *
           static_cast<size_t>(head_dim + 2) * sizeof(float);
}

Status attend_kv(const float* q, int64_t n_rows, int32_t n_head, float scale, const DeviceKvPlan& plan, const DeviceKvLayout& layout,
                 const uint8_t* k_arena, const uint8_t* v_arena, float* scratch, float* out, cudaStream_t stream) {
    if (layout.head_dim > kMaxHeadDim)
        return error(StatusCode::unsupported, "the CUDA attention kernel takes heads of at most " + std::to_string(kMaxHeadDim) + " dimensions");
    if (n_rows <= 0) return Status::ok_status();
    if (plan.tile_shared != nullptr && layout.head_dim <= kAttendTileMaxHeadDim)
        return attend_tiles(q, n_rows, n_head, scale, plan, layout, k_arena, v_arena, out, stream);
    const int32_t splits = split_count(n_rows, n_head, plan.max_keys);
    const int32_t keys_per_split = (plan.max_keys + splits - 1) / splits > 0 ? (plan.max_keys + splits - 1) / splits : 1;
    const dim3 grid(static_cast<unsigned>(n_rows * n_head), static_cast<unsigned>(splits));
    attend_split_kernel<<<grid, 32, 0, stream>>>(q, n_head, scale, plan, layout, k_arena, v_arena, keys_per_split, splits, scratch);
    WB_RETURN_IF_ERROR(check_launch("attention launch"));
    merge_splits_kernel<<<static_cast<unsigned>(n_rows * n_head), 64, 0, stream>>>(scratch, splits, layout.head_dim, out);
    return check_launch("attention merge launch");
}

}  // namespace workbench::cuda
