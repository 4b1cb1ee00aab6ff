// Attention of a block of queries over lists of KV spans: the one kernel every attention variant
// uses. A span is a range of entries in a stream (a paged token cache, a pooled cache, a scratch
// buffer); a query's list names, in order, every entry it reads. Full attention is one span
// [0, pos + 1); a sliding window, a top-k selection or a compressed cache only change the lists,
// so a degenerate variant whose list equals full attention's gives bit-identical results.
// Heads are grouped for GQA (query head h reads KV head h / (n_head / n_head_kv)). Work splits
// over (token, KV head) pairs; each result depends only on its own inputs, whatever the batch.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "kv_blocks/attend_plan.h"

namespace workbench {

struct AttentionShape {
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim = 0;
    // Values read per V row (its first head_dim_v): DeepSeek's latent attention scores keys of
    // [c | RoPE key] and sums values c. 0: head_dim.
    int64_t head_dim_v = 0;
    int64_t value_dim() const { return head_dim_v > 0 ? head_dim_v : head_dim; }
};

// q: [n_tokens, n_head, head_dim] f32; out: [n_tokens, n_head, value_dim()]. scale is usually 1/sqrt(head_dim).
// A query whose list is empty gets zeros. `sink_logits` ([n_head], gpt-oss): one learned logit
// per head that joins each query's softmax unscaled and adds no value (a key every query reads
// that lets a head attend to nothing); empty: none, and the arithmetic is exactly the plain one.
void attend_spans(const float* q, int64_t n_tokens, std::span<const KvStreamView> streams, const AttendPlan& plan,
                  const AttentionShape& shape, float scale, float* out, ThreadPool& pool, std::span<const float> sink_logits = {});

// Values stored Hadamard-rotated (LayerKvStorage::rotated_values) give each head's output rotated:
// the normalized transform is its own inverse, so one more turn per head row brings it back.
void unrotate_attention_rows(float* out, int64_t n_tokens, const AttentionShape& shape, ThreadPool& pool);

}  // namespace workbench
