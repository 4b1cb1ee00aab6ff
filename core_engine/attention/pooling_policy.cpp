// Pooling for compressed and heavy: the writes, the pooled means and the release of pooled blocks.
#include "attention/pooling_policy.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kv_blocks/kv_row_codec.h"

namespace workbench {

float PoolingPolicy::pooled_score_bias() const { return std::log(static_cast<float>(std::max(1, spec_.block))); }

void PoolingPolicy::begin_part(const KvArena&, StepPart& part) {
    AttendPlan& p = part.token_plan;
    p.clear();
    for (int32_t i = 0; i < part.n; ++i) {
        const int32_t t = part.t0 + i;
        const int32_t n_pooled = pooled_count(t);
        p.add({kTokenStream, 0, std::min(spec_.sinks, t + 1)});
        p.add({kPooledStream, 0, n_pooled});
        p.add({kTokenStream, std::min(spec_.sinks, t + 1) + n_pooled * spec_.block, t + 1});
        p.close_list();
    }
}

void PoolingPolicy::write(KvArena& arena, int32_t layer, StepPart& part, const float* k, const float* v) {
    AttentionPolicy::write(arena, layer, part, k, v);
    const int32_t g1 = pooled_count(part.t0 + part.n - 1);
    if (g1 > part.s->n_pooled) pool_groups(arena, arena.storage_of[static_cast<size_t>(layer)], *part.s, part.s->n_pooled, g1);
}

void PoolingPolicy::pool_groups(KvArena& arena, int32_t storage, const KvSequence& s, int32_t g0, int32_t g1) const {
    const int32_t bs = arena.block_tokens(), m = spec_.block;
    const int64_t hd = arena.shape.head_dim;
    KvStore& store = *arena.store;
    const std::span<const BlockId> tokens = arena.token_table(s);
    const std::span<const BlockId> pooled = arena.pooled_table(s);
    std::vector<float> acc_k(static_cast<size_t>(hd)), acc_v(static_cast<size_t>(hd)), row(static_cast<size_t>(hd));
    for (int32_t g = g0; g < g1; ++g) {
        const BlockId dst = pooled[static_cast<size_t>(g / bs)];
        for (int32_t h = 0; h < arena.shape.n_kv_heads; ++h) {
            uint8_t* dk = store.k_row(storage, dst, g % bs, h);
            uint8_t* dv = store.v_row(storage, dst, g % bs, h);
            if (m == 1) {
                // One token pooled is that token: copy its bytes, no re-rounding.
                const int32_t j = spec_.sinks + g;
                const BlockId src = tokens[static_cast<size_t>(j / bs)];
                std::memcpy(dk, store.k_row(storage, src, j % bs, h), static_cast<size_t>(store.k_layout().row_bytes));
                std::memcpy(dv, store.v_row(storage, src, j % bs, h), static_cast<size_t>(store.v_layout().row_bytes));
                continue;
            }
            // The mean of the RoPE-applied keys (and of the values) of the group's M tokens.
            std::fill(acc_k.begin(), acc_k.end(), 0.0f);
            std::fill(acc_v.begin(), acc_v.end(), 0.0f);
            for (int32_t j = spec_.sinks + g * m; j < spec_.sinks + (g + 1) * m; ++j) {
                const BlockId src = tokens[static_cast<size_t>(j / bs)];
                kv_decode_row(arena.types.k, store.k_row(storage, src, j % bs, h), row.data(), hd);
                for (int64_t d = 0; d < hd; ++d) acc_k[d] += row[d];
                kv_decode_row(arena.types.v, store.v_row(storage, src, j % bs, h), row.data(), hd);
                for (int64_t d = 0; d < hd; ++d) acc_v[d] += row[d];
            }
            for (int64_t d = 0; d < hd; ++d) acc_k[d] /= static_cast<float>(m), acc_v[d] /= static_cast<float>(m);
            kv_encode_row(arena.types.k, acc_k.data(), dk, hd);
            kv_encode_row(arena.types.v, acc_v.data(), dv, hd);
        }
        store.note_written(storage, dst);
    }
}

void PoolingPolicy::releasable(const KvArena& arena, const KvSequence& s, int32_t& first, int32_t& end) const {
    // Pooled tokens are read through their pooled entry; the sinks' block stays.
    const int32_t bs = arena.block_tokens();
    first = std::max(first, (spec_.sinks + bs - 1) / bs);
    end = (spec_.sinks + s.n_pooled * spec_.block) / bs;
}

AttentionPolicy::Footprint PoolingPolicy::footprint(int64_t n, int32_t bs) const {
    Footprint f;
    const int64_t pooled = n > 0 ? pooled_count(static_cast<int32_t>(n - 1)) : 0;
    const int64_t first = (spec_.sinks + bs - 1) / bs;
    const int64_t end = (spec_.sinks + pooled * spec_.block) / bs;
    f.token_blocks = (n + bs - 1) / bs - std::max<int64_t>(0, end - first);
    f.pooled_blocks = (pooled + bs - 1) / bs;
    f.entries_read = n > 0 ? std::min<int64_t>(spec_.sinks, n) + pooled + (n - recent_begin(static_cast<int32_t>(n - 1))) : 0;
    f.note = "while a prompt chunk runs, its old tokens are held unpooled until the step ends: the peak is higher";
    return f;
}

}  // namespace workbench
