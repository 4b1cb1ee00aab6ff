// Latent KV (MLA-style, factored from a trained model at load): each layer caches only c = A·x,
// R values per token, stored as one "head" with its first half in the K arena and its second in
// the V arena; the model rebuilds K and V from c (latent_kv.h). Each query reads every entry.
#include "attention/attention_policy.h"

namespace workbench {
namespace {

class LatentPolicy final : public AttentionPolicy {
public:
    using AttentionPolicy::AttentionPolicy;

    Status check(const PagedKvShape&, KvTypes types) const override {
        if (spec_.rank % 2 != 0) return bad("rank must be even (the latent is stored as two halves)");
        for (KvDType t : {types.k, types.v})
            if ((spec_.rank / 2) % static_cast<int32_t>(kv_dtype_layout(t).block_values) != 0)
                return bad("with KV type " + std::string(kv_dtype_name(t)) + " the rank must be a multiple of " +
                           std::to_string(2 * kv_dtype_layout(t).block_values));
        return Status::ok_status();
    }
    PagedKvShape stored_shape(const PagedKvShape& model) const override {
        PagedKvShape s = model;
        s.n_kv_heads = 1;
        s.head_dim = spec_.rank / 2;
        return s;
    }
    bool rotates_low_bit_rows() const override { return false; }
    bool can_fork() const override { return false; }
    // Its keys are rebuilt per sequence from the cached latent.
    bool one_sequence_per_step() const override { return true; }
    bool reads_token_rows() const override { return false; }

private:
    Status bad(const std::string& what) const {
        return error(StatusCode::invalid_argument, "--attention " + attention_spec_name(spec_) + ": " + what);
    }
};

AttentionVariant describe() {
    return {AttentionKind::latent, "latent", "each layer caches a rank-R latent and rebuilds K and V from it (factored at load, calibrated on paradise_lost.txt)",
            {integer_parameter("rank", "Rank (values per token)", 96, 1, 4096, "Values stored per layer and token instead of 2 · n_kv_heads · head_dim (a load-time SVD of each layer's K/V projection, weighted by a calibration text). Even; with a quantized KV type, a multiple of 64.")}};
}

std::string spec_parameters(const AttentionSpec& s) { return ":rank=" + std::to_string(s.rank); }

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<LatentPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kLatentPolicy{describe, spec_parameters, make};

}  // namespace workbench
