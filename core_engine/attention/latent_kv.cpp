// Latent factors per layer: dequantize W_k and W_v, stack them, factor with the calibration
// activations, and keep the factors as f32 matrices the CPU matmul reads in place.
#include "attention/latent_kv.h"

#include "attention/latent_factorization.h"
#include "kernels/cpu/dot_f32.h"
#include "tensor/dequantize.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace workbench {
namespace {

void dequantize_matrix(const WeightTensor& t, float* out) {
    for (int64_t r = 0; r < t.n_out; ++r) dequantize_row(t.type, t.row(r), out + r * t.n_in, t.n_in);
}

bool pack_f32(const float* data, int64_t n_out, int64_t n_in, PackedMatrix& out) {
    WeightTensor t;
    t.type = DType::f32;
    t.data = reinterpret_cast<const uint8_t*>(data);
    t.n_in = n_in;
    t.n_out = n_out;
    t.n_bytes = static_cast<uint64_t>(n_in * n_out) * sizeof(float);
    return pack_matrix(t, out);
}

// A bias as f32 (empty when the layer has none).
std::vector<float> bias_values(const WeightTensor& t) {
    if (!t.present()) return {};
    std::vector<float> out(static_cast<size_t>(t.n_in * t.n_out));
    dequantize_matrix(t, out.data());
    return out;
}

// The two dimensions of RoPE pair i in a head of hd (rope_feature_align's pairing).
std::pair<int32_t, int32_t> pair_dims(RopeStyle style, int32_t hd, int32_t i) {
    if (style == RopeStyle::neox) return {i, i + hd / 2};
    return {2 * i, 2 * i + 1};
}

// Σ over the samples of each (head, pair)'s norm of w·x + b, [n_heads, hd / 2].
std::vector<double> pair_norm_sums(const float* w, const float* b, const float* x, int32_t n_samples, int64_t n_embd,
                                   int32_t n_heads, int32_t hd, RopeStyle style) {
    const int32_t half = hd / 2;
    std::vector<double> sums(static_cast<size_t>(n_heads * half), 0.0);
    std::vector<float> row(static_cast<size_t>(hd));
    for (int32_t t = 0; t < n_samples; ++t) {
        const float* xt = x + static_cast<int64_t>(t) * n_embd;
        for (int32_t h = 0; h < n_heads; ++h) {
            for (int32_t d = 0; d < hd; ++d) {
                const int64_t r = static_cast<int64_t>(h) * hd + d;
                row[static_cast<size_t>(d)] = dot_f32(w + r * n_embd, xt, n_embd) + (b ? b[r] : 0.0f);
            }
            for (int32_t i = 0; i < half; ++i) {
                const auto [a, c] = pair_dims(style, hd, i);
                sums[static_cast<size_t>(h * half + i)] += std::hypot(static_cast<double>(row[static_cast<size_t>(a)]),
                                                                      static_cast<double>(row[static_cast<size_t>(c)]));
            }
        }
    }
    return sums;
}

// fn(r, i) for each key row r the latent rebuilds (every row but the kept `rope_dims`,
// ascending), i its index among them.
template <typename Fn>
void for_each_rebuilt_row(const std::vector<int32_t>& rope_dims, int64_t n_rows, Fn&& fn) {
    size_t next_kept = 0;
    for (int64_t r = 0, i = 0; r < n_rows; ++r) {
        if (next_kept < rope_dims.size() && rope_dims[next_kept] == r) {
            ++next_kept;
            continue;
        }
        fn(r, i++);
    }
}

}  // namespace

std::vector<int32_t> select_rope_dims(const float* wq, const float* bq, const float* wk, const float* bk, const float* x,
                                      int32_t n_samples, const ModelHparams& hp, int32_t rope_pairs, LatentPick pick) {
    const int32_t hd = static_cast<int32_t>(hp.head_dim), half = hd / 2;
    const int32_t n_head = static_cast<int32_t>(hp.n_head), n_kv_heads = static_cast<int32_t>(hp.n_head_kv);
    const int32_t group = n_head / n_kv_heads;
    const bool by_norm = pick == LatentPick::norm;
    const std::vector<double> q = by_norm ? pair_norm_sums(wq, bq, x, n_samples, hp.n_embd, n_head, hd, hp.rope_style) : std::vector<double>{};
    const std::vector<double> k = by_norm ? pair_norm_sums(wk, bk, x, n_samples, hp.n_embd, n_kv_heads, hd, hp.rope_style) : std::vector<double>{};
    std::vector<int32_t> dims;
    std::vector<double> score(static_cast<size_t>(half));
    std::vector<int32_t> order(static_cast<size_t>(half));
    for (int32_t g = 0; g < n_kv_heads; ++g) {
        for (int32_t i = 0; i < half && !by_norm; ++i)   // pair i turns base^(−2i/hd) a token: the first pairs fastest
            score[static_cast<size_t>(i)] = -i;
        for (int32_t i = 0; i < half && by_norm; ++i) {
            double s = 0;
            for (int32_t h = g * group; h < (g + 1) * group; ++h) s += q[static_cast<size_t>(h * half + i)];
            score[static_cast<size_t>(i)] = s * k[static_cast<size_t>(g * half + i)];
        }
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return score[static_cast<size_t>(a)] > score[static_cast<size_t>(b)]; });
        std::vector<int32_t> head_dims;
        for (int32_t j = 0; j < std::min(rope_pairs, half); ++j) {
            const auto [a, c] = pair_dims(hp.rope_style, hd, order[static_cast<size_t>(j)]);
            head_dims.push_back(g * hd + a);
            head_dims.push_back(g * hd + c);
        }
        std::sort(head_dims.begin(), head_dims.end());
        dims.insert(dims.end(), head_dims.begin(), head_dims.end());
    }
    return dims;
}

double kv_balance_scale(const float* stacked, int64_t n_k_rows, int64_t n_rows, const float* x, int32_t n_samples, int64_t n_embd) {
    double energy_k = 0, energy_v = 0;
    for (int32_t t = 0; t < n_samples; ++t)
        for (int64_t r = 0; r < n_rows; ++r) {
            const double y = dot_f32(stacked + r * n_embd, x + static_cast<int64_t>(t) * n_embd, n_embd);
            (r < n_k_rows ? energy_k : energy_v) += y * y;
        }
    return energy_k > 0 && energy_v > 0 ? std::sqrt(energy_v / energy_k) : 1.0;
}

Result<std::vector<LatentLayer>> build_latent_layers(const ModelWeights& w, const ModelHparams& hp,
                                                     const std::vector<std::vector<float>>& inputs, int32_t n_samples,
                                                     const AttentionSpec& latent, const std::function<void(int, int)>& progress,
                                                     std::vector<std::vector<double>>* singular_values) {
    const int64_t n_kv = hp.n_embd_kv(), n_embd = hp.n_embd;
    const int32_t rank = latent.rank, rope_pairs = latent.rope_pairs;
    const std::string spec = "--attention " + attention_spec_name(latent);
    if (rope_pairs < 0 || rope_pairs > hp.head_dim / 2)
        return error(StatusCode::invalid_argument, spec + ": rope expected 0.." +
                                                       std::to_string(hp.head_dim / 2) + " (the RoPE pairs of a head)");
    const int64_t n_rope_dims = 2 * static_cast<int64_t>(rope_pairs) * hp.n_head_kv, n_factored = 2 * n_kv - n_rope_dims;
    if (rank < 1 || rank > std::min<int64_t>(n_factored, n_embd))
        return error(StatusCode::invalid_argument, spec + ": rank expected 1.." +
                                                       std::to_string(std::min<int64_t>(n_factored, n_embd)) +
                                                       " (the stacked K/V projection is " + std::to_string(n_factored) + " × " +
                                                       std::to_string(n_embd) + (rope_pairs > 0 ? " without its kept RoPE rows)" : ")"));
    const int64_t n_latents = latent.heads == LatentHeads::each ? hp.n_head_kv : 1;
    if (rank % n_latents != 0)
        return error(StatusCode::invalid_argument, spec + ": heads=each needs a rank that is a multiple of the " + std::to_string(n_latents) + " KV heads");
    // Each latent factors the rows of its KV heads: all of them (joint), or one head's (each).
    const int64_t rank_l = rank / n_latents, rows_l = n_kv / n_latents;
    std::vector<LatentLayer> layers(static_cast<size_t>(hp.n_layer));
    std::vector<float> stacked(static_cast<size_t>(n_factored / n_latents * n_embd)), wk(static_cast<size_t>(n_kv * n_embd)), wv, wq;
    if (rope_pairs > 0) wq.resize(static_cast<size_t>(hp.n_embd_q() * n_embd));
    if (n_latents > 1) wv.resize(static_cast<size_t>(n_kv * n_embd));
    for (int32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& lw = w.layers[static_cast<size_t>(il)];
        LatentLayer& l = layers[static_cast<size_t>(il)];
        dequantize_matrix(lw.wk, wk.data());
        if (rope_pairs > 0) {
            dequantize_matrix(lw.wq, wq.data());
            const std::vector<float> bq = bias_values(lw.bq), bk = bias_values(lw.bk);
            l.rope_dims = select_rope_dims(wq.data(), bq.empty() ? nullptr : bq.data(), wk.data(), bk.empty() ? nullptr : bk.data(),
                                           inputs[static_cast<size_t>(il)].data(), n_samples, hp, rope_pairs, latent.pick);
        }
        if (n_latents > 1) dequantize_matrix(lw.wv, wv.data());
        l.n_latents = n_latents;
        l.down.resize(static_cast<size_t>(rank * n_embd));
        l.up_k.assign(static_cast<size_t>(n_kv * rank), 0.0f);   // zero rows where the cache keeps the dimension itself
        l.up_v.assign(static_cast<size_t>(n_kv * rank), 0.0f);
        double kept_energy = 0, all = 0;
        const float* x = inputs[static_cast<size_t>(il)].data();
        for (int64_t li = 0; li < n_latents; ++li) {
            // [its K rows but the kept ones; its V rows], K scaled by s (U_k takes 1/s back, so K = U_k·c is unchanged in form).
            const int64_t r0 = li * rows_l, r1 = r0 + rows_l;
            std::vector<int32_t> kept;
            for (int32_t d : l.rope_dims)
                if (d >= r0 && d < r1) kept.push_back(static_cast<int32_t>(d - r0));
            const int64_t n_k_rows = rows_l - static_cast<int64_t>(kept.size()), n_rows = n_k_rows + rows_l;
            for_each_rebuilt_row(kept, rows_l, [&](int64_t r, int64_t i) {
                std::copy(wk.begin() + (r0 + r) * n_embd, wk.begin() + (r0 + r + 1) * n_embd, stacked.begin() + i * n_embd);
            });
            if (n_latents > 1) std::copy(wv.begin() + r0 * n_embd, wv.begin() + r1 * n_embd, stacked.begin() + n_k_rows * n_embd);
            else dequantize_matrix(lw.wv, stacked.data() + n_k_rows * n_embd);
            const double k_scale = latent.balance == LatentBalance::energy ? kv_balance_scale(stacked.data(), n_k_rows, n_rows, x, n_samples, n_embd) : 1.0;
            for (int64_t i = 0; i < n_k_rows * n_embd; ++i) stacked[static_cast<size_t>(i)] *= static_cast<float>(k_scale);
            WB_ASSIGN_OR_RETURN(LatentFactors f, factorize_low_rank(std::span(stacked.data(), static_cast<size_t>(n_rows * n_embd)),
                                                                    static_cast<int32_t>(n_rows), static_cast<int32_t>(n_embd),
                                                                    inputs[static_cast<size_t>(il)], n_samples, static_cast<int32_t>(rank_l)));
            // The dropped σ² over all of them: the relative output error on the calibration inputs
            // (of the factored rows, K as scaled: with balance=energy K and V weigh alike; kept
            // RoPE dimensions are exact).
            for (size_t i = 0; i < f.singular_values.size(); ++i) {
                const double s2 = f.singular_values[i] * f.singular_values[i];
                all += s2;
                if (i < static_cast<size_t>(rank_l)) kept_energy += s2;
            }
            if (singular_values && n_latents == 1) singular_values->push_back(f.singular_values);
            std::copy(f.down.begin(), f.down.end(), l.down.begin() + li * rank_l * n_embd);
            auto place = [&](std::vector<float>& up, int64_t row, int64_t from, double scale) {
                for (int64_t j = 0; j < rank_l; ++j)
                    up[static_cast<size_t>(row * rank + li * rank_l + j)] = static_cast<float>(f.up[static_cast<size_t>(from * rank_l + j)] / scale);
            };
            for_each_rebuilt_row(kept, rows_l, [&](int64_t r, int64_t i) { place(l.up_k, r0 + r, i, k_scale); });
            for (int64_t r = 0; r < rows_l; ++r) place(l.up_v, r0 + r, n_k_rows + r, 1.0);
        }
        l.output_error = all > 0 ? std::sqrt(std::max(0.0, all - kept_energy) / all) : 0;
        l.stored_half = (rank + n_rope_dims) / 2;
        if (latent.form == LatentForm::absorbed) l.head_dim = hp.head_dim;
        if (!pack_latent_layer(l, rank, n_embd))
            return error(StatusCode::resource_exhausted, "out of memory packing the latent factors");
        if (progress) progress(il + 1, hp.n_layer);
    }
    return layers;
}

bool pack_latent_layer(LatentLayer& l, int64_t rank, int64_t n_embd) {
    const int64_t n_kv = static_cast<int64_t>(l.up_k.size()) / rank;
    if (!pack_f32(l.down.data(), rank, n_embd, l.down_m) || !pack_f32(l.up_k.data(), n_kv, rank, l.up_k_m) ||
        !pack_f32(l.up_v.data(), n_kv, rank, l.up_v_m))
        return false;
    if (l.head_dim == 0) return true;
    // The absorbed form's matrices per KV head g, from its latent's columns: U_k,gᵀ [rank_l × hd]
    // and U_v,g [hd × rank_l].
    const int64_t hd = l.head_dim, n_kv_heads = n_kv / hd, rank_l = rank / l.n_latents, heads_per_latent = n_kv_heads / l.n_latents;
    l.up_k_t.assign(static_cast<size_t>(n_kv * rank_l), 0.0f);
    l.up_v_heads.assign(static_cast<size_t>(n_kv * rank_l), 0.0f);
    for (int64_t g = 0; g < n_kv_heads; ++g) {
        const int64_t col0 = g / heads_per_latent * rank_l;
        for (int64_t d = 0; d < hd; ++d)
            for (int64_t j = 0; j < rank_l; ++j) {
                const size_t at = static_cast<size_t>((g * hd + d) * rank + col0 + j);
                l.up_k_t[static_cast<size_t>((g * rank_l + j) * hd + d)] = l.up_k[at];
                l.up_v_heads[static_cast<size_t>((g * hd + d) * rank_l + j)] = l.up_v[at];
            }
    }
    l.up_k_t_m.clear();
    l.up_v_heads_m.clear();
    l.up_k_t_m.resize(static_cast<size_t>(n_kv_heads));
    l.up_v_heads_m.resize(static_cast<size_t>(n_kv_heads));
    for (int64_t g = 0; g < n_kv_heads; ++g)
        if (!pack_f32(l.up_k_t.data() + g * rank_l * hd, rank_l, hd, l.up_k_t_m[static_cast<size_t>(g)]) ||
            !pack_f32(l.up_v_heads.data() + g * hd * rank_l, hd, rank_l, l.up_v_heads_m[static_cast<size_t>(g)]))
            return false;
    return true;
}

int32_t max_latent_rank(const ModelHparams& hp, int32_t rope_pairs) {
    const int64_t n_factored = 2 * hp.n_embd_kv() - 2 * static_cast<int64_t>(rope_pairs) * hp.n_head_kv;
    return static_cast<int32_t>(std::min<int64_t>(n_factored, hp.n_embd));
}

Status truncate_latent_layer(LatentLayer& l, int32_t rank, int64_t n_embd, const std::vector<double>& singular_values) {
    const int64_t old_rank = l.down_m.n_out;
    if (rank < 1 || rank > old_rank)
        return error(StatusCode::invalid_argument, "latent: rank " + std::to_string(rank) + " is outside 1.." + std::to_string(old_rank));
    const int64_t n_kv = static_cast<int64_t>(l.up_k.size()) / old_rank;
    const int64_t n_rope = static_cast<int64_t>(l.rope_dims.size());
    l.down.resize(static_cast<size_t>(rank * n_embd));
    auto first_columns = [&](std::vector<float>& up) {
        for (int64_t r = 0; r < n_kv; ++r) std::copy_n(up.begin() + r * old_rank, rank, up.begin() + r * rank);
        up.resize(static_cast<size_t>(n_kv * rank));
        up.shrink_to_fit();
    };
    l.down.shrink_to_fit();
    first_columns(l.up_k);
    first_columns(l.up_v);
    double kept = 0, all = 0;
    for (size_t i = 0; i < singular_values.size(); ++i) {
        all += singular_values[i] * singular_values[i];
        if (i < static_cast<size_t>(rank)) kept += singular_values[i] * singular_values[i];
    }
    l.output_error = all > 0 ? std::sqrt(std::max(0.0, all - kept) / all) : 0;
    l.stored_half = (rank + n_rope) / 2;
    if (!pack_latent_layer(l, rank, n_embd))
        return error(StatusCode::resource_exhausted, "out of memory packing the latent factors");
    return Status::ok_status();
}

std::vector<int32_t> allocate_latent_ranks(const std::vector<std::vector<double>>& singular_values, const std::vector<double>& sensitivity,
                                           int32_t probe_rank, int32_t start, int32_t step, int32_t max_rank) {
    const size_t n_layers = singular_values.size();
    // σ² dropped at rank r, for r = 0..n: suffix sums.
    std::vector<std::vector<double>> dropped(n_layers);
    std::vector<double> weight(n_layers);
    for (size_t l = 0; l < n_layers; ++l) {
        const std::vector<double>& s = singular_values[l];
        dropped[l].assign(s.size() + 1, 0.0);
        for (size_t i = s.size(); i-- > 0;) dropped[l][i] = dropped[l][i + 1] + s[i] * s[i];
        const double at_probe = dropped[l][std::min(static_cast<size_t>(std::max(probe_rank, 0)), s.size())];
        weight[l] = at_probe > 0 ? std::max(sensitivity[l], 0.0) / at_probe : 0.0;
    }
    auto loss = [&](size_t l, int32_t r) { return weight[l] * dropped[l][std::min(static_cast<size_t>(r), dropped[l].size() - 1)]; };
    std::vector<int32_t> ranks(n_layers, start);
    for (;;) {
        // The layer gaining most from `step` more, the one losing least from `step` less.
        size_t to = n_layers, from = n_layers;
        double best_gain = 0, least_cost = 0;
        for (size_t l = 0; l < n_layers; ++l) {
            if (ranks[l] + step <= max_rank) {
                const double gain = loss(l, ranks[l]) - loss(l, ranks[l] + step);
                if (to == n_layers || gain > best_gain) to = l, best_gain = gain;
            }
            if (ranks[l] - step >= step) {
                const double cost = loss(l, ranks[l] - step) - loss(l, ranks[l]);
                if (from == n_layers || cost < least_cost) from = l, least_cost = cost;
            }
        }
        if (to == n_layers || from == n_layers || to == from || best_gain <= least_cost) break;
        ranks[to] += step;
        ranks[from] -= step;
    }
    return ranks;
}

}  // namespace workbench
