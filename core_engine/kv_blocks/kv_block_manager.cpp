// Block tables, copy-on-write and prefix reuse over the BlockPool. Every mutating call checks all
// it needs (room, ids, prefix freshness) before its first change, so a failure leaves the pool
// and every table exactly as they were; the scheduler relies on that to retry or preempt.
#include "kv_blocks/kv_block_manager.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <limits>
#include <string>

#include "common/checked_math.h"

namespace workbench {
namespace {

std::string mib(uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return buf;
}

std::string seq_name(SeqId seq_id) { return "sequence " + std::to_string(seq_id); }

Status unknown_sequence(SeqId seq_id) { return error(StatusCode::not_found, "KV cache: no " + seq_name(seq_id)); }

// Bytes of one block, or nullopt on overflow (only absurd configs get there).
std::optional<uint64_t> checked_block_bytes(const KvCacheConfig& c) {
    const auto row_pair_bytes = [&](int32_t dim) {
        const uint64_t v_dim = static_cast<uint64_t>(c.head_dim_v > 0 ? c.head_dim_v : dim);
        return kv_bytes(c.types.k, static_cast<uint64_t>(dim)) + (c.values_in_keys ? 0 : kv_bytes(c.types.v, v_dim));
    };
    uint64_t per_head = 0;   // one token's K and V rows of one head, summed over the layers
    if (c.layer_head_dim.empty()) {
        if (!checked_mul(row_pair_bytes(c.head_dim), static_cast<uint64_t>(c.n_layers), per_head)) return std::nullopt;
    } else {
        for (int32_t dim : c.layer_head_dim) per_head += row_pair_bytes(dim);
    }
    uint64_t bytes = 0;
    if (!checked_mul(per_head, static_cast<uint64_t>(c.n_kv_heads), bytes) ||
        !checked_mul(bytes, static_cast<uint64_t>(c.n_tokens_per_block), bytes))
        return std::nullopt;
    return bytes;
}

}  // namespace

Status validate_kv_cache_config(const KvCacheConfig& c) {
    const std::pair<const char*, int32_t> counts[] = {{"n_layers", c.n_layers},
                                                       {"n_kv_heads", c.n_kv_heads},
                                                       {"head_dim", c.head_dim},
                                                       {"n_tokens_per_block", c.n_tokens_per_block}};
    for (const auto& [name, value] : counts)
        if (value < 1)
            return error(StatusCode::invalid_argument,
                         std::string("KV cache: ") + name + " is " + std::to_string(value) + ", expected at least 1");
    if (!c.layer_head_dim.empty() && c.layer_head_dim.size() != static_cast<size_t>(c.n_layers))
        return error(StatusCode::invalid_argument, "KV cache: " + std::to_string(c.layer_head_dim.size()) +
                                                       " per-layer row widths for " + std::to_string(c.n_layers) + " layers");
    for (int32_t layer = 0; layer < (c.layer_head_dim.empty() ? 1 : c.n_layers); ++layer) {
        const int32_t dim = c.head_dim_of(layer);
        if (dim < 1 || dim > c.head_dim)
            return error(StatusCode::invalid_argument, "KV cache: layer " + std::to_string(layer) + "'s row width " +
                                                           std::to_string(dim) + " is outside 1.." + std::to_string(c.head_dim));
        for (KvDType type : {c.types.k, c.types.v}) {
            const KvDTypeLayout& layout = kv_dtype_layout(type);
            if (type == c.types.v && c.head_dim_v > 0 && c.head_dim_v % static_cast<int32_t>(layout.block_values) != 0)
                return error(StatusCode::invalid_argument, "KV cache: value rows of " + std::to_string(c.head_dim_v) + " are not a multiple of " +
                                                               std::to_string(layout.block_values) + ", the block of KV type " +
                                                               std::string(layout.name) + "; choose f16 or bf16 for this model");
            if (dim % static_cast<int32_t>(layout.block_values) != 0)
                return error(StatusCode::invalid_argument,
                             "KV cache: head_dim " + std::to_string(dim) + " is not a multiple of " +
                                 std::to_string(layout.block_values) + ", the block of KV type " +
                                 std::string(layout.name) + "; choose f16 or bf16 for this model");
        }
    }
    if (c.head_dim_v < 0 || c.head_dim_v > 65536 || (c.head_dim_v > 0 && !c.layer_head_dim.empty()))
        return error(StatusCode::invalid_argument, "KV cache: value width " + std::to_string(c.head_dim_v) + " is out of range here");
    if (c.values_in_keys && c.types.k != c.types.v)
        return error(StatusCode::invalid_argument, "KV cache: this model's values are part of its keys (latent attention), so K and V "
                                                   "take one type; got " + std::string(kv_dtype_layout(c.types.k).name) + " and " +
                                                   std::string(kv_dtype_layout(c.types.v).name));
    if (!checked_block_bytes(c)) return error(StatusCode::invalid_argument, "KV cache: bytes per block overflow");
    return Status::ok_status();
}

uint64_t kv_bytes_per_block(const KvCacheConfig& config) { return checked_block_bytes(config).value_or(0); }

uint64_t kv_bytes_per_token(const KvCacheConfig& config) {
    return kv_bytes_per_block(config) / static_cast<uint64_t>(config.n_tokens_per_block);
}

Result<int32_t> kv_blocks_for_budget(const KvCacheConfig& config, uint64_t budget_bytes) {
    WB_RETURN_IF_ERROR(validate_kv_cache_config(config));
    const uint64_t per_block = kv_bytes_per_block(config);
    const uint64_t n_blocks = std::min<uint64_t>(budget_bytes / per_block, std::numeric_limits<int32_t>::max());
    if (n_blocks < 2)
        return error(StatusCode::resource_exhausted,
                     "--kv-budget " + mib(budget_bytes) + " holds " + std::to_string(n_blocks) + " KV blocks of " +
                         std::to_string(per_block) + " bytes (" + std::to_string(config.n_tokens_per_block) +
                         " tokens each); at least 2 are needed (block 0 is reserved): " + mib(2 * per_block));
    return static_cast<int32_t>(n_blocks);
}

Result<KvBlockManager> KvBlockManager::create(const KvCacheConfig& config, int32_t n_blocks) {
    WB_RETURN_IF_ERROR(validate_kv_cache_config(config));
    if (n_blocks < 2)
        return error(StatusCode::invalid_argument, "KV cache: " + std::to_string(n_blocks) +
                                                       " blocks requested, expected at least 2 (block 0 is reserved)");
    uint64_t total = 0;
    if (!checked_mul(kv_bytes_per_block(config), static_cast<uint64_t>(n_blocks), total))
        return error(StatusCode::invalid_argument,
                     "KV cache: " + std::to_string(n_blocks) + " blocks overflow the byte count");
    return KvBlockManager(config, n_blocks);
}

Result<KvBlockManager> KvBlockManager::create_for_budget(const KvCacheConfig& config, uint64_t budget_bytes) {
    WB_ASSIGN_OR_RETURN(const int32_t n_blocks, kv_blocks_for_budget(config, budget_bytes));
    return create(config, n_blocks);
}

KvBlockManager::KvBlockManager(const KvCacheConfig& config, int32_t n_blocks)
    : config_(config), pool_(n_blocks, config.n_tokens_per_block), bytes_per_block_(kv_bytes_per_block(config)) {}

CachedPrefix KvBlockManager::find_cached_prefix(std::span<const TokenId> token_ids) const {
    CachedPrefix prefix;
    const size_t bs = static_cast<size_t>(n_tokens_per_block());
    const size_t n_full = token_ids.empty() ? 0 : (token_ids.size() - 1) / bs;
    BlockHash parent = kRootBlockHash;
    for (size_t i = 0; i < n_full; ++i) {
        const BlockHash hash = hash_block_tokens(parent, token_ids.subspan(i * bs, bs));
        const std::optional<BlockId> block = pool_.lookup(hash);
        if (!block) break;
        prefix.blocks.push_back(*block);
        prefix.hashes.push_back(hash);
        parent = hash;
    }
    prefix.n_tokens = static_cast<int32_t>(prefix.blocks.size() * bs);
    return prefix;
}

Status KvBlockManager::check_prefix(const CachedPrefix& prefix, std::span<const TokenId> token_ids) const {
    const size_t bs = static_cast<size_t>(n_tokens_per_block());
    const size_t n_prefix = prefix.blocks.size() * bs;
    if (prefix.hashes.size() != prefix.blocks.size() || static_cast<size_t>(prefix.n_tokens) != n_prefix ||
        n_prefix > token_ids.size())
        return error(StatusCode::invalid_argument, "KV cache: malformed cached prefix of " +
                                                       std::to_string(prefix.n_tokens) + " tokens in " +
                                                       std::to_string(prefix.blocks.size()) + " blocks");
    BlockHash parent = kRootBlockHash;
    for (size_t i = 0; i < prefix.blocks.size(); ++i) {
        const BlockId block = prefix.blocks[i];
        if (hash_block_tokens(parent, token_ids.subspan(i * bs, bs)) != prefix.hashes[i])
            return error(StatusCode::invalid_argument,
                         "KV cache: cached prefix block " + std::to_string(i) + " does not match the token ids");
        if (block <= kNullBlock || block >= pool_.n_blocks() || pool_.block_hash(block) != prefix.hashes[i])
            return error(StatusCode::invalid_argument, "KV cache: cached prefix block " + std::to_string(block) +
                                                           " was evicted since find_cached_prefix; look it up again");
        parent = prefix.hashes[i];
    }
    return Status::ok_status();
}

int64_t KvBlockManager::n_blocks_for(int64_t n_tokens) const {
    const int64_t bs = n_tokens_per_block();
    return (n_tokens + bs - 1) / bs;
}

Status KvBlockManager::no_room(SeqId seq_id, int32_t n_needed, int32_t n_available) const {
    return error(StatusCode::resource_exhausted, "KV cache: " + seq_name(seq_id) + " needs " +
                                                     std::to_string(n_needed) + " more blocks, " +
                                                     std::to_string(n_available) + " can be taken now");
}

Status KvBlockManager::never_fits(SeqId seq_id, int64_t n_tokens) const {
    const int64_t n_blocks = n_blocks_for(n_tokens);
    // The budget that would hold it: its blocks plus the reserved null block.
    const uint64_t budget = static_cast<uint64_t>(n_blocks + 1) * bytes_per_block_;
    return error(StatusCode::out_of_range,
                 "KV cache: " + seq_name(seq_id) + " would hold " + std::to_string(n_tokens) + " tokens in " +
                     std::to_string(n_blocks) + " blocks, but the pool has " + std::to_string(pool_.n_usable()) +
                     " usable blocks (" + std::to_string(max_tokens_per_sequence()) +
                     " tokens); raise --kv-budget to at least " + mib(budget) + " or shorten the request");
}

Result<SlotAllocation> KvBlockManager::allocate_slots(SeqId seq_id, int32_t n_tokens_to_add,
                                                      std::span<const TokenId> all_token_ids,
                                                      const CachedPrefix& prefix) {
    const auto it = seqs_.find(seq_id);
    const bool is_new = it == seqs_.end();
    if (n_tokens_to_add < 0)
        return error(StatusCode::invalid_argument, "KV cache: " + seq_name(seq_id) + ": cannot add " +
                                                       std::to_string(n_tokens_to_add) + " tokens");
    if (!is_new && !prefix.blocks.empty())
        return error(StatusCode::invalid_argument,
                     "KV cache: " + seq_name(seq_id) + " already exists; a cached prefix only starts a sequence");

    const int64_t n_old = is_new ? prefix.n_tokens : it->second.n_tokens;
    const int64_t n_new = n_old + n_tokens_to_add;
    if (static_cast<int64_t>(all_token_ids.size()) < n_new)
        return error(StatusCode::invalid_argument, "KV cache: " + seq_name(seq_id) + " will hold " +
                                                       std::to_string(n_new) + " tokens but " +
                                                       std::to_string(all_token_ids.size()) + " token ids were given");
    const int64_t n_holes = is_new ? 0 : std::count(it->second.blocks.begin(), it->second.blocks.end(), kNullBlock);
    if (n_blocks_for(n_new) - n_holes > pool_.n_usable() || n_new > std::numeric_limits<int32_t>::max())
        return never_fits(seq_id, n_new);
    if (is_new) WB_RETURN_IF_ERROR(check_prefix(prefix, all_token_ids));

    // Count everything before touching anything: revived prefix blocks leave the free queue too.
    const std::vector<BlockId>& old_blocks = is_new ? prefix.blocks : it->second.blocks;
    const bool writes_partial = n_tokens_to_add > 0 && n_old % n_tokens_per_block() != 0;
    const bool copy_on_write = writes_partial && pool_.ref_count(old_blocks.back()) > 1;
    const int32_t n_fresh = static_cast<int32_t>(n_blocks_for(n_new) - static_cast<int64_t>(old_blocks.size()));
    const int32_t n_needed = n_fresh + (copy_on_write ? 1 : 0);
    const int32_t n_revived = is_new ? static_cast<int32_t>(std::count_if(prefix.blocks.begin(), prefix.blocks.end(),
                                                                          [&](BlockId b) { return pool_.is_free(b); }))
                                     : 0;
    if (n_needed > pool_.n_free() - n_revived) return no_room(seq_id, n_needed, pool_.n_free() - n_revived);

    Sequence& seq = is_new ? seqs_[seq_id] : it->second;
    if (is_new) {
        pool_.acquire(prefix.blocks);
        seq.blocks = prefix.blocks;
        seq.hashes = prefix.hashes;
        seq.n_tokens = seq.n_tokens_committed = prefix.n_tokens;
    }
    SlotAllocation out;
    if (copy_on_write) {
        const BlockId src = seq.blocks.back();
        const BlockId dst = pool_.allocate(1).value().front();
        pool_.release(std::span(&src, 1));
        seq.blocks.back() = dst;
        out.copy = BlockCopy{src, dst};
        out.new_blocks.push_back(dst);
    } else if (writes_partial) {
        // Ours alone but still cached from before a truncate: its contents are about to change.
        pool_.unregister_hash(seq.blocks.back());
    }
    const std::vector<BlockId> fresh = pool_.allocate(n_fresh).value();  // room was checked above
    seq.blocks.insert(seq.blocks.end(), fresh.begin(), fresh.end());
    out.new_blocks.insert(out.new_blocks.end(), fresh.begin(), fresh.end());

    const size_t bs = static_cast<size_t>(n_tokens_per_block());
    BlockHash parent = seq.hashes.empty() ? kRootBlockHash : seq.hashes.back();
    for (size_t i = seq.hashes.size(); i < static_cast<size_t>(n_new) / bs; ++i) {
        parent = hash_block_tokens(parent, all_token_ids.subspan(i * bs, bs));
        seq.hashes.push_back(parent);
    }
    seq.n_tokens = static_cast<int32_t>(n_new);
    peak_bytes_in_use_ = std::max(peak_bytes_in_use_, bytes_in_use());
    return out;
}

Status KvBlockManager::commit(SeqId seq_id) {
    const auto it = seqs_.find(seq_id);
    if (it == seqs_.end()) return unknown_sequence(seq_id);
    Sequence& seq = it->second;
    const size_t first = static_cast<size_t>(seq.n_tokens_committed / n_tokens_per_block());
    for (size_t i = first; i < seq.hashes.size(); ++i)
        if (seq.blocks[i] != kNullBlock) pool_.register_hash(seq.blocks[i], seq.hashes[i]);
    seq.n_tokens_committed = seq.n_tokens;
    return Status::ok_status();
}

Status KvBlockManager::rollback(SeqId seq_id) { return truncate(seq_id, n_tokens_committed(seq_id)); }

Status KvBlockManager::fork(SeqId parent, SeqId child) {
    const auto it = seqs_.find(parent);
    if (it == seqs_.end()) return unknown_sequence(parent);
    if (seqs_.contains(child))
        return error(StatusCode::invalid_argument, "KV cache: cannot fork " + seq_name(parent) + " into " +
                                                       seq_name(child) + ", which already exists");
    pool_.acquire(it->second.blocks);
    Sequence copy = it->second;  // before inserting: the insert may rehash and move the parent
    seqs_.emplace(child, std::move(copy));
    return Status::ok_status();
}

Status KvBlockManager::free(SeqId seq_id) {
    const auto it = seqs_.find(seq_id);
    if (it == seqs_.end()) return unknown_sequence(seq_id);
    release_tail(it->second, 0);
    seqs_.erase(it);
    return Status::ok_status();
}

Status KvBlockManager::truncate(SeqId seq_id, int32_t n_tokens) {
    const auto it = seqs_.find(seq_id);
    if (it == seqs_.end()) return unknown_sequence(seq_id);
    Sequence& seq = it->second;
    if (n_tokens < 0 || n_tokens > seq.n_tokens)
        return error(StatusCode::invalid_argument, "KV cache: cannot truncate " + seq_name(seq_id) + " of " +
                                                       std::to_string(seq.n_tokens) + " tokens to " +
                                                       std::to_string(n_tokens));
    if (n_tokens > 0 && n_tokens % n_tokens_per_block() != 0 &&
        seq.blocks[static_cast<size_t>(n_tokens / n_tokens_per_block())] == kNullBlock)
        return error(StatusCode::invalid_argument, "KV cache: cannot truncate " + seq_name(seq_id) + " to " +
                                                       std::to_string(n_tokens) + " tokens: that block was released");
    release_tail(seq, static_cast<size_t>(n_blocks_for(n_tokens)));
    seq.hashes.resize(std::min(seq.hashes.size(), static_cast<size_t>(n_tokens / n_tokens_per_block())));
    seq.n_tokens = n_tokens;
    seq.n_tokens_committed = std::min(seq.n_tokens_committed, n_tokens);
    return Status::ok_status();
}

void KvBlockManager::release_tail(Sequence& seq, size_t n_keep) {
    // Reversed, so the free queue meets the tail first and evicts it before the shared prefix.
    std::vector<BlockId> tail(seq.blocks.begin() + static_cast<std::ptrdiff_t>(n_keep), seq.blocks.end());
    std::reverse(tail.begin(), tail.end());
    pool_.release(tail);
    seq.blocks.resize(n_keep);
}

Status KvBlockManager::release_blocks(SeqId seq_id, int32_t first, int32_t end) {
    const auto it = seqs_.find(seq_id);
    if (it == seqs_.end()) return unknown_sequence(seq_id);
    Sequence& seq = it->second;
    if (first < 0 || end < first || end > static_cast<int32_t>(seq.blocks.size()))
        return error(StatusCode::invalid_argument, "KV cache: cannot release blocks [" + std::to_string(first) + ", " +
                                                       std::to_string(end) + ") of " + seq_name(seq_id) + ", which has " +
                                                       std::to_string(seq.blocks.size()));
    for (int32_t i = first; i < end; ++i) {
        BlockId& b = seq.blocks[static_cast<size_t>(i)];
        pool_.release(std::span(&b, 1));
        b = kNullBlock;
    }
    return Status::ok_status();
}

int32_t KvBlockManager::n_live_blocks(SeqId seq_id) const {
    const auto table = block_table(seq_id);
    return static_cast<int32_t>(std::count_if(table.begin(), table.end(), [](BlockId b) { return b != kNullBlock; }));
}

int32_t KvBlockManager::n_tokens(SeqId seq_id) const {
    const auto it = seqs_.find(seq_id);
    return it == seqs_.end() ? 0 : it->second.n_tokens;
}

int32_t KvBlockManager::n_tokens_committed(SeqId seq_id) const {
    const auto it = seqs_.find(seq_id);
    return it == seqs_.end() ? 0 : it->second.n_tokens_committed;
}

std::span<const BlockId> KvBlockManager::block_table(SeqId seq_id) const {
    const auto it = seqs_.find(seq_id);
    if (it == seqs_.end()) return {};
    return it->second.blocks;
}

uint64_t KvBlockManager::bytes_in_use() const {
    return static_cast<uint64_t>(pool_.n_usable() - pool_.n_free()) * bytes_per_block_;
}

uint64_t KvBlockManager::bytes_cached_free() const {
    return static_cast<uint64_t>(pool_.n_cached_free()) * bytes_per_block_;
}

uint64_t KvBlockManager::sequence_bytes(SeqId seq_id) const {
    return static_cast<uint64_t>(n_live_blocks(seq_id)) * bytes_per_block_;
}

}  // namespace workbench
