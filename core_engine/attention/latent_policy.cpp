// Latent KV (MLA-style, factored from a trained model at load): each layer caches only c = A·x,
// R values per token, and with rope=P also each KV head's P most-used RoPE pairs of its key as
// they are (after RoPE, MHA2MLA's partial RoPE kept exact). Stored as one "head" of
// (R + 2·P·n_kv)/2 values whose first half sits in the K arena and second in the V arena; the
// model rebuilds K and V from it (latent_kv.h). With ranks=measured the model's factors have a
// rank per layer (R on average) and each layer's rows their own width. Each query reads every
// entry.
#include "attention/attention_policy.h"

#include <algorithm>

namespace workbench {
namespace {

class LatentPolicy final : public AttentionPolicy {
public:
    using AttentionPolicy::AttentionPolicy;

    Status check(const PagedKvShape& model, KvTypes types) const override {
        if (spec_.rank % 2 != 0) return bad("rank must be even (the latent is stored as two halves)");
        if (spec_.rope_pairs > 0) {
            if (spec_.rope_pairs > model.head_dim / 2)
                return bad("rope=" + std::to_string(spec_.rope_pairs) + " is more than the " + std::to_string(model.head_dim / 2) +
                           " RoPE pairs of a " + std::to_string(model.head_dim) + "-dimension head");
            if (model.rope.n_rot != model.head_dim)
                return bad("rope= needs RoPE over the whole head; this model rotates " + std::to_string(model.rope.n_rot) + " of " +
                           std::to_string(model.head_dim) + " dimensions");
        }
        for (int32_t layer = 0; layer < (model.latent_ranks.empty() ? 1 : model.n_layers); ++layer) {
            const int32_t half = stored_half(model, layer);
            for (KvDType t : {types.k, types.v})
                if (half % static_cast<int32_t>(kv_dtype_layout(t).block_values) != 0)
                    return bad("with KV type " + std::string(kv_dtype_name(t)) + " the values stored per token (rank + 2 · rope · " +
                               std::to_string(model.n_kv_heads) + " KV heads = " + std::to_string(2 * half) +
                               (model.latent_ranks.empty() ? "" : " in layer " + std::to_string(layer)) + ") must be a multiple of " +
                               std::to_string(2 * kv_dtype_layout(t).block_values));
        }
        return Status::ok_status();
    }
    PagedKvShape stored_shape(const PagedKvShape& model) const override {
        PagedKvShape s = model;
        s.n_kv_heads = 1;
        s.head_dim = stored_half(model, 0);
        s.layer_head_dim.clear();
        if (!model.latent_ranks.empty()) {
            for (int32_t layer = 0; layer < model.n_layers; ++layer) s.layer_head_dim.push_back(stored_half(model, layer));
            s.head_dim = *std::max_element(s.layer_head_dim.begin(), s.layer_head_dim.end());
        }
        return s;
    }
    bool rotates_low_bit_rows() const override { return false; }
    bool can_fork() const override { return false; }
    // Its keys are rebuilt per sequence from the cached latent.
    bool one_sequence_per_step() const override { return true; }
    bool reads_token_rows() const override { return false; }

private:
    int32_t stored_half(const PagedKvShape& model, int32_t layer) const {
        const int32_t rank = model.latent_ranks.empty() ? spec_.rank : model.latent_ranks[static_cast<size_t>(layer)];
        return (rank + 2 * spec_.rope_pairs * model.n_kv_heads) / 2;
    }
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
                              "uniform: rank R in every layer. measured: R on average, more where cutting a layer alone moves the model's output most on held-out calibration text (one forward pass per layer at load, as Palu's rank search does with gradients).")}};
}

std::string spec_parameters(const AttentionSpec& s) {
    return ":rank=" + std::to_string(s.rank) + (s.rope_pairs ? ",rope=" + std::to_string(s.rope_pairs) : "") +
           (s.balance == LatentBalance::none ? ",balance=none" : "") + (s.ranks == LatentRanks::measured ? ",ranks=measured" : "");
}

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<LatentPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kLatentPolicy{describe, spec_parameters, make};

}  // namespace workbench
