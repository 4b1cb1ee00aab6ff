// What one layer's attention reads, as the KV cache's policies plan it and every backend's
// attention kernel runs it: streams (block tables over a KvStore's K/V bytes, or flat rows a
// policy built) and, per query, the ordered list of entry spans it attends over. A plan is data
// only: the policies (attention/) build it, the kernels (kernels/) read it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv_blocks/kv_store.h"

namespace workbench {

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
// The same over f16 rows (IEEE binary16 bits).
KvStreamView flat_f16_stream(const uint16_t* k, const uint16_t* v, int32_t n_rows, int64_t n_kv_heads, int64_t head_dim);

}  // namespace workbench
