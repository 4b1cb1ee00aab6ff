// The paged KV cache as the model sees it: per-sequence block tables over one KvStore, and the
// policy of the chosen attention variant deciding what each step writes, which spans each query
// reads (an AttendPlan for the one attention kernel) and what that costs in bytes. One forward
// step is: begin_step (allocate; fails cleanly) → per layer write() then plan()/streams() →
// finish_step (commit, pool, evict). Owned and called by the engine's thread only.
//
// Streams: 0 is a sequence's token cache (entry = token index; released blocks leave holes);
// 1 the pooled cache of compressed/heavy (entry = pooled group); 1 + i scratch streams (sliding's
// re-rotated sinks, cross-layer merging's unmerged step tokens).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "attention/attention_spec.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/rope.h"
#include "kv_cache/kv_cache_manager.h"
#include "kv_cache/kv_store.h"

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
};

struct PagedKvShape {
    int32_t n_layers = 0, n_kv_heads = 0, head_dim = 0, n_head = 0;
    RopeParams rope;
};

// Byte figures of one sequence, or of the whole cache.
struct KvUsage {
    uint64_t bytes_in_use = 0;        // blocks held (shared blocks once), index data included
    uint64_t bytes_peak = 0;
    uint64_t bytes_allocated = 0;     // the pool
    uint64_t bytes_full = 0;          // full attention, same tokens and dtypes, same block rounding
    uint64_t bytes_read_last_step = 0;  // attention reads of the last step's last query, all layers
    int32_t n_tokens = 0;
};

class PagedKv {
public:
    // A pool of `budget_bytes`, or when that is 0, one that holds `n_seq` sequences of `n_ctx`
    // tokens each (pooled entries included; a sliding window's sequence never holds more than its
    // sinks, window and one step's tokens, so its pool is sized for that). invalid_argument for a
    // spec the model cannot run (names the parameter); resource_exhausted when the pool cannot be
    // allocated or holds under 2 blocks.
    static Result<std::unique_ptr<PagedKv>> create(const AttentionSpec& spec, KvTypes types, const PagedKvShape& shape,
                                                   uint64_t budget_bytes, int32_t n_ctx, int32_t n_seq = 1,
                                                   int32_t n_tokens_per_block = 16);
    // Most tokens one step may append to a sequence (the model's prompt chunk; a batch's budget
    // must not exceed it under a sliding window's small pool).
    static constexpr int32_t kMaxStepTokens = 256;
    ~PagedKv();

    const AttentionSpec& spec() const { return spec_; }
    KvTypes types() const { return types_; }
    // Most tokens a sequence may hold; sliding alone can run past the trained context.
    bool unbounded_context() const { return spec_.kind == AttentionKind::sliding; }
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
    bool layer_computes_kv(int32_t layer) const { return owner_[static_cast<size_t>(layer)] == layer || spec_.merge != LayerMerge::none; }
    // k, v: [n_rows, n_kv_heads · head_dim], RoPE applied to k.
    void write(int32_t layer, const float* k, const float* v, ThreadPool& pool);
    // Keys are rotated before storage when K is 4-bit; queries must be rotated alike.
    bool rotates_keys() const { return rotate_k_; }
    // q: [n_rows, n_head, head_dim]. One plan over every row of the step; its spans index
    // streams(layer), where each sequence has its own streams.
    const AttendPlan& plan(int32_t layer, const float* q);
    // Decodes the entries [0, n) of `layer` of the step's one sequence to f32 rows (latent: the
    // cached c, its halves in k_out and v_out, [n, R/2] each). Latent steps hold one sequence.
    void read_rows(int32_t layer, int32_t n, float* k_out, float* v_out) const;
    std::span<const KvStreamView> streams(int32_t layer);
    void finish_step();
    void abort_step();

    // Starts the new sequence `seq` on the cached full blocks that begin `prompt` (another
    // sequence's, or a freed one's not yet evicted) and returns how many tokens it now holds:
    // the caller runs the rest. 0 when nothing is cached, `seq` exists, or the variant keeps
    // per-sequence state beyond its blocks (sliding, compressed, heavy), or its blocks depend on
    // how their prompt was chunked (cross_layer with a merge).
    int32_t adopt_cached_prefix(SeqId seq, std::span<const TokenId> prompt);
    // Tokens of `seq` that may be kept when a new prompt shares its first `n_common` tokens; the
    // sequence is truncated to that (0 resets it). Policies whose cache lost token-level detail
    // (evicted or pooled) keep only an untouched prefix.
    int32_t keep_prefix(SeqId seq, int32_t n_common);
    void free(SeqId seq);
    // Starts `child` sharing `parent`'s blocks (copy-on-write); full, topk and cross_layer only.
    Status fork(SeqId parent, SeqId child);
    int32_t n_tokens(SeqId seq) const;
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
    struct Sequence {
        SeqId token_id = 0, pooled_id = 0;   // the manager's ids of the two streams
        std::vector<TokenId> tokens;
        int32_t n_pooled = 0;                // pooled groups written (compressed, heavy)
        int32_t release_cursor = 0;          // token-table blocks before this were considered for release
        bool lossy = false;                  // tokens were evicted or pooled: no truncation into the past
        std::vector<float> sink_k;           // sliding: [storage][sinks][kv heads · head_dim], post-RoPE
        uint64_t read_bytes_last_step = 0;   // attention reads of its last query in the last step
        std::vector<std::vector<bool>> read_last;  // top-k: per model layer, token blocks its last query read
    };
    // One sequence's part of the step in flight.
    struct StepPart {
        Sequence* s = nullptr;
        SeqId id = 0;
        int32_t t0 = 0, n = 0, row0 = 0;     // first new token index, new tokens, first row in the step
        AttendPlan token_plan, selection_plan, merge_plan;
        std::vector<int32_t> sink_rotations;           // sliding: the distinct evicted counts its queries see
        std::vector<std::vector<float>> scratch;       // scratch streams' rows (f32)
        std::vector<std::vector<float>> stage_k, stage_v;  // cross-layer merge: members' step K/V
        uint64_t read_bytes = 0;
        uint64_t index_bytes_last = 0;       // indexer bytes of the last query, this layer
    };
    PagedKv() = default;
    Sequence& seq_state(SeqId seq);
    Status begin_part(StepPart& part, SeqId seq, std::span<const TokenId> tokens);
    void undo_part(StepPart& part);
    void write_rows(int32_t storage, Sequence& s, int32_t first_token, const float* k, const float* v, int64_t n);
    void write_part(int32_t layer, StepPart& part, const float* k, const float* v);
    void pool_groups(int32_t storage, Sequence& s, int32_t g0, int32_t g1);
    void build_token_plans(StepPart& part);
    const AttendPlan& part_plan(int32_t layer, StepPart& part, const float* q);
    void build_selection_plan(int32_t layer, StepPart& part, const float* q);
    void build_sink_streams(int32_t storage, StepPart& part);
    int32_t part_stream_count(int32_t layer, const StepPart& part) const;
    void release_unreachable(Sequence& s);
    int32_t pooled_count(int32_t t) const;   // pooled groups query t reads
    int32_t evicted_before(int32_t t) const;  // sliding: tokens released when query t runs
    uint64_t aux_block_bytes() const;
    KvStreamView token_stream(int32_t storage, const Sequence& s) const;
    KvStreamView pooled_stream(int32_t storage, const Sequence& s) const;

    AttentionSpec spec_;
    KvTypes types_;
    PagedKvShape shape_;
    bool rotate_k_ = false;
    uint64_t full_bytes_per_token_ = 0;
    std::vector<int32_t> owner_;          // model layer → the layer whose KV it reads
    std::vector<int32_t> storage_of_;     // model layer → storage index (of its owner)
    std::vector<std::vector<int32_t>> members_;  // storage index → the model layers sharing it
    std::unique_ptr<KvCacheManager> manager_;
    std::unique_ptr<KvStore> store_;
    std::vector<uint16_t> block_minmax_;  // topk index: [storage][block][kv head][min | max][head_dim] f16
    std::unordered_map<SeqId, std::unique_ptr<Sequence>> seqs_;
    uint64_t peak_ = 0;

    // The step in flight: parts_[0, n_parts_) (kept allocated across steps).
    std::vector<StepPart> parts_;
    int32_t n_parts_ = 0;
    std::vector<int32_t> positions_;
    AttendPlan batch_plan_;                  // the parts' plans joined, for steps of several sequences
    std::vector<KvStreamView> views_;
    std::vector<BlockId> scratch_blocks_{0}; // scratch streams are one flat block
    uint64_t read_bytes_ = 0;                // the last step's parts together
};

}  // namespace workbench
