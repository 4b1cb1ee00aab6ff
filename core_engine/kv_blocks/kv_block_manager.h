// Per-sequence block tables over one BlockPool: slot allocation with copy-on-write, prefix-cache
// hits, forks, truncation, and byte accounting from the KV types and model shape. Bookkeeping
// only: it returns block ids and (src, dst) copies for the KV cache (attention/paged_kv) to make
// in its store, and never touches KV data.
// Not thread-safe: the thread that owns the engine owns the manager.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv_blocks/block_pool.h"
#include "kv_blocks/kv_dtype.h"
#include "workbench/status.h"
#include "workbench/types.h"

namespace workbench {

using SeqId = int64_t;

struct KvCacheConfig {
    KvTypes types;
    int32_t n_layers = 0;
    int32_t n_kv_heads = 0;
    int32_t head_dim = 0;              // quantized types need a multiple of their block (32)
    int32_t n_tokens_per_block = 16;
    // Per layer where the row width differs by layer (latent ranks per layer; head_dim is then the
    // widest); empty: head_dim in every layer.
    std::vector<int32_t> layer_head_dim;
    // V is each K row's first values (DeepSeek's latent attention: the row is [c | RoPE key] and
    // V is c): there is no V arena, and a token's bytes are its K rows alone. K and V types match.
    bool values_in_keys = false;
    // V rows narrower than K rows, in their own arena (latent attention expanded per head: keys of
    // nope + RoPE values, values of head_v); 0: head_dim. Not with per-layer widths.
    int32_t head_dim_v = 0;
    int32_t head_dim_of(int32_t layer) const {
        return layer_head_dim.empty() ? head_dim : layer_head_dim[static_cast<size_t>(layer)];
    }
    int32_t value_dim_of(int32_t layer) const { return head_dim_v > 0 ? head_dim_v : head_dim_of(layer); }
};

// invalid_argument naming the field when a count is < 1, head_dim does not split into whole
// blocks of a quantized type, or the byte sizes overflow.
Status validate_kv_cache_config(const KvCacheConfig& config);

// K + V bytes of one token over all layers: n_layers · n_kv_heads · (bytes_k(head_dim) +
// bytes_v(head_dim)), without the V term when values_in_keys; scales included. Both require a valid config.
uint64_t kv_bytes_per_token(const KvCacheConfig& config);
uint64_t kv_bytes_per_block(const KvCacheConfig& config);

// Blocks (the null block included) that `budget_bytes` holds: floor(budget / bytes per block).
// resource_exhausted, with the smallest workable budget, when that is under 2.
Result<int32_t> kv_blocks_for_budget(const KvCacheConfig& config, uint64_t budget_bytes);

// The full blocks of a prompt already in the cache, from the start.
struct CachedPrefix {
    int32_t n_tokens = 0;              // blocks.size() · n_tokens_per_block
    std::vector<BlockId> blocks;
    std::vector<BlockHash> hashes;     // per block, so a stale prefix is caught
};

// Copy block `src`'s KV into `dst` (all layers) before any of this step's KV writes: `src` stays
// shared, and a sibling may write into it in place during the same step.
struct BlockCopy {
    BlockId src = kNullBlock;
    BlockId dst = kNullBlock;
    friend bool operator==(const BlockCopy&, const BlockCopy&) = default;
};

struct SlotAllocation {
    std::vector<BlockId> new_blocks;   // fresh from the pool, in table order; a copy's dst first
    std::optional<BlockCopy> copy;     // set when the last block was shared and partly filled
};

class KvBlockManager {
public:
    // invalid_argument for a bad config, n_blocks < 2 (block 0 is reserved) or a byte overflow.
    static Result<KvBlockManager> create(const KvCacheConfig& config, int32_t n_blocks);
    // As create, with the pool sized by kv_blocks_for_budget (--kv-budget).
    static Result<KvBlockManager> create_for_budget(const KvCacheConfig& config, uint64_t budget_bytes);

    const KvCacheConfig& config() const { return config_; }
    const BlockPool& pool() const { return pool_; }
    int32_t n_tokens_per_block() const { return pool_.n_tokens_per_block(); }
    // The longest sequence the pool can ever hold, alone.
    int64_t max_tokens_per_sequence() const {
        return static_cast<int64_t>(pool_.n_usable()) * pool_.n_tokens_per_block();
    }

    // The cached full blocks at the start of `token_ids`. The last token is never covered, so a
    // step always computes at least one token and yields logits. Read-only: pass the result to
    // allocate_slots right away, before other allocations can evict it.
    CachedPrefix find_cached_prefix(std::span<const TokenId> token_ids) const;

    // Makes room for `n_tokens_to_add` more tokens of `seq_id`. `all_token_ids` holds the
    // sequence's tokens from its start, at least through the added ones (a longer prompt is fine,
    // for chunked prefill); blocks that fill up are hashed from it and become shareable at commit.
    // A new seq_id starts here, adopting `prefix` (from find_cached_prefix on the same tokens).
    // Errors, with nothing changed: resource_exhausted when the free blocks do not suffice now;
    // out_of_range when the sequence would exceed the whole pool (it can never fit);
    // invalid_argument for a negative count, too few token ids, a prefix on an existing sequence,
    // or a prefix that does not match the tokens or was evicted since it was found.
    Result<SlotAllocation> allocate_slots(SeqId seq_id, int32_t n_tokens_to_add, std::span<const TokenId> all_token_ids,
                                          const CachedPrefix& prefix = {});

    // The step that wrote this sequence's allocated slots succeeded: its full blocks enter the
    // prefix cache. not_found for an unknown sequence.
    Status commit(SeqId seq_id);
    // The step failed: drops the slots allocated since the last commit (truncate to committed).
    // A copy-on-write from those allocations stays in the table: its dst holds only committed
    // data once copied, so the runner copies before writing; if the copy itself failed, free the
    // sequence instead.
    Status rollback(SeqId seq_id);

    // `child` shares all of `parent`'s blocks (n samples of one prompt); the first to write into
    // a shared partial block gets a copy. not_found / invalid_argument (child exists).
    Status fork(SeqId parent, SeqId child);

    // Releases all blocks, last block first, so a sequence's tail is evicted before its prefix.
    Status free(SeqId seq_id);

    // Keeps the first `n_tokens` tokens (regenerate, edit); blocks past them are released tail
    // first. invalid_argument when n_tokens is negative or above the sequence's length.
    Status truncate(SeqId seq_id, int32_t n_tokens);

    // Releases the blocks at table indices [first, end) and leaves null blocks (holes) in their
    // place: a sliding window or a compressed cache drops what no future query reads, while the
    // table keeps indexing tokens by position. Holes are never written again: a truncate into a
    // hole is an error. invalid_argument for a bad range; not_found for an unknown sequence.
    Status release_blocks(SeqId seq_id, int32_t first, int32_t end);
    // Blocks the sequence holds (its table less its holes).
    int32_t n_live_blocks(SeqId seq_id) const;

    bool has_sequence(SeqId seq_id) const { return seqs_.contains(seq_id); }
    int32_t n_sequences() const { return static_cast<int32_t>(seqs_.size()); }
    int32_t n_tokens(SeqId seq_id) const;             // 0 for an unknown sequence
    int32_t n_tokens_committed(SeqId seq_id) const;   // 0 for an unknown sequence
    std::span<const BlockId> block_table(SeqId seq_id) const;  // empty for an unknown sequence

    uint64_t bytes_per_token() const { return bytes_per_block_ / static_cast<uint64_t>(n_tokens_per_block()); }
    uint64_t bytes_per_block() const { return bytes_per_block_; }
    // The whole pool, null block included: what the store allocates.
    uint64_t bytes_allocated() const { return bytes_per_block_ * static_cast<uint64_t>(pool_.n_blocks()); }
    // Distinct blocks referenced by at least one sequence (a shared block counts once).
    uint64_t bytes_in_use() const;
    uint64_t peak_bytes_in_use() const { return peak_bytes_in_use_; }
    // Free blocks still holding a cached prefix: reusable until evicted.
    uint64_t bytes_cached_free() const;
    // Evicts those now (a benchmark's prompt then runs whole); sequences' own blocks stay shareable.
    void forget_free_prefixes() { pool_.forget_free_hashes(); }
    // The sequence's whole block table; blocks it shares count fully here too.
    uint64_t sequence_bytes(SeqId seq_id) const;

private:
    struct Sequence {
        std::vector<BlockId> blocks;
        std::vector<BlockHash> hashes;     // one per full block
        int32_t n_tokens = 0;
        int32_t n_tokens_committed = 0;
    };

    KvBlockManager(const KvCacheConfig& config, int32_t n_blocks);

    int64_t n_blocks_for(int64_t n_tokens) const;
    Status check_prefix(const CachedPrefix& prefix, std::span<const TokenId> token_ids) const;
    Status no_room(SeqId seq_id, int32_t n_needed, int32_t n_available) const;
    Status never_fits(SeqId seq_id, int64_t n_tokens) const;
    void release_tail(Sequence& seq, size_t n_keep);

    KvCacheConfig config_;
    BlockPool pool_;
    uint64_t bytes_per_block_ = 0;
    uint64_t peak_bytes_in_use_ = 0;
    std::unordered_map<SeqId, Sequence> seqs_;
};

}  // namespace workbench
