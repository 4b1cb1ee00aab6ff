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
#include "kv_cache/kv_store.h"

namespace workbench {

struct AttentionShape {
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim = 0;
};

// Entries of one stream: entry j lives in block blocks[j / block_tokens], slot j % block_tokens.
struct KvStreamView {
    const uint8_t* k_base = nullptr;
    const uint8_t* v_base = nullptr;
    const BlockId* blocks = nullptr;
    int32_t block_tokens = 16;
    KvRowLayout k, v;
    float score_bias = 0;  // added to every score of this stream (a pooled entry standing for M tokens: log M)
};

struct KvSpan {
    int32_t stream = 0;
    int32_t begin = 0, end = 0;  // entry range [begin, end)
};

// The lists: list i is spans[offsets[i] .. offsets[i + 1]). Per query token (list t), or, when
// per_kv_head, per (token, KV head) (list t · n_head_kv + kvh), for selections that differ by head.
struct AttendPlan {
    bool per_kv_head = false;
    std::vector<uint32_t> offsets{0};
    std::vector<KvSpan> spans;

    void clear() { per_kv_head = false; offsets.assign(1, 0); spans.clear(); }
    void add(KvSpan s) { if (s.end > s.begin) spans.push_back(s); }
    void close_list() { offsets.push_back(static_cast<uint32_t>(spans.size())); }
    std::span<const KvSpan> list(int64_t i) const {
        return {spans.data() + offsets[static_cast<size_t>(i)], spans.data() + offsets[static_cast<size_t>(i) + 1]};
    }
};

// Rows of f32 scratch as a stream: [n_rows, n_kv_heads, head_dim] keys and values, one flat block.
KvStreamView flat_f32_stream(const float* k, const float* v, int32_t n_rows, int64_t n_kv_heads, int64_t head_dim);

// q: [n_tokens, n_head, head_dim] f32; out: same shape. scale is usually 1/sqrt(head_dim).
// A query whose list is empty gets zeros.
void attend_spans(const float* q, int64_t n_tokens, std::span<const KvStreamView> streams, const AttendPlan& plan,
                  const AttentionShape& shape, float scale, float* out, ThreadPool& pool);

}  // namespace workbench
