// The layers one attention policy runs, with their own block tables over their own KvStore: the
// mechanism (sequences, allocation, prefix sharing, forks, byte accounting) around one
// AttentionPolicy (attention_policy.h), which decides what each step writes, which spans each
// query reads (an AttendPlan for the one attention kernel) and what is released. PagedKv
// (paged_kv.h) holds one group per policy of the model's layout and routes each layer to its own.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "attention/attention_policy.h"

namespace workbench {

// What a token block of a sequence is to one layer, for the block map picture.
enum class KvBlockUse : uint8_t {
    empty,       // past the sequence's end in its last block's row (never shown: only whole blocks are listed)
    live,        // held and read by the last query
    shared,      // held, and also in another sequence's table (prefix cache, fork): one copy in memory
    evicted,     // released by a sliding window: its tokens are gone
    compressed,  // released after pooling (compressed, heavy): its tokens live on as pooled entries
    skipped,     // held but not read by the last query (top-k left it out)
    borrowed,    // this layer keeps no KV: it reads another layer's (cross-layer sharing)
};

// One sequence's share of a step: `tokens` are appended to `seq` (created when new).
struct StepSequence {
    SeqId seq = 0;
    std::span<const TokenId> tokens;
    bool ends_prompt = false;   // the last of a request's prompt: what follows is generated (a press compresses here)
    bool generated = false;     // every token was generated (a decode step): a decode-time press may evict
};

// Byte figures of one sequence, or of the whole cache.
struct KvUsage {
    uint64_t bytes_in_use = 0;        // blocks held (shared blocks once), index data included
    uint64_t bytes_peak = 0;
    uint64_t bytes_allocated = 0;     // the pool
    uint64_t bytes_full = 0;          // full attention, same tokens and dtypes, same block rounding
    uint64_t bytes_read_last_step = 0;  // attention reads of the last step's last query, all layers
    // The indexers' part of those reads (top-k bounds, heavy's pooled keys), and their operations
    // over all the step's queries (the whole cache's figures only).
    uint64_t index_bytes_last_step = 0;
    double index_ops_last_step = 0;
    int32_t n_tokens = 0;
};

class KvGroup {
public:
    // A pool of `budget_bytes`, or when that is 0, one that holds `n_seq` sequences of `n_ctx`
    // tokens each (pooled entries included; a sliding window's sequence never holds more than its
    // sinks, window and one step's tokens, so its pool is sized for that). invalid_argument for a
    // spec the model cannot run (names the parameter); resource_exhausted when the pool cannot be
    // allocated or holds under 2 blocks.
    // `layers`: the model layers this group runs (empty: all).
    static Result<std::unique_ptr<KvGroup>> create(const AttentionSpec& spec, KvTypes types, const PagedKvShape& shape,
                                                   uint64_t budget_bytes, int32_t n_ctx, int32_t n_seq = 1,
                                                   int32_t n_tokens_per_block = 16, const std::vector<int32_t>& layers = {});
    // Bytes one block takes in every layer of the group, index data included.
    uint64_t block_bytes() const;
    // Most tokens one step may append to a sequence (the model's prompt chunk; a batch's budget
    // must not exceed it under a sliding window's small pool).
    static constexpr int32_t kMaxStepTokens = workbench::kMaxStepTokens;
    ~KvGroup();

    const AttentionSpec& spec() const { return policy_->spec(); }
    KvTypes types() const { return arena_.types; }
    // Most tokens a sequence may hold; sliding alone can run past the trained context.
    bool unbounded_context() const { return policy_->unbounded_context(); }
    // Whether a sequence may start sharing another's blocks (fork).
    bool can_fork() const { return policy_->can_fork(); }
    bool can_truncate() const { return policy_->can_truncate(); }
    // What one sequence of n_tokens would hold and read, by the policy's formula.
    AttentionPolicy::Footprint footprint(int64_t n_tokens) const { return policy_->footprint(n_tokens, n_tokens_per_block()); }
    uint64_t full_bytes_per_token() const { return full_bytes_per_token_; }

    // The step: each sequence's tokens are appended (a sequence at most once per step); the
    // step's rows are the sequences' tokens in batch order, and write/plan/streams take all
    // rows at once. Errors leave everything as it was: resource_exhausted/out_of_range from the
    // pool with the budget to ask for; invalid_argument for an empty or repeated sequence.
    Status begin_step(std::span<const StepSequence> batch);
    Status begin_step(SeqId seq, std::span<const TokenId> tokens);
    std::span<const int32_t> positions() const { return positions_; }   // [n_rows]: each row's position
    int32_t n_step_sequences() const { return n_parts_; }
    // False for a layer that reads another layer's KV (cross_layer, merge=none): it skips K and V.
    bool layer_computes_kv(int32_t layer) const { return policy_->layer_computes_kv(arena_, layer); }
    // k, v: [n_rows, n_kv_heads · head_dim], RoPE applied to k.
    void write(int32_t layer, const float* k, const float* v, ThreadPool& pool);
    // AttentionPolicy::writes_token_rows_only: a backend may write the rows at token_slots().
    bool writes_token_rows_only() const { return policy_->writes_token_rows_only() && recent_ == 0; }
    // Each row's slot in its sequence's token stream (block · block_tokens + slot), the same in
    // every storage of the group: where write() would store the row.
    std::span<const int32_t> token_slots();
    // Keys are rotated before storage when K is 4-bit; queries must be rotated alike.
    bool rotates_keys() const { return arena_.rotate_k; }
    bool rotates_values() const { return arena_.rotate_v; }
    // q: [n_rows, n_head, head_dim] (null for a policy that writes token rows only: it reads
    // none). One plan over every row of the step; its spans index streams(layer), where each
    // sequence has its own streams.
    const AttendPlan& plan(int32_t layer, const float* q, ThreadPool& pool);
    // Decodes the entries [0, n) of `layer` of the step's one sequence to f32 rows (latent: the
    // cached c, its halves in k_out and v_out, [n, R/2] each). Latent steps hold one sequence.
    void read_rows(int32_t layer, int32_t n, float* k_out, float* v_out) const;
    std::span<const KvStreamView> streams(int32_t layer);
    // The store and the storage a layer reads (its own, or the layer it shares with), for a
    // backend that keeps its own copy of the bytes (KvStoreMirror) and writes rows there itself.
    KvStore& store() { return *arena_.store; }
    int32_t storage_of(int32_t layer) const { return arena_.storage_of[static_cast<size_t>(layer)]; }
    void finish_step();
    void abort_step();

    // Starts the new sequence `seq` on the cached full blocks that begin `prompt` (another
    // sequence's, or a freed one's not yet evicted) and returns how many tokens it now holds:
    // the caller runs the rest. 0 when nothing is cached, `seq` exists, or the variant keeps
    // per-sequence state beyond its blocks (sliding, compressed, heavy), or its blocks depend on
    // how their prompt was chunked (cross_layer with a merge).
    int32_t adopt_cached_prefix(SeqId seq, std::span<const TokenId> prompt);
    // Freed blocks stop counting as a cached prefix (KvBlockManager::forget_free_prefixes).
    void forget_free_prefixes() { arena_.manager->forget_free_prefixes(); }
    // Tokens adopt_cached_prefix would give a new sequence now.
    int32_t cached_prefix_tokens(std::span<const TokenId> prompt) const;
    // Tokens of `seq` that may be kept when a new prompt shares its first `n_common` tokens; the
    // sequence is truncated to that (0 resets it). Policies whose cache lost token-level detail
    // (evicted or pooled) keep only an untouched prefix.
    int32_t keep_prefix(SeqId seq, int32_t n_common);
    void free(SeqId seq);
    // Starts `child` sharing `parent`'s blocks (copy-on-write); full, topk and cross_layer only.
    Status fork(SeqId parent, SeqId child);
    int32_t n_tokens(SeqId seq) const;
    // The tokens `seq` holds, in position order (empty when it does not exist).
    std::span<const TokenId> tokens(SeqId seq) const;
    // Tokens the free blocks hold (cached-but-free blocks count: they are reused on demand).
    int64_t n_free_tokens() const;
    int32_t n_tokens_per_block() const;

    KvUsage usage() const;
    KvUsage usage(SeqId seq) const;
    // KV bytes of each model layer for a sequence (a layer reading another's KV holds 0).
    std::vector<uint64_t> layer_bytes(SeqId seq) const;
    // [n_layers][n_blocks] uses of the sequence's token blocks, row by layer; n_blocks is set.
    std::vector<KvBlockUse> block_map(SeqId seq, int32_t& n_blocks) const;

private:
    KvGroup() = default;
    KvSequence& seq_state(SeqId seq);
    Status begin_part(StepPart& part, const StepSequence& step);
    void undo_part(StepPart& part);
    const AttendPlan& part_plan(int32_t layer, StepPart& part, const float* q, ThreadPool& pool);
    void release_unreachable(KvSequence& s);
    // KvTypes::recent: the ring's part of write(), plan() and streams().
    void write_recent(int32_t storage, StepPart& part, const float* k, const float* v);
    const AttendPlan& plan_with_recent(int32_t layer, StepPart& part, const AttendPlan& plan);
    int32_t recent_stream(int32_t layer, const StepPart& part) const;
    uint64_t recent_bytes(const KvSequence& s) const { return 2 * (s.recent_k.size() + s.recent_v.size()); }

    std::unique_ptr<AttentionPolicy> policy_;
    KvArena arena_;
    uint64_t full_bytes_per_token_ = 0;
    uint64_t aux_block_bytes_ = 0;
    std::unordered_map<SeqId, std::unique_ptr<KvSequence>> seqs_;
    uint64_t peak_ = 0;

    // The step in flight: parts_[0, n_parts_) (kept allocated across steps).
    std::vector<StepPart> parts_;
    int32_t n_parts_ = 0;
    std::vector<float> rotated_v_;           // the step's V rows, rotated (arena_.rotate_v)
    std::vector<int32_t> positions_;
    AttendPlan batch_plan_;                  // the parts' plans joined, for steps of several sequences
    std::vector<KvStreamView> views_;
    std::vector<int32_t> slots_;             // token_slots()' answer
    uint64_t read_bytes_ = 0;                // the last step's parts together
    uint64_t index_bytes_ = 0;               // the indexer's share of read_bytes_
    double index_ops_ = 0;                   // the indexer's operations, all queries
    int32_t recent_ = 0;                     // KvTypes::recent
    int32_t ring_ = 0;                       // its ring's slots: recent_ + kRecentRollback
};

}  // namespace workbench
