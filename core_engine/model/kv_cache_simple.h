// A contiguous f16 KV cache: for each layer, K and V rows indexed by position, [n_ctx, n_embd_kv].
// This is the foundation's cache; the paged cache with attention variants replaces it.
// Address space is reserved up front for the whole context so a long chat never reallocates;
// it is left uninitialised (a row is always written before it is read), so pages become resident
// only as the context fills, and loading does not touch the whole reservation.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "workbench/status.h"

namespace workbench {

class SimpleKvCache {
public:
    // Errors: resource_exhausted when the allocation fails, with the bytes it asked for.
    static Result<SimpleKvCache> create(int32_t n_layer, int32_t n_ctx, int32_t n_embd_kv);

    int32_t n_ctx() const { return n_ctx_; }
    int32_t n_embd_kv() const { return n_embd_kv_; }
    int32_t n_tokens() const { return n_tokens_; }       // positions [0, n_tokens) hold valid KV
    void set_n_tokens(int32_t n) { n_tokens_ = n; }

    uint16_t* k(int32_t il) { return k_[il].get(); }      // [n_ctx, n_embd_kv] f16
    uint16_t* v(int32_t il) { return v_[il].get(); }      // [n_ctx, n_embd_kv] f16

    uint64_t bytes_per_token() const { return 2ull * k_.size() * n_embd_kv_ * sizeof(uint16_t); }
    uint64_t bytes_in_use() const { return bytes_per_token() * static_cast<uint64_t>(n_tokens_); }
    uint64_t bytes_allocated() const { return bytes_per_token() * static_cast<uint64_t>(n_ctx_); }

private:
    int32_t n_ctx_ = 0, n_embd_kv_ = 0, n_tokens_ = 0;
    std::vector<std::unique_ptr<uint16_t[]>> k_, v_;
};

}  // namespace workbench
