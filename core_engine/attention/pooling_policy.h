// What compressed and heavy share: every M tokens past the sinks and older than the recent window
// are pooled into one entry (the mean of their RoPE-applied keys, and of their values) in the
// sequence's pooled stream, and their token blocks are released. Query t reads the sinks [0, S),
// the pooled entries [0, P(t)) and its tokens [S + P(t)·M, t], P(t) = max(0, t+1-R-S) / M.
// compressed reads every pooled entry; heavy (heavy_policy.cpp) only the top K by q·k.
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
    void write(KvArena& arena, int32_t layer, StepPart& part, const float* k, const float* v) override;
    void releasable(const KvArena& arena, const KvSequence& s, int32_t& first, int32_t& end) const override;
    Footprint footprint(int64_t n_tokens, int32_t block_tokens) const override;

protected:
    // The first token query t reads as it is, past the sinks and its pooled groups.
    int32_t recent_begin(int32_t t) const { return std::min(spec_.sinks, t + 1) + pooled_count(t) * spec_.block; }

private:
    void pool_groups(KvArena& arena, int32_t storage, const KvSequence& s, int32_t g0, int32_t g1) const;
};

}  // namespace workbench
