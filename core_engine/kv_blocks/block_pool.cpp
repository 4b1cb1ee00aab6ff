// The block pool: an intrusive doubly linked free queue (O(1) removal when a prefix hit revives a
// cached block from the middle) over a flat block array, plus the hash → block index.
#include "kv_blocks/block_pool.h"

#include <cassert>
#include <string>

namespace workbench {
namespace {

// splitmix64's finalizer: a bijection with full avalanche, so chained hashes spread evenly.
uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

}  // namespace

BlockHash hash_block_tokens(BlockHash parent, std::span<const TokenId> token_ids) {
    // The count enters first so blocks of different sizes never share a chain.
    uint64_t h = mix64(parent ^ (0x9e3779b97f4a7c15ull * (token_ids.size() + 1)));
    for (TokenId t : token_ids) h = mix64(h + static_cast<uint32_t>(t) + 0x9e3779b97f4a7c15ull);
    return h;
}

BlockPool::BlockPool(int32_t n_blocks, int32_t n_tokens_per_block)
    : n_tokens_per_block_(n_tokens_per_block), blocks_(static_cast<size_t>(n_blocks)) {
    assert(n_blocks >= 1 && n_tokens_per_block >= 1);
    // Ascending ids: a fresh pool hands out 1, 2, 3, ... which keeps tests and the block map legible.
    for (BlockId b = 1; b < n_blocks; ++b) push_back(b);
}

Result<std::vector<BlockId>> BlockPool::allocate(int32_t n) {
    if (n < 0 || n > n_free_)
        return error(StatusCode::resource_exhausted, "KV block pool: need " + std::to_string(n) + " free blocks, " +
                                                         std::to_string(n_free_) + " free of " +
                                                         std::to_string(n_usable()));
    std::vector<BlockId> out;
    out.reserve(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) {
        const BlockId b = head_;
        unlink(b);
        unregister_hash(b);  // evicting a cached block: its old contents are about to be overwritten
        at(b).ref_count = 1;
        out.push_back(b);
    }
    return out;
}

void BlockPool::acquire(std::span<const BlockId> blocks) {
    for (BlockId b : blocks) {
        if (b == kNullBlock) continue;  // a hole left by release_blocks
        assert(b > kNullBlock && b < n_blocks());
        if (at(b).ref_count == 0) unlink(b);
        ++at(b).ref_count;
    }
}

void BlockPool::release(std::span<const BlockId> blocks) {
    for (BlockId b : blocks) {
        if (b == kNullBlock) continue;  // a hole left by release_blocks
        assert(b > kNullBlock && b < n_blocks() && at(b).ref_count > 0);
        if (--at(b).ref_count == 0) push_back(b);
    }
}

std::optional<BlockId> BlockPool::lookup(BlockHash hash) const {
    const auto it = cached_.find(hash);
    if (it == cached_.end()) return std::nullopt;
    return it->second;
}

bool BlockPool::register_hash(BlockId block, BlockHash hash) {
    assert(block > kNullBlock && block < n_blocks());
    Block& meta = at(block);
    if (meta.has_hash) {
        // A full block's contents are fixed until it is uncached, so its hash cannot change.
        assert(meta.hash == hash);
        return meta.hash == hash;
    }
    // Two sequences computed the same block side by side: the first one stays the cached copy.
    if (!cached_.emplace(hash, block).second) return false;
    meta.has_hash = true;
    meta.hash = hash;
    if (meta.in_free_queue) ++n_cached_free_;
    return true;
}

void BlockPool::unregister_hash(BlockId block) {
    Block& meta = at(block);
    if (!meta.has_hash) return;
    cached_.erase(meta.hash);
    if (meta.in_free_queue) --n_cached_free_;
    meta.has_hash = false;
    meta.hash = 0;
}

void BlockPool::forget_free_hashes() {
    // With no hash left to keep for, the queue's eviction order means nothing: put it back in
    // ascending ids, as a fresh pool has it, so a new sequence's blocks lie in address order
    // (released tail-first they would come out backwards, and a long decode reads them all).
    const std::vector<BlockId> queued = free_queue();
    for (BlockId b : queued) {
        unregister_hash(b);
        unlink(b);
    }
    for (BlockId b = 1; b < n_blocks(); ++b)
        if (at(b).ref_count == 0) push_back(b);
}

std::optional<BlockHash> BlockPool::block_hash(BlockId block) const {
    const Block& meta = blocks_[static_cast<size_t>(block)];
    if (!meta.has_hash) return std::nullopt;
    return meta.hash;
}

std::vector<BlockId> BlockPool::free_queue() const {
    std::vector<BlockId> out;
    out.reserve(static_cast<size_t>(n_free_));
    for (BlockId b = head_; b != kNone; b = blocks_[static_cast<size_t>(b)].next) out.push_back(b);
    return out;
}

void BlockPool::push_back(BlockId block) {
    Block& meta = at(block);
    assert(!meta.in_free_queue);
    meta.prev = tail_;
    meta.next = kNone;
    if (tail_ != kNone)
        at(tail_).next = block;
    else
        head_ = block;
    tail_ = block;
    meta.in_free_queue = true;
    ++n_free_;
    if (meta.has_hash) ++n_cached_free_;
}

void BlockPool::unlink(BlockId block) {
    Block& meta = at(block);
    assert(meta.in_free_queue);
    if (meta.prev != kNone)
        at(meta.prev).next = meta.next;
    else
        head_ = meta.next;
    if (meta.next != kNone)
        at(meta.next).prev = meta.prev;
    else
        tail_ = meta.prev;
    meta.prev = meta.next = kNone;
    meta.in_free_queue = false;
    --n_free_;
    if (meta.has_hash) --n_cached_free_;
}

}  // namespace workbench
