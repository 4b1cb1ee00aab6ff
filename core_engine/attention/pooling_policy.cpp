// Pooling for compressed and heavy: the writes, the pooled means and the release of pooled blocks.
#include "attention/pooling_policy.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kv_blocks/kv_row_codec.h"

namespace workbench {

AttentionParameter pool_parameter() {
    return choice_parameter("pool", "Pooling", {"mean", "max", "weighted"},
                            "An entry's key and value: the group's means; per channel its largest key (values the mean); or "
                            "weighted by the attention each token draws from the query that first reads the group pooled.");
}

std::string pool_spec_part(const AttentionSpec& s) {
    return s.pool == PoolMode::mean ? "" : ",pool=" + pool_parameter().choices[static_cast<size_t>(s.pool)];
}

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

Status PoolingPolicy::check(const PagedKvShape&, KvTypes) const {
    if (spec_.around > 0 && spec_.read != PooledRead::tokens)
        return error(StatusCode::invalid_argument, "--attention: around=" + std::to_string(spec_.around) +
                                                       " reads tokens beside each selected group; it needs read=tokens");
    return Status::ok_status();
}

void PoolingPolicy::write(KvArena& arena, int32_t layer, StepPart& part, const float* k, const float* v) {
    AttentionPolicy::write(arena, layer, part, k, v);
    if (spec_.pool != PoolMode::weighted) pool_new_groups(arena, layer, part, nullptr);  // weighted: plan() pools, with the queries
}

const AttendPlan& PoolingPolicy::plan(const KvArena& arena, int32_t layer, StepPart& part, const float* q, ThreadPool&) {
    pool_weighted(arena, layer, part, q);
    return part.token_plan;
}

void PoolingPolicy::pool_weighted(const KvArena& arena, int32_t layer, const StepPart& part, const float* q) const {
    if (spec_.pool == PoolMode::weighted) pool_new_groups(arena, layer, part, q);
}

void PoolingPolicy::pool_new_groups(const KvArena& arena, int32_t layer, const StepPart& part, const float* q) const {
    const int32_t g1 = pooled_count(part.t0 + part.n - 1);
    if (g1 > part.s->n_pooled) pool_groups(arena, arena.storage_of[static_cast<size_t>(layer)], part, part.s->n_pooled, g1, q);
}

void PoolingPolicy::attention_weights(const KvArena& arena, const StepPart& part, int32_t g, int32_t h, const float* keys,
                                      const float* q, float* w) const {
    const int32_t m = spec_.block;
    const int64_t hd = arena.shape.head_dim, group = arena.shape.n_head / arena.shape.n_kv_heads;
    // Query t first reads group g pooled when P(t) = g + 1: t = (g + 1)·M + R + S − 1, a row of
    // this part (earlier parts pooled every group their queries read).
    const int64_t row = static_cast<int64_t>(g + 1) * m + spec_.recent + spec_.sinks - 1 - part.t0;
    if (!q || row < 0 || row >= part.n) {
        std::fill(w, w + m, 1.0f / static_cast<float>(m));
        return;
    }
    std::fill(w, w + m, 0.0f);
    // The model's own scale may differ (Gemma's query_pre_attn_scalar); these weights only rank
    // the group's tokens against each other.
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    std::vector<float> sc(static_cast<size_t>(m));
    for (int64_t gq = 0; gq < group; ++gq) {
        const float* qh = q + (row * arena.shape.n_head + h * group + gq) * hd;
        float mx = -INFINITY;
        for (int32_t j = 0; j < m; ++j) {
            float dot = 0;
            for (int64_t d = 0; d < hd; ++d) dot += qh[d] * keys[j * hd + d];
            sc[static_cast<size_t>(j)] = dot * scale;
            mx = std::max(mx, sc[static_cast<size_t>(j)]);
        }
        float sum = 0;
        for (float& x : sc) sum += (x = std::exp(x - mx));
        for (int32_t j = 0; j < m; ++j) w[j] += sc[static_cast<size_t>(j)] / (sum * static_cast<float>(group));
    }
}

void PoolingPolicy::pool_groups(const KvArena& arena, int32_t storage, const StepPart& part, int32_t g0, int32_t g1, const float* q) const {
    const int32_t bs = arena.block_tokens(), m = spec_.block;
    const int64_t hd = arena.shape.head_dim, hdv = arena.shape.value_dim_of(storage);   // values: their first hdv of hd
    KvStore& store = *arena.store;
    const std::span<const BlockId> tokens = arena.token_table(*part.s);
    const std::span<const BlockId> pooled = arena.pooled_table(*part.s);
    std::vector<float> keys(static_cast<size_t>(m * hd)), values(static_cast<size_t>(m * hd)), w(static_cast<size_t>(m));
    std::vector<float> acc_k(static_cast<size_t>(hd)), acc_v(static_cast<size_t>(hd));
    for (int32_t g = g0; g < g1; ++g) {
        const BlockId dst = pooled[static_cast<size_t>(g / bs)];
        for (int32_t h = 0; h < arena.shape.n_kv_heads; ++h) {
            uint8_t* dk = store.k_row(storage, dst, g % bs, h);
            uint8_t* dv = store.v_row(storage, dst, g % bs, h);
            if (m == 1) {
                // One token pooled is that token: copy its bytes, no re-rounding.
                const int32_t j = spec_.sinks + g;
                const BlockId src = tokens[static_cast<size_t>(j / bs)];
                std::memcpy(dk, store.k_row(storage, src, j % bs, h), static_cast<size_t>(store.k_layout(storage).row_bytes));
                std::memcpy(dv, store.v_row(storage, src, j % bs, h), static_cast<size_t>(store.v_layout(storage).row_bytes));
                continue;
            }
            for (int32_t i = 0; i < m; ++i) {
                const int32_t j = spec_.sinks + g * m + i;
                const BlockId src = tokens[static_cast<size_t>(j / bs)];
                kv_decode_row(arena.types.k, store.k_row(storage, src, j % bs, h), &keys[static_cast<size_t>(i * hd)], hd);
                kv_decode_row(arena.types.v, store.v_row(storage, src, j % bs, h), &values[static_cast<size_t>(i * hd)], hdv);
            }
            std::fill(acc_k.begin(), acc_k.end(), 0.0f);
            std::fill(acc_v.begin(), acc_v.end(), 0.0f);
            if (spec_.pool == PoolMode::weighted) {
                attention_weights(arena, part, g, h, keys.data(), q, w.data());
                for (int32_t i = 0; i < m; ++i)
                    for (int64_t d = 0; d < hd; ++d) {
                        acc_k[d] += w[static_cast<size_t>(i)] * keys[static_cast<size_t>(i * hd + d)];
                        acc_v[d] += w[static_cast<size_t>(i)] * values[static_cast<size_t>(i * hd + d)];
                    }
            } else {
                const bool max_keys = spec_.pool == PoolMode::max;
                for (int32_t i = 0; i < m; ++i)
                    for (int64_t d = 0; d < hd; ++d) {
                        const float key = keys[static_cast<size_t>(i * hd + d)];
                        if (!max_keys) acc_k[d] += key;
                        else if (i == 0 || std::abs(key) > std::abs(acc_k[d])) acc_k[d] = key;
                        acc_v[d] += values[static_cast<size_t>(i * hd + d)];
                    }
                for (int64_t d = 0; d < hd; ++d) {
                    if (!max_keys) acc_k[d] /= static_cast<float>(m);
                    acc_v[d] /= static_cast<float>(m);
                }
            }
            kv_encode_row(arena.types.k, acc_k.data(), dk, hd);
            kv_encode_row(arena.types.v, acc_v.data(), dv, hdv);
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
