// Latent KV (MLA-style, factored from a trained model at load): each layer caches only c = A·x,
// R values per token, and with rope=P also each KV head's P RoPE pairs of its key as they are
// (after RoPE, MHA2MLA's partial RoPE kept exact). With ranks=measured the model's factors have a
// rank per layer (R on average) and each layer's rows their own width. Each query reads every
// entry. Two forms:
//  - rebuild: one "head" of (R + 2·P·n_kv)/2 values whose first half sits in the K arena and
//    second in the V arena; every step rebuilds the sequence's K (RoPE on every dimension) from
//    it (latent_kv.h) — exact for the factors, one sequence a step.
//  - absorbed: one row [c | kept pairs of each KV head] of R + 2·P·n_kv values read once per
//    step by every query head, V = its first R values (DeepSeek's absorbed MLA): U_k is folded
//    into the queries, so the pairs not kept score position-free. With heads=each every KV head
//    has its own latent of R / n_kv values: n_kv rows [c_g | its kept pairs] of R/n_kv + 2·P,
//    each read by its query group only (as full attention's GQA heads are).
#include "attention/attention_policy.h"

#include <algorithm>

namespace workbench {
namespace {

class LatentPolicy final : public AttentionPolicy {
public:
    using AttentionPolicy::AttentionPolicy;

    Status check(const PagedKvShape& model, KvTypes types) const override {
        const bool absorbed = spec_.form == LatentForm::absorbed;
        if (!absorbed && spec_.rank % 2 != 0) return bad("rank must be even (the latent is stored as two halves)");
        if (spec_.heads == LatentHeads::each) {
            if (spec_.rank % model.n_kv_heads != 0)
                return bad("heads=each shares the rank among the " + std::to_string(model.n_kv_heads) + " KV heads: it must be a multiple of " +
                           std::to_string(model.n_kv_heads));
            if (spec_.ranks == LatentRanks::measured) return bad("heads=each takes ranks=uniform");
        }
        if (absorbed && model.rope.yarn())
            return bad("form=absorbed does not scale the position-free pairs by YaRN's magnitude yet; use form=rebuild");
        if (absorbed && types.k != types.v)
            return bad("form=absorbed stores one row whose first values are V, so K and V take one --kv-type");
        if (spec_.rope_pairs > 0) {
            if (spec_.rope_pairs > model.head_dim / 2)
                return bad("rope=" + std::to_string(spec_.rope_pairs) + " is more than the " + std::to_string(model.head_dim / 2) +
                           " RoPE pairs of a " + std::to_string(model.head_dim) + "-dimension head");
            if (model.rope.n_rot != model.head_dim)
                return bad("rope= needs RoPE over the whole head; this model rotates " + std::to_string(model.rope.n_rot) + " of " +
                           std::to_string(model.head_dim) + " dimensions");
        }
        // A latent factors the stacked K/V projection less its kept RoPE rows: more rank than rows holds nothing more.
        const int64_t v_dim = model.head_dim_v > 0 ? model.head_dim_v : model.head_dim;
        const int64_t rows = static_cast<int64_t>(model.n_kv_heads) * (model.head_dim + v_dim - 2 * spec_.rope_pairs);
        if (rows > 0 && spec_.rank > rows)
            return bad("rank expected 1.." + std::to_string(rows) + " (the stacked K/V projection has " + std::to_string(rows) +
                       (spec_.rope_pairs > 0 ? " rows without its kept RoPE rows)" : " rows)"));
        for (int32_t layer = 0; layer < (model.latent_ranks.empty() ? 1 : model.n_layers); ++layer) {
            const int32_t block = static_cast<int32_t>(kv_dtype_layout(types.k).block_values);
            const std::string where = model.latent_ranks.empty() ? "" : " in layer " + std::to_string(layer);
            if (absorbed) {
                // The row is whole blocks, and so is its value part (V = the first R values).
                const int32_t rank = rank_of(model, layer) / latent_heads(model), width = absorbed_width(model, layer);
                if (width % block != 0 || rank % block != 0)
                    return bad("with KV type " + std::string(kv_dtype_name(types.k)) + " the rank of a latent (" + std::to_string(rank) + where +
                               ") and its row (with its kept RoPE values: " + std::to_string(width) + ") must be multiples of " +
                               std::to_string(block));
                continue;
            }
            const int32_t half = stored_half(model, layer);
            for (KvDType t : {types.k, types.v})
                if (half % static_cast<int32_t>(kv_dtype_layout(t).block_values) != 0)
                    return bad("with KV type " + std::string(kv_dtype_name(t)) + " the values stored per token (rank + 2 · rope · " +
                               std::to_string(model.n_kv_heads) + " KV heads = " + std::to_string(2 * half) + where +
                               ") must be a multiple of " + std::to_string(2 * kv_dtype_layout(t).block_values));
        }
        return Status::ok_status();
    }
    PagedKvShape stored_shape(const PagedKvShape& model) const override {
        const bool absorbed = spec_.form == LatentForm::absorbed;
        auto width = [&](int32_t layer) { return absorbed ? absorbed_width(model, layer) : stored_half(model, layer); };
        PagedKvShape s = model;
        s.n_kv_heads = absorbed ? latent_heads(model) : 1;
        s.head_dim = width(0);
        s.layer_head_dim.clear();
        if (!model.latent_ranks.empty()) {
            for (int32_t layer = 0; layer < model.n_layers; ++layer) s.layer_head_dim.push_back(width(layer));
            s.head_dim = *std::max_element(s.layer_head_dim.begin(), s.layer_head_dim.end());
        }
        if (absorbed) {
            // V is the row's first R values (per layer with ranks=measured: the backend knows R).
            s.values_in_keys = true;
            s.head_dim_v = model.latent_ranks.empty() ? spec_.rank / latent_heads(model) : 0;
            s.rope_offset = 0;
        }
        return s;
    }
    bool rotates_low_bit_rows() const override { return false; }
    bool can_fork() const override { return false; }
    // Rebuilt keys are rebuilt per sequence from the cached latent; absorbed rows are plain token rows.
    bool one_sequence_per_step() const override { return spec_.form == LatentForm::rebuild; }
    bool reads_token_rows() const override { return false; }

private:
    int32_t rank_of(const PagedKvShape& model, int32_t layer) const {
        return model.latent_ranks.empty() ? spec_.rank : model.latent_ranks[static_cast<size_t>(layer)];
    }
    int32_t row_width(const PagedKvShape& model, int32_t layer) const { return rank_of(model, layer) + 2 * spec_.rope_pairs * model.n_kv_heads; }
    int32_t stored_half(const PagedKvShape& model, int32_t layer) const { return row_width(model, layer) / 2; }
    int32_t latent_heads(const PagedKvShape& model) const { return spec_.heads == LatentHeads::each ? model.n_kv_heads : 1; }
    // An absorbed row: one latent and the kept pairs of the KV heads it serves.
    int32_t absorbed_width(const PagedKvShape& model, int32_t layer) const { return row_width(model, layer) / latent_heads(model); }
    Status bad(const std::string& what) const {
        return error(StatusCode::invalid_argument, "--attention " + attention_spec_name(spec_) + ": " + what);
    }
};

AttentionVariant describe() {
    return {AttentionKind::latent, "latent", "each layer caches a rank-R latent and rebuilds K and V from it (factored at load, calibrated on paradise_lost.txt)",
            {integer_parameter("rank", "Rank (values per token)", 96, 1, 4096, "Values stored per layer and token instead of 2 · n_kv_heads · head_dim (a load-time SVD of each layer's K/V projection, weighted by a calibration text). Even; with a quantized KV type, a multiple of 64."),
             integer_parameter("rope", "Exact RoPE pairs per KV head", 0, 0, 256, "Each KV head's RoPE pairs that carry the most of the calibration text's scores, cached as they are beside the latent (2 values a pair and KV head per token); the latent then spends its rank on the rest of K and on V."),
             choice_parameter("balance", "K/V balance", {"energy", "none"},
                              "energy: each layer's K is scaled to V's energy on the calibration text before the joint SVD (TransMLA's balancing), so the rank is not spent on K alone. none: the SVD of K and V as they are."),
             choice_parameter("ranks", "Rank per layer", {"uniform", "measured"},
                              "uniform: rank R in every layer. measured: R on average, more where cutting a layer alone moves the model's output most on held-out calibration text (one forward pass per layer at load, as Palu's rank search does with gradients)."),
             choice_parameter("form", "Attention form", {"rebuild", "absorbed"},
                              "rebuild: every step rebuilds the sequence's keys from the latents and rotates every dimension (exact for the factors, slow). absorbed: U_k is folded into the queries, as DeepSeek's MLA decodes: one row [latent | kept pairs] per token read once by every head, the kept RoPE pairs exact and the rest scored position-free."),
             choice_parameter("pick", "Kept pairs", {"norm", "frequency"},
                              "norm: each KV head's pairs carrying the most of the calibration text's scores (MHA2MLA's 2-norm). frequency: the fastest-turning pairs, the same in every head — with form=absorbed the pairs left position-free are then the ones that turn least."),
             choice_parameter("heads", "Latents", {"joint", "each"},
                              "joint: one latent for all KV heads (DeepSeek's MLA): the SVD shares directions across heads, and with form=absorbed every query head reads all R values. each: R / n_kv_heads values per KV head, factored apart: a query head reads only its own, so the absorbed form does full attention's work per byte read.")}};
}

std::string spec_parameters(const AttentionSpec& s) {
    return ":rank=" + std::to_string(s.rank) + (s.rope_pairs ? ",rope=" + std::to_string(s.rope_pairs) : "") +
           (s.balance == LatentBalance::none ? ",balance=none" : "") + (s.ranks == LatentRanks::measured ? ",ranks=measured" : "") +
           (s.form == LatentForm::absorbed ? ",form=absorbed" : "") + (s.pick == LatentPick::frequency ? ",pick=frequency" : "") + (s.heads == LatentHeads::each ? ",heads=each" : "");
}

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<LatentPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kLatentPolicy{describe, spec_parameters, make};

}  // namespace workbench
