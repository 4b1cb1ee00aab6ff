// deepseek2 (DeepSeek-V2, V2-Lite, V3, R1 and the models converted like them; llama.cpp's
// deepseek2): multi-head latent attention (model_hparams.h LatentAttentionHparams), run in its
// absorbed form whichever of the two layouts the file has — attn_k_b / attn_v_b, or the older
// single attn_kv_b; YaRN whose magnitude goes into the score scale (mscale² / sqrt(head_k))
// instead of the rotation; the first leading_dense_block_count layers with a dense SwiGLU MLP,
// the others with routed experts (softmax or sigmoid, an optional selection bias and groups,
// weights normalised and scaled as the file says) plus shared experts.
#include <cmath>

#include "model/arch/architecture.h"
#include "model/rope_scaling.h"

namespace workbench {
namespace {

bool with_q_lora(const ModelHparams& hp, int32_t) { return hp.mla.q_lora_rank > 0; }
bool without_q_lora(const ModelHparams& hp, int32_t) { return hp.mla.q_lora_rank == 0; }
bool split_kv_b(const ModelHparams& hp, int32_t) { return hp.mla.split_kv_b; }
bool joint_kv_b(const ModelHparams& hp, int32_t) { return !hp.mla.split_kv_b; }
bool dense_layer(const ModelHparams& hp, int32_t il) { return !hp.is_expert_layer(il); }
bool expert_layer(const ModelHparams& hp, int32_t il) { return hp.is_expert_layer(il); }
bool split_gate_up(const ModelHparams& hp, int32_t il) { return hp.is_expert_layer(il) && !hp.experts.merged_gate_up; }
bool merged_gate_up(const ModelHparams& hp, int32_t il) { return hp.is_expert_layer(il) && hp.experts.merged_gate_up; }

Status invalid(const GgufFile& f, const std::string& what) { return error(StatusCode::invalid_file, f.path() + ": " + what); }

// The latent attention's shape, checked against the head sizes the file also states.
Status read_latent_attention(const GgufFile& f, ModelHparams& hp) {
    const std::string p = hp.arch + ".";
    LatentAttentionHparams& m = hp.mla;
    WB_RETURN_IF_ERROR(read_count(f, p + "attention.kv_lora_rank", m.kv_lora_rank, true, 1, hp.n_embd));
    WB_RETURN_IF_ERROR(read_count(f, p + "attention.q_lora_rank", m.q_lora_rank, false, 0, 1 << 16));
    int32_t value_length = 0;
    WB_RETURN_IF_ERROR(read_count(f, p + "attention.value_length", value_length, true, 1, 4096));
    const bool mla_keys = f.find(p + "attention.key_length_mla") || f.find(p + "attention.value_length_mla");
    if (mla_keys) {
        // The converter's form: one KV head whose key is [c | RoPE key] and whose value is c.
        WB_RETURN_IF_ERROR(read_count(f, p + "attention.key_length_mla", m.head_k, true, 1, 4096));
        WB_RETURN_IF_ERROR(read_count(f, p + "attention.value_length_mla", m.head_v, true, 1, 4096));
        if (hp.n_head_kv != 1) return invalid(f, "attention.head_count_kv is " + std::to_string(hp.n_head_kv) + "; a latent-attention file has 1");
        if (hp.head_dim != m.kv_lora_rank + hp.n_rot || value_length != m.kv_lora_rank)
            return invalid(f, "attention.key_length " + std::to_string(hp.head_dim) + " / value_length " + std::to_string(value_length) +
                                  " disagree with kv_lora_rank " + std::to_string(m.kv_lora_rank) + " + rope.dimension_count " +
                                  std::to_string(hp.n_rot) + " / kv_lora_rank");
    } else {
        // Older files: the heads as multi-head attention (key_length = nope + RoPE, value_length)
        // and attn_kv_b; the engine absorbs them the same way.
        m.head_k = hp.head_dim;
        m.head_v = value_length;
        m.split_kv_b = false;
        if (hp.n_head_kv != hp.n_head)
            return invalid(f, "attention.head_count_kv " + std::to_string(hp.n_head_kv) + " differs from head_count " +
                                  std::to_string(hp.n_head) + " in a file without key_length_mla");
    }
    if (hp.mla_nope() < 1)
        return invalid(f, "the key head (" + std::to_string(m.head_k) + ") leaves no dimensions without RoPE (rope.dimension_count " +
                              std::to_string(hp.n_rot) + ")");
    // What the cache holds: [c | RoPE key], one head, V = c.
    hp.head_dim = m.kv_lora_rank + hp.n_rot;
    hp.head_dim_v = m.kv_lora_rank;
    hp.n_head_kv = 1;
    return {};
}

Status read_deepseek2_experts(const GgufFile& f, ModelHparams& hp) {
    const std::string p = hp.arch + ".";
    ExpertHparams& e = hp.experts;
    WB_RETURN_IF_ERROR(read_expert_hparams(f, hp));
    WB_RETURN_IF_ERROR(read_count(f, p + "leading_dense_block_count", e.n_dense_lead, false, 0, hp.n_layer));
    WB_RETURN_IF_ERROR(read_count(f, p + "expert_shared_count", e.n_shared, true, 1, 64));
    WB_ASSIGN_OR_RETURN(auto scale, f.get_float_opt(p + "expert_weights_scale"));
    if (scale) {
        if (!(*scale >= 0 && *scale < 1e4)) return invalid(f, "metadata '" + p + "expert_weights_scale' is out of range");
        e.weights_scale = static_cast<float>(*scale);
    }
    WB_ASSIGN_OR_RETURN(auto norm, f.get_bool_opt(p + "expert_weights_norm"));
    e.norm_weights = norm.value_or(false);
    // Without the key: softmax, as the first V2 files meant (GLM-4.7-Lite's files: sigmoid).
    int32_t gating = (hp.n_layer == 47 || hp.n_layer == 48) && hp.n_vocab == 154880 ? 2 : 1;
    WB_RETURN_IF_ERROR(read_count(f, p + "expert_gating_func", gating, false, 1, 4));
    if (gating > 2) return error(StatusCode::unsupported, f.path() + ": metadata '" + p + "expert_gating_func' = " + std::to_string(gating) +
                                                              " is a router this engine does not run (1 softmax, 2 sigmoid)");
    e.gating = gating == 2 ? ExpertGating::sigmoid : ExpertGating::softmax;
    const std::string first_expert_layer = "blk." + std::to_string(e.n_dense_lead) + ".";
    e.merged_gate_up = f.find_tensor(first_expert_layer + "ffn_gate_up_exps.weight") != nullptr;
    return {};
}

Status read_deepseek2_hparams(const GgufFile& f, ModelHparams& hp) {
    const std::string p = hp.arch + ".";
    if (f.find(p + "attention.temperature_scale"))
        return error(StatusCode::unsupported, f.path() + ": metadata '" + p + "attention.temperature_scale' asks for attention "
                                              "temperature tuning (Mistral Large 3), which this engine does not run");
    WB_RETURN_IF_ERROR(read_latent_attention(f, hp));
    WB_RETURN_IF_ERROR(read_deepseek2_experts(f, hp));
    // The converter stores 0.1 · mscale_all_dim; llama.cpp takes mscale equal to it, so YaRN
    // leaves the rotation's magnitude at 1 and the scores carry mscale² instead.
    WB_ASSIGN_OR_RETURN(auto log_mul, f.get_float_opt(p + "rope.scaling.yarn_log_multiplier"));
    if (log_mul) {
        if (!(*log_mul >= 0 && *log_mul < 100)) return invalid(f, "metadata '" + p + "rope.scaling.yarn_log_multiplier' is out of range");
        hp.rope_yarn_log_mul = static_cast<float>(*log_mul / 0.1);
        hp.rope_yarn_mscale = hp.rope_yarn_log_mul;
    }
    const float factor_log = std::log(1.0f / hp.rope_freq_scale);
    const float attn_factor = hp.rope_yarn ? model_rope(hp, false, nullptr).attn_factor : hp.rope_attn_factor;
    const float mscale = attn_factor * (1.0f + 0.1f * factor_log) * (1.0f + 0.1f * hp.rope_yarn_log_mul * factor_log);
    hp.attention_scale = mscale * mscale / std::sqrt(static_cast<float>(hp.mla.head_k));
    return {};
}

Architecture describe() {
    using D = TensorDim;
    Architecture a;
    a.name = "deepseek2";
    a.rope_style = RopeStyle::normal;
    a.rope_scaling = {"none", "linear", "yarn"};
    a.read_hparams = read_deepseek2_hparams;
    a.layer_tensors = {
        {"attn_norm.weight", &LayerWeights::attn_norm, D::embd, D::one},
        {"attn_q_a.weight", &LayerWeights::wq_a, D::embd, D::q_lora, true, D::one, with_q_lora},
        {"attn_q_a_norm.weight", &LayerWeights::q_a_norm, D::q_lora, D::one, true, D::one, with_q_lora},
        {"attn_q_b.weight", &LayerWeights::wq_b, D::q_lora, D::mla_q, true, D::one, with_q_lora},
        {"attn_q.weight", &LayerWeights::wq, D::embd, D::mla_q, true, D::one, without_q_lora},
        {"attn_kv_a_mqa.weight", &LayerWeights::wkv_a_mqa, D::embd, D::kv_lora_rope},
        {"attn_kv_a_norm.weight", &LayerWeights::kv_a_norm, D::kv_lora, D::one},
        {"attn_k_b.weight", &LayerWeights::wk_b, D::mla_nope, D::kv_lora, true, D::heads, split_kv_b},
        {"attn_v_b.weight", &LayerWeights::wv_b, D::kv_lora, D::mla_v, true, D::heads, split_kv_b},
        {"attn_kv_b.weight", &LayerWeights::wkv_b, D::kv_lora, D::mla_kv_b, true, D::one, joint_kv_b},
        {"attn_output.weight", &LayerWeights::wo, D::mla_o, D::embd},
        {"ffn_norm.weight", &LayerWeights::ffn_norm, D::embd, D::one},
        {"ffn_gate.weight", &LayerWeights::ffn_gate, D::embd, D::ff, true, D::one, dense_layer},
        {"ffn_up.weight", &LayerWeights::ffn_up, D::embd, D::ff, true, D::one, dense_layer},
        {"ffn_down.weight", &LayerWeights::ffn_down, D::ff, D::embd, true, D::one, dense_layer},
        {"ffn_gate_inp.weight", &LayerWeights::ffn_gate_inp, D::embd, D::expert, true, D::one, expert_layer},
        {"exp_probs_b.bias", &LayerWeights::exp_probs_b, D::expert, D::one, false, D::one, expert_layer},
        {"ffn_gate_exps.weight", &LayerWeights::ffn_gate_exps, D::embd, D::ff_exp, true, D::expert, split_gate_up},
        {"ffn_up_exps.weight", &LayerWeights::ffn_up_exps, D::embd, D::ff_exp, true, D::expert, split_gate_up},
        {"ffn_down_exps.weight", &LayerWeights::ffn_down_exps, D::ff_exp, D::embd, true, D::expert, expert_layer},
        {"ffn_gate_shexp.weight", &LayerWeights::ffn_gate_shexp, D::embd, D::ff_shexp, true, D::one, expert_layer},
        {"ffn_up_shexp.weight", &LayerWeights::ffn_up_shexp, D::embd, D::ff_shexp, true, D::one, expert_layer},
        {"ffn_down_shexp.weight", &LayerWeights::ffn_down_shexp, D::ff_shexp, D::embd, true, D::one, expert_layer},
    };
    a.fused_layer_tensors = {
        {"ffn_gate_up_exps.weight", D::embd, {{&LayerWeights::ffn_gate_exps, D::ff_exp}, {&LayerWeights::ffn_up_exps, D::ff_exp}}, D::expert,
         merged_gate_up},
    };
    return a;
}

}  // namespace

extern const ArchitectureRegistration kDeepseek2Architecture{describe};

}  // namespace workbench
