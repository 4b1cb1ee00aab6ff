// The paged KV cache's device side (kv_attention.cu): rows appended into device arenas laid out
// exactly as the host KvStore's ([block][slot][kv head][row] in the K and V element types), and
// attention of each query over lists of spans — the plan a policy made, flattened
// (DeviceKvPlan). A span reads either the arenas through a block table or rows a policy built on
// the host (a sliding window's re-rotated sinks, a cross-layer merge's staged rows), uploaded as
// f32 beside the plan; it may add a bias to its scores (a pooled entry standing for M tokens).
// Attention is split over keys (flash-decoding): each (query row, head, split) keeps a running
// max, sum and weighted values; a second kernel merges the splits by log-sum-exp. A prompt's plan
// may carry tiles (attention_tiles.h): rows in tiles of kAttendTileRows share the keys they all
// read first, staged in shared memory once per tile (attention_tiles.cu). KV types read:
// f32, f16, bf16, q8_0, q4_0, fp8 (e4m3, one f16 scale per 32), q2_0; kv_append writes the first four.
// Pointers are device pointers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "workbench/status.h"

namespace workbench::cuda {

// The KV element types the kernels read (kv_blocks/kv_dtype.h's, which this C++17 header cannot
// include; cuda_backend maps them).
enum class DeviceKvType : uint8_t { f32, f16, bf16, q8_0, q4_0, fp8, q2_0 };

struct DeviceKvLayout {
    DeviceKvType k_type = DeviceKvType::f16, v_type = DeviceKvType::f16;
    int64_t k_row_bytes = 0, k_token_stride = 0, k_block_stride = 0;
    int64_t v_row_bytes = 0, v_token_stride = 0, v_block_stride = 0;
    int32_t block_tokens = 16, n_kv_heads = 0, head_dim = 0;
    int64_t k_head_stride = 0, v_head_stride = 0;   // KvRowLayout::head_stride: a head's row to the next head's
};

// One span of a list: entries [begin, end) of a stream. In the arenas (flat_k < 0): entry e in
// block tables[table_offset + e / block_tokens - begin / block_tokens]. Else host-built rows:
// entry e's K row of KV head h at flat[flat_k + (e · n_kv_heads + h) · head_dim], V alike at
// flat_v. Every score of the span gets `bias` added.
struct DeviceKvSpan {
    int32_t begin = 0, end = 0, table_offset = 0;
    int32_t flat_k = -1, flat_v = -1;
    float bias = 0.0f;
};
static_assert(sizeof(DeviceKvSpan) == 6 * sizeof(int32_t), "uploaded as six 32-bit words");

// A step's plan on the device: list i is spans[offsets[i] .. offsets[i + 1]); per query row, or
// per (row, KV head) when per_kv_head.
struct DeviceKvPlan {
    const int32_t* offsets = nullptr;
    const DeviceKvSpan* spans = nullptr;
    const int32_t* tables = nullptr;
    const float* flat = nullptr;
    // Per tile of kAttendTileRows rows (per (tile, KV head) when per_kv_head): the keys every
    // row of the tile reads first, in the same order. Null: the split-key kernel runs.
    const int32_t* tile_shared = nullptr;
    bool per_kv_head = false;
    int32_t max_keys = 0;   // the longest list's entries (sizes the splits)
};

// RoPE for K on its way into the arenas: rope_rows' rotation (the same bits) from the step's
// angle table [n, n_rot/2]. cos null: K is stored as given.
struct KeyRope {
    const float* cos = nullptr;
    const float* sin = nullptr;
    int32_t n_rot = 0;
    bool neox = false;
};

// Encodes k (rotated by `rope` when it has angles) and v ([n, n_kv_heads · head_dim] f32) into
// the arenas at slots[t] (block · block_tokens + slot); f32, f16, bf16 and q8_0 (unsupported
// for the others).
Status kv_append(const float* k, const float* v, const int32_t* slots, int64_t n, const DeviceKvLayout& layout, uint8_t* k_arena,
                 uint8_t* v_arena, cudaStream_t stream, const KeyRope& rope = {});

// Query rows per tile of the prompt kernel, and the widest head it takes.
constexpr int32_t kAttendTileRows = 16, kAttendTileMaxHeadDim = 128;

// Bytes of scratch attend_kv needs for n_rows query rows of n_head heads (none with tiles).
size_t attend_kv_scratch_bytes(int64_t n_rows, int32_t n_head, int32_t head_dim, int32_t max_keys, bool tiles = false);

// out[t, h] = softmax(scale · q[t, h] · K) · V over list t (or t · n_kv + h / group); an empty
// list gives zeros. scratch: attend_kv_scratch_bytes of device memory. With plan.tile_shared
// (heads of at most kAttendTileMaxHeadDim) it runs attend_tiles.
Status attend_kv(const float* q, int64_t n_rows, int32_t n_head, float scale, const DeviceKvPlan& plan, const DeviceKvLayout& layout,
                 const uint8_t* k_arena, const uint8_t* v_arena, float* scratch, float* out, cudaStream_t stream);

// The prompt kernel: a block of warps per (tile, head) stages the tile's shared keys in shared
// memory and folds them into each row's softmax, then each row reads the rest of its list.
Status attend_tiles(const float* q, int64_t n_rows, int32_t n_head, float scale, const DeviceKvPlan& plan, const DeviceKvLayout& layout,
                    const uint8_t* k_arena, const uint8_t* v_arena, float* out, cudaStream_t stream);

}  // namespace workbench::cuda
