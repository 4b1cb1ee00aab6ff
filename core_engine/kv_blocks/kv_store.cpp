// KV arenas. `new uint8_t[n]` without value-initialisation leaves pages untouched until written.
#include "kv_blocks/kv_store.h"

#include <atomic>
#include <cstring>
#include <new>

namespace workbench {

KvStore::KvStore() {
    static std::atomic<uint64_t> next_id{1};
    id_ = next_id++;
}

KvStore::~KvStore() {
    if (mirror_) mirror_->store_released(id_);
}

Result<std::unique_ptr<KvStore>> KvStore::create(const KvCacheConfig& config, int32_t n_blocks) {
    WB_RETURN_IF_ERROR(validate_kv_cache_config(config));
    auto store = std::make_unique<KvStore>();
    auto layout = [&](KvDType type, int32_t dim) {
        KvRowLayout l;
        l.type = type;
        l.row_bytes = static_cast<int64_t>(kv_bytes(type, static_cast<uint64_t>(dim)));
        l.token_stride = l.row_bytes;
        l.head_stride = l.row_bytes * config.n_tokens_per_block;
        l.block_stride = l.head_stride * config.n_kv_heads;
        return l;
    };
    store->n_tokens_per_block_ = config.n_tokens_per_block;
    store->n_blocks_ = n_blocks;
    store->values_in_keys_ = config.values_in_keys;
    for (int32_t il = 0; il < config.n_layers; ++il) {
        store->k_layouts_.push_back(layout(config.types.k, config.head_dim_of(il)));
        store->v_layouts_.push_back(store->k_layouts_.back());
        if (!config.values_in_keys) store->v_layouts_.back() = layout(config.types.v, config.value_dim_of(il));
        store->uniform_rows_ = store->uniform_rows_ && config.head_dim_of(il) == config.head_dim_of(0);
    }
    for (int32_t il = 0; il < config.n_layers; ++il)
        for (auto [arena, l] : {std::pair{&store->k_, &store->k_layouts_[static_cast<size_t>(il)]}, {&store->v_, &store->v_layouts_[static_cast<size_t>(il)]}}) {
            if (arena == &store->v_ && config.values_in_keys) {
                arena->emplace_back();
                continue;
            }
            const uint64_t bytes = static_cast<uint64_t>(l->block_stride) * static_cast<uint64_t>(n_blocks);
            uint8_t* p = new (std::nothrow) uint8_t[bytes];
            if (!p)
                return error(StatusCode::resource_exhausted,
                             "KV cache: out of memory allocating " + std::to_string(bytes >> 20) + " MiB for layer " +
                                 std::to_string(il) + "; lower --kv-budget or the context length");
            arena->emplace_back(p);
        }
    return store;
}

void KvStore::copy_block(BlockId src, BlockId dst) {
    for (int32_t il = 0; il < n_layers(); ++il) {
        const int64_t k_stride = k_layout(il).block_stride, v_stride = v_layout(il).block_stride;
        std::memcpy(k_base(il) + dst * k_stride, k_base(il) + src * k_stride, static_cast<size_t>(k_stride));
        if (!values_in_keys_) std::memcpy(v_base(il) + dst * v_stride, v_base(il) + src * v_stride, static_cast<size_t>(v_stride));
    }
    if (mirror_) mirror_->block_copied(id_, src, dst);
}

}  // namespace workbench
