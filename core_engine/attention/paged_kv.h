// The paged KV cache as the model sees it: one KvGroup (kv_group.h) per attention policy of the
// model's layout, each with its own block tables, so layers can run different policies (a
// sliding window on some, full or top-k on others). Every call that names a layer goes to that
// layer's group; the step, prefix sharing, forks and the byte figures span all groups, which
// always hold the same tokens. A single-policy layout is one group and behaves exactly as it.
// One forward step is: begin_step (allocate; fails cleanly) → per layer write() then
// plan()/streams() → finish_step (commit, release). Owned and called by the engine's thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "attention/kv_group.h"

namespace workbench {

class PagedKv {
public:
    // One group per policy of `layout`, sized as KvGroup::create sizes one (a budget is split
    // so every group holds the same number of blocks). invalid_argument for a layout the model
    // cannot run (names the term or parameter); resource_exhausted as KvGroup::create.
    static Result<std::unique_ptr<PagedKv>> create(const AttentionLayout& layout, KvTypes types, const PagedKvShape& shape,
                                                   uint64_t budget_bytes, int32_t n_ctx, int32_t n_seq = 1,
                                                   int32_t n_tokens_per_block = 16);
    // A single policy on every layer.
    static Result<std::unique_ptr<PagedKv>> create(const AttentionSpec& spec, KvTypes types, const PagedKvShape& shape,
                                                   uint64_t budget_bytes, int32_t n_ctx, int32_t n_seq = 1,
                                                   int32_t n_tokens_per_block = 16);
    static constexpr int32_t kMaxStepTokens = workbench::kMaxStepTokens;
    ~PagedKv();

    const AttentionLayout& layout() const { return layout_; }
    std::string layout_name() const { return attention_layout_name(layout_); }
    // The latent variant (it runs every layer): the model runs its factors around the cache.
    bool latent() const { return groups_.size() == 1 && groups_.front()->spec().kind == AttentionKind::latent; }
    // Its absorbed form: the cache's rows are planned and attended as any layer's.
    bool latent_absorbed() const { return latent() && groups_.front()->spec().form == LatentForm::absorbed; }
    KvTypes types() const { return groups_.front()->types(); }
    // Most tokens a sequence may hold; only when every layer slides can it run past the trained context.
    bool unbounded_context() const;
    bool can_fork() const;
    // Every group can cut a sequence back exactly (AttentionPolicy::can_truncate).
    bool can_truncate() const;
    uint64_t full_bytes_per_token() const { return groups_.front()->full_bytes_per_token(); }
    const std::vector<std::unique_ptr<KvGroup>>& groups() const { return groups_; }
    const KvGroup& group_of(int32_t layer) const { return *groups_[static_cast<size_t>(group_of_[static_cast<size_t>(layer)])]; }
    KvGroup& group_of(int32_t layer) { return group(layer); }

    Status begin_step(std::span<const StepSequence> batch);
    Status begin_step(SeqId seq, std::span<const TokenId> tokens);
    std::span<const int32_t> positions() const { return groups_.front()->positions(); }
    int32_t n_step_sequences() const { return groups_.front()->n_step_sequences(); }
    bool layer_computes_kv(int32_t layer) const { return group_of(layer).layer_computes_kv(layer); }
    void write(int32_t layer, const float* k, const float* v, ThreadPool& pool) { group(layer).write(layer, k, v, pool); }
    bool rotates_keys() const { return groups_.front()->rotates_keys(); }
    const AttendPlan& plan(int32_t layer, const float* q, ThreadPool& pool) { return group(layer).plan(layer, q, pool); }
    void read_rows(int32_t layer, int32_t n, float* k_out, float* v_out) const { group_of(layer).read_rows(layer, n, k_out, v_out); }
    std::span<const KvStreamView> streams(int32_t layer) { return group(layer).streams(layer); }
    void finish_step();
    void abort_step();

    // As KvGroup's: a prefix every group holds cached, 0 when any group cannot adopt one.
    int32_t adopt_cached_prefix(SeqId seq, std::span<const TokenId> prompt);
    void forget_free_prefixes() {
        for (auto& g : groups_) g->forget_free_prefixes();
    }
    int32_t keep_prefix(SeqId seq, int32_t n_common);
    void free(SeqId seq);
    Status fork(SeqId parent, SeqId child);
    int32_t n_tokens(SeqId seq) const { return groups_.front()->n_tokens(seq); }
    std::span<const TokenId> tokens(SeqId seq) const { return groups_.front()->tokens(seq); }
    // Tokens every group can still take.
    int64_t n_free_tokens() const;
    int32_t n_tokens_per_block() const { return groups_.front()->n_tokens_per_block(); }

    KvUsage usage() const;
    KvUsage usage(SeqId seq) const;
    std::vector<uint64_t> layer_bytes(SeqId seq) const;
    std::vector<KvBlockUse> block_map(SeqId seq, int32_t& n_blocks) const;

private:
    PagedKv() = default;
    // A budget that holds one sequence of n tokens: every group gets the same number of blocks
    // (create() splits a budget so), so the group needing most decides.
    uint64_t budget_for(int64_t n_tokens) const;
    // The pool can never hold `seq` with `n_new` more tokens: the groups' advice restated for
    // the whole cache and the whole context.
    Status never_fits(const Status& from_group, SeqId seq, int64_t n_new) const;
    KvGroup& group(int32_t layer) { return *groups_[static_cast<size_t>(group_of_[static_cast<size_t>(layer)])]; }

    AttentionLayout layout_;
    std::vector<std::unique_ptr<KvGroup>> groups_;
    std::vector<int32_t> group_of_;  // model layer → its group
    int32_t n_ctx_ = 0;
    uint64_t peak_ = 0;
};

}  // namespace workbench
