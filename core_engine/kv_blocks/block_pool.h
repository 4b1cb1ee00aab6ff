// The pool of fixed-size KV blocks: ref counts, the free queue in eviction order, and the
// prefix-cache index from chained block hashes to blocks. Bookkeeping only: it never touches KV
// data (the KV cache copies blocks in its store) and knows nothing of sequences.
// Not thread-safe: the thread that owns the engine owns the pool.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "workbench/status.h"
#include "workbench/types.h"

namespace workbench {

using BlockId = int32_t;
using BlockHash = uint64_t;

// Block 0 is never handed out: a block table may pad with it, and a kernel reading it reads
// memory that exists but holds nothing (as vLLM's null block).
constexpr BlockId kNullBlock = 0;
// The parent hash of a sequence's first block.
constexpr BlockHash kRootBlockHash = 0x6b76'6361'6368'6521ull;

// Hash of a full block: chained over the parent block's hash, so equal hashes mean (up to a 64-bit
// collision, odds ~n²/2⁶⁵ for n cached blocks) equal token ids from the sequence start up to here.
BlockHash hash_block_tokens(BlockHash parent, std::span<const TokenId> token_ids);

class BlockPool {
public:
    // `n_blocks` counts the null block, so n_blocks - 1 can be handed out; requires n_blocks >= 1
    // and n_tokens_per_block >= 1 (the manager validates both before constructing).
    BlockPool(int32_t n_blocks, int32_t n_tokens_per_block);

    int32_t n_blocks() const { return static_cast<int32_t>(blocks_.size()); }
    int32_t n_usable() const { return n_blocks() - 1; }
    int32_t n_tokens_per_block() const { return n_tokens_per_block_; }
    // Blocks in the free queue: never used, released, or cached with no reference.
    int32_t n_free() const { return n_free_; }
    // Blocks registered under a hash, referenced or not.
    int32_t n_cached() const { return static_cast<int32_t>(cached_.size()); }
    // Cached blocks in the free queue: reusable by a prefix hit until evicted.
    int32_t n_cached_free() const { return n_cached_free_; }

    // Takes `n` blocks from the head of the free queue, each with ref count 1; a cached one loses
    // its hash (evicted). resource_exhausted when fewer than n are free, and then nothing changed.
    Result<std::vector<BlockId>> allocate(int32_t n);

    // Adds a reference to each block (a prefix hit or a fork); a block at ref count 0 leaves the
    // free queue, keeping its hash. Null blocks (holes in a table) are skipped.
    void acquire(std::span<const BlockId> blocks);

    // Drops a reference from each block, in order; a block reaching 0 joins the tail of the free
    // queue, so the first listed is evicted first. Each must hold a reference; null blocks are
    // skipped.
    void release(std::span<const BlockId> blocks);

    // The block cached under `hash`, if any; referenced or free.
    std::optional<BlockId> lookup(BlockHash hash) const;

    // Registers a full, written block under `hash`. False (and nothing changes) when another
    // block already holds that hash; registering a block's own hash again is a no-op returning true.
    bool register_hash(BlockId block, BlockHash hash);

    // Forgets a block's hash (its contents are about to change); a no-op for an uncached block.
    void unregister_hash(BlockId block);
    // Forgets the hashes of every free block, so no later prompt finds them as a cached prefix,
    // and puts the free queue back in ascending ids (a fresh pool's order).
    void forget_free_hashes();

    int32_t ref_count(BlockId block) const { return blocks_[static_cast<size_t>(block)].ref_count; }
    std::optional<BlockHash> block_hash(BlockId block) const;
    bool is_free(BlockId block) const { return blocks_[static_cast<size_t>(block)].in_free_queue; }

    // The free queue head to tail (the next allocation's order), for tests and the block map.
    std::vector<BlockId> free_queue() const;

private:
    static constexpr BlockId kNone = -1;

    struct Block {
        int32_t ref_count = 0;
        bool in_free_queue = false;
        bool has_hash = false;
        BlockHash hash = 0;
        BlockId prev = kNone;  // free-queue neighbours, kNone at the ends or when not queued
        BlockId next = kNone;
    };

    Block& at(BlockId block) { return blocks_[static_cast<size_t>(block)]; }
    void push_back(BlockId block);
    void unlink(BlockId block);

    int32_t n_tokens_per_block_;
    std::vector<Block> blocks_;
    BlockId head_ = kNone;
    BlockId tail_ = kNone;
    int32_t n_free_ = 0;
    int32_t n_cached_free_ = 0;
    std::unordered_map<BlockHash, BlockId> cached_;
};

}  // namespace workbench
