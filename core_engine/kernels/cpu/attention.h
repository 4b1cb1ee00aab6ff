// Causal attention of a block of queries over an f16 KV cache whose row index is the position.
// Query t (at position q_pos[t]) reads cache rows [0, q_pos[t]]; heads are grouped for GQA
// (query head h reads KV head h / (n_head / n_head_kv)). Work splits over (token, head) pairs;
// each pair's result depends only on its own inputs, whatever the batch.
#pragma once

#include <cstdint>

#include "kernels/cpu/thread_pool.h"

namespace workbench {

struct AttentionShape {
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim = 0;
    int64_t kv_row_stride = 0;  // elements between consecutive cache rows (n_head_kv * head_dim)
};

// q: [n_tokens, n_head, head_dim] f32; out: same shape. scale is usually 1/sqrt(head_dim).
void attention_f16_kv(const float* q, const int32_t* q_pos, int64_t n_tokens, const uint16_t* k_cache,
                      const uint16_t* v_cache, const AttentionShape& shape, float scale, float* out, ThreadPool& pool);

}  // namespace workbench
