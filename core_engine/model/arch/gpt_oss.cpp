// gpt-oss (OpenAI's open-weight mixture of experts; llama.cpp's openai-moe): attention with
// Q/K/V and output biases and a learned sink logit per head (it joins each query's softmax and
// brings no value); even layers local over attention.sliding_window tokens, odd ones global,
// both under YaRN; post_attention_norm is the norm before the experts; a layer of experts whose
// router has a bias and whose k weights are the softmax of the k chosen logits, each expert a
// clamped SwiGLU with biases; an output head of its own.
#include <algorithm>

#include "model/arch/architecture.h"

namespace workbench {
namespace {

Status read_gpt_oss_hparams(const GgufFile& f, ModelHparams& hp) {
    const std::string p = hp.arch + ".";
    if (!f.find(p + "expert_feed_forward_length"))
        return error(StatusCode::not_found, f.path() + ": required metadata key '" + p + "expert_feed_forward_length' is missing");
    WB_RETURN_IF_ERROR(read_expert_hparams(f, hp));
    hp.experts.gating = ExpertGating::softmax_weight;
    hp.experts.norm_weights = false;
    WB_RETURN_IF_ERROR(read_local_layers(f, hp, 2, true));
    hp.rope_freq_base_local = hp.rope_freq_base;
    hp.rope_freq_scale_local = hp.rope_freq_scale;
    WB_ASSIGN_OR_RETURN(auto base, f.get_float_opt(p + "rope.freq_base_swa"));
    if (base) hp.rope_freq_base_local = static_cast<float>(*base);
    if (!(hp.rope_freq_base_local > 0)) return error(StatusCode::invalid_file, f.path() + ": rope.freq_base_swa must be positive");
    return {};
}

// gpt-oss's window (128) where the context allows, a quarter of it otherwise.
void write_gpt_oss_synth_hparams(GgufWriter& w, int32_t, int32_t n_ctx) {
    w.set_uint32("gpt-oss.attention.sliding_window", static_cast<uint32_t>(std::min(128, n_ctx / 4)));
}

Architecture describe() {
    using D = TensorDim;
    Architecture a;
    a.name = "gpt-oss";
    a.rope_style = RopeStyle::neox;
    a.rope_scaling = {"none", "linear", "yarn"};
    a.activation = FfnActivation::swiglu_clamped;
    a.read_hparams = read_gpt_oss_hparams;
    a.write_synth_hparams = write_gpt_oss_synth_hparams;
    a.untied_output = true;
    a.layer_tensors = {
        {"attn_norm.weight", &LayerWeights::attn_norm, D::embd, D::one},
        {"attn_q.weight", &LayerWeights::wq, D::embd, D::embd_q},
        {"attn_k.weight", &LayerWeights::wk, D::embd, D::embd_kv},
        {"attn_v.weight", &LayerWeights::wv, D::embd, D::embd_kv},
        {"attn_q.bias", &LayerWeights::bq, D::embd_q, D::one, false},
        {"attn_k.bias", &LayerWeights::bk, D::embd_kv, D::one, false},
        {"attn_v.bias", &LayerWeights::bv, D::embd_kv, D::one, false},
        {"attn_output.weight", &LayerWeights::wo, D::embd_q, D::embd},
        {"attn_output.bias", &LayerWeights::bo, D::embd, D::one},
        {"attn_sinks.weight", &LayerWeights::attn_sinks, D::heads, D::one},
        // Named post_attention_norm in the file; it is the pre-norm of the experts.
        {"post_attention_norm.weight", &LayerWeights::ffn_norm, D::embd, D::one},
        {"ffn_gate_inp.weight", &LayerWeights::ffn_gate_inp, D::embd, D::expert},
        {"ffn_gate_inp.bias", &LayerWeights::ffn_gate_inp_b, D::expert, D::one},
        {"ffn_gate_exps.weight", &LayerWeights::ffn_gate_exps, D::embd, D::ff_exp, true, D::expert},
        {"ffn_up_exps.weight", &LayerWeights::ffn_up_exps, D::embd, D::ff_exp, true, D::expert},
        {"ffn_down_exps.weight", &LayerWeights::ffn_down_exps, D::ff_exp, D::embd, true, D::expert},
        {"ffn_gate_exps.bias", &LayerWeights::ffn_gate_exps_b, D::ff_exp, D::expert},
        {"ffn_up_exps.bias", &LayerWeights::ffn_up_exps_b, D::ff_exp, D::expert},
        {"ffn_down_exps.bias", &LayerWeights::ffn_down_exps_b, D::embd, D::expert},
    };
    return a;
}

}  // namespace

extern const ArchitectureRegistration kGptOssArchitecture{describe};

}  // namespace workbench
