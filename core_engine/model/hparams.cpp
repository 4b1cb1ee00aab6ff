// Hyperparameter loading with the per-architecture key prefix and defaults llama.cpp applies;
// what differs by architecture comes from its file under model/arch/.
#include "model/hparams.h"

#include <algorithm>
#include <cmath>

#include "model/arch/architecture.h"

namespace workbench {
namespace {

Status bad(const GgufFile& f, const std::string& what) { return error(StatusCode::invalid_file, f.path() + ": " + what); }

}  // namespace

Status read_count(const GgufFile& f, const std::string& key, int32_t& out, bool required, int64_t lo, int64_t hi) {
    if (const GgufValue* v = f.find(key); v && v->type == GgufType::array)
        return error(StatusCode::unsupported, f.path() + ": metadata '" + key + "' differs per layer, which this engine does not run");
    WB_ASSIGN_OR_RETURN(auto v, f.get_uint_opt(key));
    if (!v) return required ? error(StatusCode::not_found, f.path() + ": required metadata key '" + key + "' is missing") : Status{};
    if (static_cast<int64_t>(*v) < lo || static_cast<int64_t>(*v) > hi || *v > (1u << 30))
        return bad(f, "metadata '" + key + "' = " + std::to_string(*v) + " is out of range (" + std::to_string(lo) + ".." + std::to_string(hi) + ")");
    out = static_cast<int32_t>(*v);
    return {};
}

Status read_local_layers(const GgufFile& f, ModelHparams& hp, uint32_t default_period, bool required) {
    const std::string p = hp.arch + ".";
    WB_RETURN_IF_ERROR(read_count(f, p + "attention.sliding_window", hp.sliding_window, required, required ? 1 : 0, 1 << 24));
    if (hp.sliding_window == 0) return {};
    const std::string key = p + "attention.sliding_window_pattern";
    if (const GgufValue* v = f.find(key); v && v->type == GgufType::array) {
        WB_ASSIGN_OR_RETURN(auto local, f.get_int_array(key));
        if (local.size() != static_cast<size_t>(hp.n_layer))
            return bad(f, "metadata '" + key + "' has " + std::to_string(local.size()) + " entries for " + std::to_string(hp.n_layer) + " layers");
        for (int32_t il = 0; il < hp.n_layer; ++il)
            if (local[static_cast<size_t>(il)] != 0) hp.local_layers.push_back(il);
        return {};
    }
    int32_t every = static_cast<int32_t>(default_period);
    WB_RETURN_IF_ERROR(read_count(f, key, every, false, 1, 1024));
    for (int32_t il = 0; il < hp.n_layer; ++il)
        if (il % every < every - 1) hp.local_layers.push_back(il);
    return {};
}

Status expand_latent_attention(ModelHparams& hp) {
    if (!hp.is_mla()) return error(StatusCode::invalid_argument, "--mla-cache expanded: " + hp.arch + " has no latent attention to expand");
    hp.mla.expanded = true;
    hp.head_dim = hp.mla.head_k;
    hp.head_dim_v = hp.mla.head_v;
    hp.n_head_kv = hp.n_head;
    return {};
}

Status read_expert_hparams(const GgufFile& f, ModelHparams& hp) {
    const std::string p = hp.arch + ".";
    ExpertHparams& e = hp.experts;
    WB_RETURN_IF_ERROR(read_count(f, p + "expert_count", e.n_expert, true, 1, 1024));
    WB_RETURN_IF_ERROR(read_count(f, p + "expert_used_count", e.n_expert_used, true, 1, e.n_expert));
    e.n_ff_exp = hp.n_ff / e.n_expert_used;
    WB_RETURN_IF_ERROR(read_count(f, p + "expert_feed_forward_length", e.n_ff_exp, false, 1, 1 << 18));
    if (e.n_ff_exp < 1) return bad(f, "feed_forward_length / expert_used_count leaves the experts no width (set expert_feed_forward_length)");
    WB_RETURN_IF_ERROR(read_count(f, p + "expert_group_count", e.n_groups, false, 1, e.n_expert));
    if (e.n_groups > 1) {
        if (e.n_expert % e.n_groups != 0)
            return bad(f, "expert_count " + std::to_string(e.n_expert) + " is not a multiple of expert_group_count " + std::to_string(e.n_groups));
        WB_RETURN_IF_ERROR(read_count(f, p + "expert_group_used_count", e.n_group_used, true, 1, e.n_groups - 1));
        if (static_cast<int64_t>(e.n_group_used) * (e.n_expert / e.n_groups) < e.n_expert_used)
            return bad(f, "expert_group_used_count " + std::to_string(e.n_group_used) + " leaves fewer experts than expert_used_count " +
                              std::to_string(e.n_expert_used));
    }
    return {};
}

Result<ModelHparams> load_hparams(const GgufFile& f, int32_t n_vocab) {
    ModelHparams hp;
    WB_ASSIGN_OR_RETURN(hp.arch, f.get_string("general.architecture"));
    const Architecture* arch = find_architecture(hp.arch);
    if (!arch)
        return error(StatusCode::unsupported,
                     f.path() + ": architecture '" + hp.arch + "' is not supported (supported: " + supported_architectures() + ")");
    WB_ASSIGN_OR_RETURN(auto name, f.get_string_opt("general.name"));
    hp.name = name.value_or("");
    const std::string p = hp.arch + ".";

    auto get_int = [&](const std::string& key, int32_t& out, bool required, uint64_t max_value) -> Status {
        WB_ASSIGN_OR_RETURN(auto v, f.get_uint_opt(key));
        if (!v) return required ? error(StatusCode::not_found, f.path() + ": required metadata key '" + key + "' is missing") : Status{};
        if (*v == 0 || *v > max_value)
            return bad(f, "metadata '" + key + "' = " + std::to_string(*v) + " is out of range (1.." + std::to_string(max_value) + ")");
        out = static_cast<int32_t>(*v);
        return {};
    };
    WB_RETURN_IF_ERROR(get_int(p + "block_count", hp.n_layer, true, 1024));
    WB_RETURN_IF_ERROR(get_int(p + "context_length", hp.n_ctx_train, true, 1u << 24));
    WB_RETURN_IF_ERROR(get_int(p + "embedding_length", hp.n_embd, true, 1u << 16));
    WB_RETURN_IF_ERROR(get_int(p + "feed_forward_length", hp.n_ff, true, 1u << 18));
    WB_RETURN_IF_ERROR(get_int(p + "attention.head_count", hp.n_head, true, 1024));
    hp.n_head_kv = hp.n_head;
    WB_RETURN_IF_ERROR(get_int(p + "attention.head_count_kv", hp.n_head_kv, false, 1024));
    if (hp.n_embd % hp.n_head != 0)
        return bad(f, "embedding_length " + std::to_string(hp.n_embd) + " is not divisible by head_count " + std::to_string(hp.n_head));
    hp.head_dim = hp.n_embd / hp.n_head;
    WB_RETURN_IF_ERROR(get_int(p + "attention.key_length", hp.head_dim, false, 4096));
    if (hp.n_head % hp.n_head_kv != 0)
        return bad(f, "head_count " + std::to_string(hp.n_head) + " is not a multiple of head_count_kv " + std::to_string(hp.n_head_kv));
    hp.n_rot = hp.head_dim;
    WB_RETURN_IF_ERROR(get_int(p + "rope.dimension_count", hp.n_rot, false, 4096));
    if (hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
        return bad(f, "rope.dimension_count " + std::to_string(hp.n_rot) + " must be even and at most the head size " + std::to_string(hp.head_dim));

    WB_ASSIGN_OR_RETURN(auto eps, f.get_float_opt(p + "attention.layer_norm_rms_epsilon"));
    if (eps) hp.rms_eps = static_cast<float>(*eps);
    WB_ASSIGN_OR_RETURN(auto base, f.get_float_opt(p + "rope.freq_base"));
    if (base) hp.rope_freq_base = static_cast<float>(*base);
    if (!(hp.rope_freq_base > 0)) return bad(f, "rope.freq_base must be positive");

    WB_ASSIGN_OR_RETURN(auto scaling_type, f.get_string_opt(p + "rope.scaling.type"));
    WB_ASSIGN_OR_RETURN(auto scaling_factor, f.get_float_opt(p + "rope.scaling.factor"));
    if (scaling_type && std::find(arch->rope_scaling.begin(), arch->rope_scaling.end(), *scaling_type) == arch->rope_scaling.end()) {
        std::string accepted;
        for (const std::string& t : arch->rope_scaling) accepted += (accepted.empty() ? "" : ", ") + t;
        return error(StatusCode::unsupported,
                     f.path() + ": rope scaling '" + *scaling_type + "' is not supported for " + hp.arch + " (" + accepted + ")");
    }
    hp.rope_yarn = scaling_type && *scaling_type == "yarn";
    if (scaling_factor && *scaling_factor > 0 && (!scaling_type || *scaling_type == "linear" || hp.rope_yarn))
        hp.rope_freq_scale = static_cast<float>(1.0 / *scaling_factor);
    hp.n_ctx_orig_yarn = hp.n_ctx_train;
    WB_RETURN_IF_ERROR(get_int(p + "rope.scaling.original_context_length", hp.n_ctx_orig_yarn, false, 1u << 24));
    WB_ASSIGN_OR_RETURN(auto attn_factor, f.get_float_opt(p + "rope.scaling.attn_factor"));
    if (attn_factor) {
        if (!(*attn_factor > 0 && *attn_factor < 100)) return bad(f, "rope.scaling.attn_factor must be positive");
        hp.rope_attn_factor = static_cast<float>(*attn_factor);
    }

    hp.rope_style = arch->rope_style;
    hp.n_vocab = n_vocab;
    if (arch->scale_embeddings) hp.embedding_scale = std::sqrt(static_cast<float>(hp.n_embd));
    if (arch->read_hparams) WB_RETURN_IF_ERROR(arch->read_hparams(f, hp));
    return hp;
}

}  // namespace workbench
