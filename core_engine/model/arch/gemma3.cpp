// gemma3 (Gemma 3 text models): embeddings scaled by sqrt(width); a sandwich block (RMSNorm
// before and after attention and the MLP, the weights stored with the +1 already added); Q and K
// heads RMS-normalized before RoPE (NeoX pairing); GeGLU with tanh-approximated GELU; the query
// scaled by 1/sqrt(head size) before QK^T (by 1/sqrt(width / heads) in the 62-layer 27B, as
// Google's reference does). Its trained attention pattern: every sixth layer is global (base
// rope.freq_base), the others local over attention.sliding_window tokens with their own RoPE
// base (rope.freq_base_swa, default 10,000) — the rule llama.cpp applies.
#include <algorithm>
#include <cmath>

#include "model/arch/architecture.h"

namespace workbench {
namespace {

Status read_gemma3_hparams(const GgufFile& f, ModelHparams& hp) {
    const std::string p = hp.arch + ".";
    WB_RETURN_IF_ERROR(read_local_layers(f, hp, 6, false));
    if (hp.sliding_window > 0) {
        WB_ASSIGN_OR_RETURN(auto base, f.get_float_opt(p + "rope.freq_base_swa"));
        if (base) hp.rope_freq_base_local = static_cast<float>(*base);
        if (!(hp.rope_freq_base_local > 0)) return error(StatusCode::invalid_file, f.path() + ": rope.freq_base_swa must be positive");
    }
    WB_ASSIGN_OR_RETURN(auto softcap, f.get_float_opt(p + "final_logit_softcapping"));
    if (softcap && *softcap > 0) hp.final_logit_softcap = static_cast<float>(*softcap);
    const float query_width = hp.n_layer == 62 ? static_cast<float>(hp.n_embd / hp.n_head) : static_cast<float>(hp.head_dim);
    hp.attention_scale = 1.0f / std::sqrt(query_width);
    return {};
}

// Gemma 3's window (512) where the context allows, a quarter of it otherwise; in a model of under
// six layers every other layer is global, so a small one still has both kinds.
void write_gemma3_synth_hparams(GgufWriter& w, int32_t n_layer, int32_t n_ctx) {
    w.set_uint32("gemma3.attention.sliding_window", static_cast<uint32_t>(std::min(512, n_ctx / 4)));
    w.set_uint32("gemma3.attention.sliding_window_pattern", n_layer >= 6 ? 6 : 2);
    w.set_float32("gemma3.rope.freq_base_swa", 10000.0f);
}

Architecture describe() {
    using D = TensorDim;
    Architecture a;
    a.name = "gemma3";
    a.rope_style = RopeStyle::neox;
    a.rope_scaling = {"none", "linear"};
    a.activation = FfnActivation::gelu_tanh;
    a.scale_embeddings = true;
    a.read_hparams = read_gemma3_hparams;
    a.write_synth_hparams = write_gemma3_synth_hparams;
    a.chat_family = ChatTemplateFamily::gemma;
    a.layer_tensors = llama_block_tensors(false);
    add_qk_norm_tensors(a.layer_tensors);
    a.layer_tensors.push_back({"post_attention_norm.weight", &LayerWeights::attn_post_norm, D::embd, D::one});
    a.layer_tensors.push_back({"post_ffw_norm.weight", &LayerWeights::ffn_post_norm, D::embd, D::one});
    return a;
}

}  // namespace

extern const ArchitectureRegistration kGemma3Architecture{describe};

}  // namespace workbench
