// The prompt's attention kernel. A prompt's rows mostly read the same keys first (row t of a
// sequence reads [0, t]; a tile of 16 consecutive rows shares [0, t0]): read by one warp per row
// as in the split-key kernel, those keys would come from global memory once per row. Here a
// block of 4 warps takes a tile of 16 rows for one query head: it stages the tile's shared keys
// (the plan's tile_shared, counted on the host) 32 at a time in shared memory, decoded to f32,
// and each warp folds them into its 4 rows' online softmax (kv_read.cuh); then each warp reads
// the rest of each of its rows' lists (the causal tail, a window's own end) straight from
// global memory. No splits, so no merge: each row's result is written at the end.
#include <cuda_runtime_api.h>

#include <cmath>

#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/kv_attention.h"
#include "kernels/cuda/kv_read.cuh"

namespace workbench::cuda {
namespace {

constexpr int kWarps = 4, kRowsPerWarp = kAttendTileRows / kWarps, kChunk = 32;
constexpr int kDims = kAttendTileMaxHeadDim / 32;

__global__ void attend_tile_kernel(const float* __restrict__ q, int64_t n_rows, int32_t n_head, float scale, DeviceKvPlan plan,
                                   DeviceKvLayout L, const uint8_t* __restrict__ k_arena, const uint8_t* __restrict__ v_arena,
                                   float* __restrict__ out) {
    __shared__ float qs[kAttendTileRows][kAttendTileMaxHeadDim];
    __shared__ float ks[kChunk][kAttendTileMaxHeadDim + 1];   // padded: lane j reads row j without bank conflicts
    __shared__ float vs[kChunk][kAttendTileMaxHeadDim];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t tile = blockIdx.x, r0 = tile * kAttendTileRows;
    const int32_t h = blockIdx.y, kvh = h / (n_head / L.n_kv_heads);
    const int hd = L.head_dim;
    for (int i = threadIdx.x; i < kAttendTileRows * hd; i += blockDim.x) {
        const int r = i / hd, d = i % hd;
        qs[r][d] = r0 + r < n_rows ? query_element(q[((r0 + r) * n_head + h) * hd + d]) : 0.0f;
    }
    SoftmaxState<kDims> st[kRowsPerWarp];
    // The shared keys, walked along the tile's first list (every row's list begins the same way).
    const int64_t shared_keys = plan.tile_shared[plan.per_kv_head ? tile * L.n_kv_heads + kvh : tile];
    const int64_t first_list = plan.per_kv_head ? r0 * L.n_kv_heads + kvh : r0;
    int64_t base = 0;
    for (int32_t s = plan.offsets[first_list]; s < plan.offsets[first_list + 1] && base < shared_keys; ++s) {
        const DeviceKvSpan sp = plan.spans[s];
        const int64_t len = sp.end - sp.begin, take = shared_keys - base < len ? shared_keys - base : len;
        const bool flat = sp.flat_k >= 0;
        const DeviceKvType k_type = flat ? DeviceKvType::f32 : L.k_type, v_type = flat ? DeviceKvType::f32 : L.v_type;
        for (int64_t c = 0; c < take; c += kChunk) {
            const int n_valid = take - c < kChunk ? static_cast<int>(take - c) : kChunk;
            __syncthreads();   // the previous chunk is read (the first time: the queries are in)
            for (int i = threadIdx.x; i < n_valid * hd; i += blockDim.x) {
                const int j = i / hd, d = i % hd;
                const int32_t entry = sp.begin + static_cast<int32_t>(c) + j;
                ks[j][d] = kv_element(k_type, kv_row(plan, sp, L, false, k_arena, entry, kvh), d);
                vs[j][d] = kv_element(v_type, kv_row(plan, sp, L, true, v_arena, entry, kvh), d);
            }
            __syncthreads();
#pragma unroll
            for (int i = 0; i < kRowsPerWarp; ++i) {
                const int row = warp * kRowsPerWarp + i;
                if (r0 + row >= n_rows) break;   // the same for the whole warp
                const bool valid = lane < n_valid;
                float score = -INFINITY;
                if (valid) {
                    float dot = 0.0f;
                    for (int d = 0; d < hd; ++d) dot = fmaf(qs[row][d], ks[lane][d], dot);
                    score = dot * scale + sp.bias;
                }
                fold_keys(score, valid, n_valid, hd, DeviceKvType::f32, [&](int j) { return reinterpret_cast<const uint8_t*>(vs[j]); }, st[i]);
            }
        }
        base += len;
    }
    if (shared_keys == 0) __syncthreads();   // the queries are in
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
        const int row = warp * kRowsPerWarp + i;
        const int64_t t = r0 + row;
        if (t >= n_rows) break;
        const int64_t list = plan.per_kv_head ? t * L.n_kv_heads + kvh : t;
        attend_keys(qs[row], scale, plan, L, k_arena, v_arena, list, kvh, shared_keys, INT64_MAX, st[i]);
        store_result(st[i], hd, out + (t * n_head + h) * hd);
    }
}

}  // namespace

Status attend_tiles(const float* q, int64_t n_rows, int32_t n_head, float scale, const DeviceKvPlan& plan, const DeviceKvLayout& layout,
                    const uint8_t* k_arena, const uint8_t* v_arena, float* out, cudaStream_t stream) {
    if (layout.head_dim > kAttendTileMaxHeadDim)
        return error(StatusCode::internal, "the tiled attention kernel takes heads of at most 128 dimensions");
    if (n_rows <= 0) return Status::ok_status();
    const dim3 grid(static_cast<unsigned>((n_rows + kAttendTileRows - 1) / kAttendTileRows), static_cast<unsigned>(n_head));
    attend_tile_kernel<<<grid, kWarps * 32, 0, stream>>>(q, n_rows, n_head, scale, plan, layout, k_arena, v_arena, out);
    return check_launch("tiled attention launch");
}

}  // namespace workbench::cuda
