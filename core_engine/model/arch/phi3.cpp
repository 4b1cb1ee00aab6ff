// phi3 (Phi-3, Phi-3.5 mini/medium): llama's pre-norm SwiGLU block with Q, K and V stored as one
// attn_qkv tensor and the gate and up projections as one ffn_up (gate rows first), NeoX RoPE.
// The 128k-context models' LongRoPE factors are refused; their sliding-window metadata is
// ignored, as llama.cpp does.
#include "model/arch/architecture.h"

namespace workbench {
namespace {

Architecture describe() {
    using D = TensorDim;
    Architecture a;
    a.name = "phi3";
    a.rope_style = RopeStyle::neox;
    a.rope_scaling = {"none", "linear"};
    a.chat_family = ChatTemplateFamily::phi3;
    a.layer_tensors = {
        {"attn_norm.weight", &LayerWeights::attn_norm, D::embd, D::one},
        {"attn_output.weight", &LayerWeights::wo, D::embd_q, D::embd},
        {"ffn_norm.weight", &LayerWeights::ffn_norm, D::embd, D::one},
        {"ffn_down.weight", &LayerWeights::ffn_down, D::ff, D::embd},
    };
    a.fused_layer_tensors = {
        {"attn_qkv.weight", D::embd, {{&LayerWeights::wq, D::embd_q}, {&LayerWeights::wk, D::embd_kv}, {&LayerWeights::wv, D::embd_kv}}},
        {"ffn_up.weight", D::embd, {{&LayerWeights::ffn_gate, D::ff}, {&LayerWeights::ffn_up, D::ff}}},
    };
    a.refused_tensors = {{"rope_factors_long.weight", "LongRoPE (the 128k-context Phi-3 models)"},
                         {"rope_factors_short.weight", "LongRoPE (the 128k-context Phi-3 models)"}};
    return a;
}

}  // namespace

extern const ArchitectureRegistration kPhi3Architecture{describe};

}  // namespace workbench
