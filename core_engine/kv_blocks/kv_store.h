// The KV cache's bytes: for each stored layer, a K arena and a V arena of n_blocks blocks laid out
// [block][kv head][token slot][row], rows in the layer's K or V element type and width (the same
// in every layer unless the config gives widths per layer): one head's rows of a
// block are contiguous, so attention (one KV head at a time) streams whole cache lines of its own. Block ids come from
// the KvBlockManager over the same config; this class only maps (block, slot, head) to bytes.
// Arenas are allocated uninitialised, so pages become resident only as blocks are first written.
// With values_in_keys (KvCacheConfig) there is no V arena: V rows are the K rows (a reader takes
// their first values), and writers skip V.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kv_blocks/block_pool.h"
#include "kv_blocks/kv_block_manager.h"

namespace workbench {

// A copy of a store's bytes kept elsewhere (a device backend's KV cache): told of the changes
// that do not come through that copy's own row writes — block copies (copy-on-write), rows the
// host wrote (a policy that keeps its state on the host writes here, and the copy follows) — and
// of the store going away. Called on the engine's thread.
class KvStoreMirror {
public:
    virtual void block_copied(uint64_t store_id, BlockId src, BlockId dst) = 0;
    virtual void block_written(uint64_t store_id, int32_t layer, BlockId block) = 0;
    virtual void store_released(uint64_t store_id) = 0;

protected:
    ~KvStoreMirror() = default;
};

// Where one element type's rows sit in an arena.
struct KvRowLayout {
    KvDType type = KvDType::f16;
    int64_t row_bytes = 0;      // one head's row
    int64_t token_stride = 0;   // from a token's row to the next token's, same head
    int64_t head_stride = 0;    // from a head's row to the next head's, same token
    int64_t block_stride = 0;   // a whole block
};

class KvStore {
public:
    // resource_exhausted (with the bytes asked) when an arena cannot be allocated.
    static Result<std::unique_ptr<KvStore>> create(const KvCacheConfig& config, int32_t n_blocks);
    KvStore();
    ~KvStore();
    KvStore(const KvStore&) = delete;
    KvStore& operator=(const KvStore&) = delete;

    // Unique in the process: a mirror tells stores apart by it (an address can be reused).
    uint64_t id() const { return id_; }
    int32_t n_blocks() const { return n_blocks_; }
    // At most one mirror; null detaches it.
    void set_mirror(KvStoreMirror* mirror) { mirror_ = mirror; }
    KvStoreMirror* mirror() const { return mirror_; }

    const KvRowLayout& k_layout(int32_t layer) const { return k_layouts_[static_cast<size_t>(layer)]; }
    const KvRowLayout& v_layout(int32_t layer) const { return v_layouts_[static_cast<size_t>(layer)]; }
    // One token's K and V row bytes in one head, and one block's K and V bytes (V counted once: not at all when it is inside K).
    int64_t row_pair_bytes(int32_t layer) const { return k_layout(layer).row_bytes + (values_in_keys_ ? 0 : v_layout(layer).row_bytes); }
    int64_t block_pair_bytes(int32_t layer) const { return k_layout(layer).block_stride + (values_in_keys_ ? 0 : v_layout(layer).block_stride); }
    // Whether every layer's rows have one width.
    bool uniform_rows() const { return uniform_rows_; }
    int32_t n_layers() const { return static_cast<int32_t>(k_.size()); }
    int32_t n_tokens_per_block() const { return n_tokens_per_block_; }

    uint8_t* k_base(int32_t layer) { return k_[static_cast<size_t>(layer)].get(); }
    uint8_t* v_base(int32_t layer) { return values_in_keys_ ? k_base(layer) : v_[static_cast<size_t>(layer)].get(); }
    bool values_in_keys() const { return values_in_keys_; }
    uint8_t* k_row(int32_t layer, BlockId block, int32_t slot, int32_t head) {
        const KvRowLayout& l = k_layout(layer);
        return k_base(layer) + block * l.block_stride + slot * l.token_stride + head * l.head_stride;
    }
    uint8_t* v_row(int32_t layer, BlockId block, int32_t slot, int32_t head) {
        const KvRowLayout& l = v_layout(layer);
        return v_base(layer) + block * l.block_stride + slot * l.token_stride + head * l.head_stride;
    }

    // Copies one block's K and V in every layer (copy-on-write).
    void copy_block(BlockId src, BlockId dst);
    // Rows of `block` in `layer` were written through k_row/v_row (writers call it once a row's
    // heads are all written).
    void note_written(int32_t layer, BlockId block) {
        if (mirror_) mirror_->block_written(id_, layer, block);
    }

private:
    std::vector<KvRowLayout> k_layouts_, v_layouts_;   // per layer
    bool uniform_rows_ = true;
    bool values_in_keys_ = false;
    int32_t n_tokens_per_block_ = 0, n_blocks_ = 0;
    uint64_t id_ = 0;
    KvStoreMirror* mirror_ = nullptr;
    std::vector<std::unique_ptr<uint8_t[]>> k_, v_;
};

}  // namespace workbench
