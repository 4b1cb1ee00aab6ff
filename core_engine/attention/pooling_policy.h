// What compressed and heavy share: every M tokens past the sinks and older than the recent window
// are pooled into one entry of the sequence's pooled stream, and their token blocks are released.
// Query t reads the sinks [0, S), the pooled entries [0, P(t)) and its tokens [S + P(t)·M, t],
// P(t) = max(0, t+1-R-S) / M. compressed reads every pooled entry; heavy (heavy_policy.cpp) only
// the top K by q·k. An entry (pool=) is the mean of the group's RoPE-applied keys and of its
// values; or per channel the key of largest magnitude (max: a group with one token that matches a
// query still matches it), values as the mean; or (weighted) the keys and values weighted by the
// attention the group's tokens draw from the query that first reads the group pooled, its
// window's last (CaM / KVMerger weight merged tokens by their attention).
#pragma once

#include <algorithm>

#include "attention/attention_policy.h"

namespace workbench {

class PoolingPolicy : public AttentionPolicy {
public:
    using AttentionPolicy::AttentionPolicy;

    uint64_t pooled_blocks(uint64_t token_blocks) const override { return token_blocks / static_cast<uint64_t>(spec_.block) + 1; }
    bool can_fork() const override { return false; }
    bool can_adopt_prefix() const override { return false; }
    bool can_truncate() const override { return false; }
    bool pools_released_blocks() const override { return true; }
    int32_t pooled_count(int32_t t) const override { return std::max(0, t + 1 - spec_.recent - spec_.sinks) / spec_.block; }
    // A pooled entry stands for M tokens: its softmax weight counts M times (ToMe's proportional
    // attention), so a mean key that matches like its tokens draws their combined weight.
    float pooled_score_bias() const override;
    void begin_part(const KvArena& arena, StepPart& part) override;
    Status check(const PagedKvShape& model, KvTypes types) const override;
    void write(KvArena& arena, int32_t layer, StepPart& part, const float* k, const float* v) override;
    // pool=weighted pools here, where the queries are: the groups this step's queries first read pooled.
    const AttendPlan& plan(const KvArena& arena, int32_t layer, StepPart& part, const float* q, ThreadPool& pool) override;
    void releasable(const KvArena& arena, const KvSequence& s, int32_t& first, int32_t& end) const override;
    Footprint footprint(int64_t n_tokens, int32_t block_tokens) const override;

protected:
    // The first token query t reads as it is, past the sinks and its pooled groups.
    int32_t recent_begin(int32_t t) const { return std::min(spec_.sinks, t + 1) + pooled_count(t) * spec_.block; }
    // Pools the groups the part's queries read pooled for the first time, when pool=weighted.
    void pool_weighted(const KvArena& arena, int32_t layer, const StepPart& part, const float* q) const;

private:
    // Pools the groups the part's queries read pooled for the first time (q: pool=weighted).
    void pool_new_groups(const KvArena& arena, int32_t layer, const StepPart& part, const float* q) const;
    // Groups [g0, g1) into their pooled entries; q: the part's queries (pool=weighted).
    void pool_groups(const KvArena& arena, int32_t storage, const StepPart& part, int32_t g0, int32_t g1, const float* q) const;
    // Weights of the group's tokens (m keys of hd, decoded) by the attention of the query that
    // first reads it pooled, averaged over the KV head's query heads.
    void attention_weights(const KvArena& arena, const StepPart& part, int32_t g, int32_t h, const float* keys, const float* q,
                           float* w) const;
};

// The pool= parameter both variants take, and its part of their canonical spec (none for mean).
AttentionParameter pool_parameter();
std::string pool_spec_part(const AttentionSpec& spec);

}  // namespace workbench
