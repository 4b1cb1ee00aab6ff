// The CPU backend's `latent:` variant (a GQA model's K/V factored at load, latent_kv.h), in its
// two forms. rebuild: every step rebuilds the sequence's K from the cached latents and rotates
// it. absorbed (DeepSeek's absorbed MLA on factors made at load): U_k,g folds into each head's
// query, so a head scores [U_k,gᵀ q | its kept RoPE pairs] against the cached rows [c | kept
// pairs] of one latent KV head (heads=joint; with heads=each, of its own KV head's latent) in the
// common attention kernel and sums values c, and U_v,g takes its latent output back; the pairs
// not kept score without rotation.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/dot_f32.h"
#include "kernels/cpu/weighted_row_sums.h"

namespace workbench {

// Latent KV: the cache holds c = A·x; every step rebuilds the sequence's K from all cached c (then
// RoPE at each entry's position) — the compute a latent cache trades for its memory — while V's
// up-projection is applied once per head after attending over the latents.
LatentRows CpuBackend::latent_in(int32_t il, const LatentLayer& lat) {
    const int64_t n = n_;
    ThreadPool& pool = *pool_;
    const LayerWeights& l = w_.layers[static_cast<size_t>(il)];
    const PackedLayer& pl = packed_[static_cast<size_t>(il)];
    const int64_t rank = lat.down_m.n_out, half = lat.stored_half, n_kv = hp_.n_embd_kv();
    const int64_t n_rope = static_cast<int64_t>(lat.rope_dims.size());
    fit(lat_c_, n * rank);
    fit(lat_k_, n * half);
    fit(lat_v_, n * half);
    {
        // With kept RoPE dimensions the layer's K rows are computed too, for those dimensions.
        const PackedMatrix* ws[3] = {&pl.wq, &lat.down_m, &pl.wk};
        float* ys[3] = {q_.data(), lat_c_.data(), k_.data()};
        const size_t count = n_rope > 0 ? 3 : 2;
        matmul_shared_input({ws, count}, xn_.data(), {ys, count}, n, pool, mm_);
    }
    add_bias(q_.data(), l.bq, n);
    const RopeParams& rp = options_.rope;
    rope_features(q_.data(), hp_.n_embd_q(), hp_.head_dim, 0, hp_.n_embd_q(), rp, angles_, 0, n);
    if (n_rope > 0) {
        add_bias(k_.data(), l.bk, n);
        rope_features(k_.data(), n_kv, hp_.head_dim, 0, n_kv, rp, angles_, 0, n);
    }
    // The stored row [kept dimensions after RoPE, c], cut into its K and V halves.
    fit(lat_row_, 2 * half);
    for (int64_t t = 0; t < n; ++t) {
        const float* k = k_.data() + t * n_kv;
        for (int64_t i = 0; i < n_rope; ++i) lat_row_[static_cast<size_t>(i)] = k[lat.rope_dims[static_cast<size_t>(i)]];
        std::copy(lat_c_.data() + t * rank, lat_c_.data() + (t + 1) * rank, lat_row_.data() + n_rope);
        std::copy(lat_row_.data(), lat_row_.data() + half, lat_k_.data() + t * half);
        std::copy(lat_row_.data() + half, lat_row_.data() + 2 * half, lat_v_.data() + t * half);
    }
    return {lat_k_.data(), lat_v_.data()};
}

void CpuBackend::attend_latent(int32_t il, const LatentLayer& lat, LatentRows cached, int32_t n_all, int64_t n_generated) {
    const int64_t n = n_;
    ThreadPool& pool = *pool_;
    const std::span<const int32_t> pos = pos_;
    const LayerWeights& l = w_.layers[static_cast<size_t>(il)];
    const int64_t rank = lat.down_m.n_out, half = lat.stored_half, n_kv = hp_.n_embd_kv();
    const int64_t n_rope = static_cast<int64_t>(lat.rope_dims.size());
    fit(lat_all_, n_all * rank);
    fit(lat_kfull_, n_all * n_kv);
    fit(lat_rope_, n_all * n_rope);
    // Each cached row back into [kept dimensions] and c.
    fit(lat_row_, 2 * half);
    for (int32_t j = 0; j < n_all; ++j) {
        std::copy(cached.k + j * half, cached.k + (j + 1) * half, lat_row_.data());
        std::copy(cached.v + j * half, cached.v + (j + 1) * half, lat_row_.data() + half);
        std::copy(lat_row_.data(), lat_row_.data() + n_rope, lat_rope_.data() + j * n_rope);
        std::copy(lat_row_.data() + n_rope, lat_row_.data() + n_rope + rank, lat_all_.data() + j * rank);
    }
    // Keys must be rebuilt for every cached entry (RoPE sits between the projection and the
    // score, so U_k cannot be folded into the query).
    matmul(lat.up_k_m, lat_all_.data(), lat_kfull_.data(), n_all, pool, mm_);
    add_bias(lat_kfull_.data(), l.bk, n_all);
    if (static_cast<int32_t>(lat_pos_.size()) < n_all) {
        lat_pos_.resize(static_cast<size_t>(n_all));
        for (int32_t j = 0; j < n_all; ++j) lat_pos_[static_cast<size_t>(j)] = j;
    }
    rope(lat_kfull_.data(), lat_pos_.data(), n_all, hp_.n_head_kv, hp_.head_dim, options_.rope);
    // Kept dimensions were cached after RoPE: U_k's zero rows left only the bias there, rotated.
    for (int32_t j = 0; j < n_all; ++j)
        for (int64_t i = 0; i < n_rope; ++i)
            lat_kfull_[static_cast<size_t>(j * n_kv + lat.rope_dims[static_cast<size_t>(i)])] = lat_rope_[static_cast<size_t>(j * n_rope + i)];

    // Values are never rebuilt: a head attends over the latents (z = Σ p_j c_j) and projects once
    // (o = U_v,h z + b_v, the bias passing through because Σ p_j = 1).
    const int64_t hd = hp_.head_dim, group = hp_.n_head / hp_.n_head_kv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    // Prompt rows (the step's first n − n_generated) rebuild V from the latents once and run the
    // attention kernel: a head then reads head_dim values a key instead of rank. A decode step's
    // one row would pay the whole rebuild for itself, so generated rows sum over the latents
    // below. By row kind, not step size: a row gets the same path however it is batched.
    const int64_t n_prompt_rows = rank > hd ? n - std::min(n, n_generated) : 0;
    if (n_prompt_rows > 0) {
        fit(lat_vfull_, n_all * n_kv);
        matmul(lat.up_v_m, lat_all_.data(), lat_vfull_.data(), n_all, pool, mm_);
        add_bias(lat_vfull_.data(), l.bv, n_all);
        const KvStreamView stream = flat_f32_stream(lat_kfull_.data(), lat_vfull_.data(), n_all, hp_.n_head_kv, hd);
        lat_plan_.clear();
        for (int64_t t = 0; t < n_prompt_rows; ++t) {
            lat_plan_.add({0, 0, pos[static_cast<size_t>(t)] + 1});
            lat_plan_.close_list();
        }
        attend_spans(q_.data(), n_prompt_rows, {&stream, 1}, lat_plan_, {hp_.n_head, hp_.n_head_kv, hd}, scale, attn_.data(), pool);
    }
    const int64_t n_sum_rows = n - n_prompt_rows;
    if (n_sum_rows == 0) return;
    // A task takes a few consecutive tokens of one head, so the weighted sum over the latents
    // reads each cached latent once for all of them (weighted_row_sums).
    constexpr int64_t kTileTokens = 24;
    const int64_t n_tiles = (n_sum_rows + kTileTokens - 1) / kTileTokens;
    pool.run(n_tiles * hp_.n_head, [&](int64_t item) {
        const int64_t h = item % hp_.n_head, kvh = h / group;
        const int64_t t0 = n_prompt_rows + item / hp_.n_head * kTileTokens, t1 = std::min(n, t0 + kTileTokens), rows = t1 - t0;
        int64_t stride = 0;
        for (int64_t t = t0; t < t1; ++t) stride = std::max<int64_t>(stride, pos[static_cast<size_t>(t)] + 1);
        thread_local std::vector<float> p, z;
        thread_local std::vector<int32_t> n_keys;
        p.resize(static_cast<size_t>(rows * stride));
        z.resize(static_cast<size_t>(rows * rank));
        n_keys.resize(static_cast<size_t>(rows));
        for (int64_t i = 0; i < rows; ++i) {
            const int64_t t = t0 + i, nk = pos[static_cast<size_t>(t)] + 1;
            n_keys[static_cast<size_t>(i)] = static_cast<int32_t>(nk);
            float* pr = p.data() + i * stride;
            const float* qv = q_.data() + (t * hp_.n_head + h) * hd;
            float mx = -INFINITY;
            for (int64_t j = 0; j < nk; ++j) {
                pr[j] = dot_f32(qv, lat_kfull_.data() + j * n_kv + kvh * hd, hd) * scale;
                mx = std::max(mx, pr[j]);
            }
            double sum = 0;
            for (int64_t j = 0; j < nk; ++j) sum += (pr[j] = std::exp(pr[j] - mx));
            const float inv = static_cast<float>(1.0 / sum);
            for (int64_t j = 0; j < nk; ++j) pr[j] *= inv;
        }
        weighted_row_sums(p.data(), stride, n_keys.data(), rows, lat_all_.data(), rank, z.data());
        const float* bv = l.bv.present() ? l.bv.f32() + kvh * hd : nullptr;
        for (int64_t i = 0; i < rows; ++i) {
            float* o = attn_.data() + ((t0 + i) * hp_.n_head + h) * hd;
            for (int64_t d = 0; d < hd; ++d)
                o[d] = dot_f32(lat.up_v.data() + (kvh * hd + d) * rank, z.data() + i * rank, rank) + (bv ? bv[d] : 0.0f);
        }
    });
}

HostRows CpuBackend::latent_absorbed_in(int32_t il, const LatentLayer& lat) {
    const int64_t n = n_, n_head = hp_.n_head, hd = hp_.head_dim, n_q = hp_.n_embd_q(), n_kv = hp_.n_embd_kv();
    const int64_t rank = lat.down_m.n_out, rank_l = lat.latent_rank(), n_latents = lat.n_latents, width = lat.row_width();
    const int64_t n_rope = static_cast<int64_t>(lat.rope_dims.size()), rope_l = n_rope / n_latents;
    const int64_t group = n_head / hp_.n_head_kv, per_kv_head = n_rope / hp_.n_head_kv;
    const int64_t kv_per_latent = hp_.n_head_kv / n_latents;
    const LayerWeights& l = w_.layers[static_cast<size_t>(il)];
    const PackedLayer& pl = packed_[static_cast<size_t>(il)];
    fit(lat_c_, n * rank);
    {
        const PackedMatrix* ws[3] = {&pl.wq, &lat.down_m, &pl.wk};   // K only for its kept pairs
        float* ys[3] = {q_.data(), lat_c_.data(), k_.data()};
        const size_t count = n_rope > 0 ? 3 : 2;
        matmul_shared_input({ws, count}, xn_.data(), {ys, count}, n, *pool_, mm_);
    }
    add_bias(q_.data(), l.bq, n);
    if (n_rope > 0) add_bias(k_.data(), l.bk, n);   // b_k elsewhere adds qᵀb_k to every key's score: the softmax drops it
    // Each head's unrotated query, gathered head by head for U_k,gᵀ; then the kept pairs rotate.
    fit(mla_heads_, n_head * n * hd);
    fit(lat_row_, n * n_latents * width);
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t)
            for (int64_t h = 0; h < n_head; ++h)
                std::copy(q_.data() + t * n_q + h * hd, q_.data() + t * n_q + (h + 1) * hd, mla_heads_.data() + (h * n + t) * hd);
        if (n_rope == 0) return;
        rope_features(q_.data(), n_q, hd, 0, n_q, options_.rope, angles_, b, e);
        rope_features(k_.data(), n_kv, hd, 0, n_kv, options_.rope, angles_, b, e);
    });
    fit(lat_q_, n * n_head * width);
    head_products(lat.up_k_t_m, mla_heads_.data(), hd, lat_q_.data(), width, n_head * width, group);
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
            // Per latent, the row [its c | its KV heads' kept pairs, rotated]; a query: its own
            // KV head's kept pairs in that head's slot, zeros in the others'.
            for (int64_t li = 0; li < n_latents; ++li) {
                float* row = lat_row_.data() + (t * n_latents + li) * width;
                std::copy(lat_c_.data() + t * rank + li * rank_l, lat_c_.data() + t * rank + (li + 1) * rank_l, row);
                for (int64_t i = 0; i < rope_l; ++i)
                    row[rank_l + i] = k_[static_cast<size_t>(t * n_kv + lat.rope_dims[static_cast<size_t>(li * rope_l + i)])];
            }
            for (int64_t h = 0; h < n_head; ++h) {
                float* q = lat_q_.data() + (t * n_head + h) * width + rank_l;
                std::fill(q, q + rope_l, 0.0f);
                const int64_t g = h / group, slot = g % kv_per_latent * per_kv_head, first = g * per_kv_head;
                for (int64_t i = 0; i < per_kv_head; ++i)
                    q[slot + i] = q_[static_cast<size_t>(t * n_q + h * hd + lat.rope_dims[static_cast<size_t>(first + i)] - g * hd)];
            }
        }
    });
    return {lat_q_.data(), lat_row_.data(), lat_row_.data()};
}

void CpuBackend::latent_absorbed_out(int32_t il, const LatentLayer& lat) {
    const int64_t n = n_, n_head = hp_.n_head, hd = hp_.head_dim, rank = lat.latent_rank(), group = n_head / hp_.n_head_kv;
    const WeightTensor& bv = w_.layers[static_cast<size_t>(il)].bv;
    fit(mla_heads_, n_head * n * rank);
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t)
            for (int64_t h = 0; h < n_head; ++h)
                std::copy(lat_z_.data() + (t * n_head + h) * rank, lat_z_.data() + (t * n_head + h + 1) * rank, mla_heads_.data() + (h * n + t) * rank);
    });
    head_products(lat.up_v_heads_m, mla_heads_.data(), rank, attn_.data(), hd, n_head * hd, group);
    if (!bv.present()) return;
    // V = U_v c + b_v and the weights sum to 1: the bias passes through once.
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t)
            for (int64_t h = 0; h < n_head; ++h)
                for (int64_t d = 0; d < hd; ++d) attn_[static_cast<size_t>((t * n_head + h) * hd + d)] += bv.f32()[(h / group) * hd + d];
    });
}

}  // namespace workbench
