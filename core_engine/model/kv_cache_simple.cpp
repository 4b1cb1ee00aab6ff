// Allocation of the contiguous cache; a failed allocation is a Status, not a crash.
#include "model/kv_cache_simple.h"

#include <new>

namespace workbench {

Result<SimpleKvCache> SimpleKvCache::create(int32_t n_layer, int32_t n_ctx, int32_t n_embd_kv) {
    SimpleKvCache c;
    c.n_ctx_ = n_ctx;
    c.n_embd_kv_ = n_embd_kv;
    const uint64_t per_layer = static_cast<uint64_t>(n_ctx) * static_cast<uint64_t>(n_embd_kv);
    try {
        for (int32_t il = 0; il < n_layer; ++il) {
            c.k_.emplace_back(new uint16_t[per_layer]);  // default-initialised: not touched here
            c.v_.emplace_back(new uint16_t[per_layer]);
        }
    } catch (const std::bad_alloc&) {
        return error(StatusCode::resource_exhausted, "KV cache: cannot allocate " + std::to_string(c.bytes_allocated() >> 20) +
                                                         " MiB for " + std::to_string(n_ctx) + " tokens; lower the context length");
    }
    return c;
}

}  // namespace workbench
