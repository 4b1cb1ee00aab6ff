// qwen3moe (Qwen3-30B-A3B, Qwen3-235B-A22B): qwen3's attention (QK-norm, NeoX RoPE) with a layer
// of experts in place of every MLP: a softmax router over expert_count SwiGLU experts, the
// expert_used_count best for each token, their weights renormalised to sum to one (no scale:
// llama.cpp reads none for this architecture).
#include "model/arch/architecture.h"

namespace workbench {
namespace {

Status read_qwen3moe_hparams(const GgufFile& f, ModelHparams& hp) {
    WB_RETURN_IF_ERROR(read_expert_hparams(f, hp));
    hp.experts.gating = ExpertGating::softmax;
    hp.experts.norm_weights = true;
    return {};
}

Architecture describe() {
    Architecture a = llama_block_architecture("qwen3moe", RopeStyle::neox, false);
    a.layer_tensors = llama_expert_block_tensors(false);
    add_qk_norm_tensors(a.layer_tensors);
    a.rope_scaling.push_back("yarn");  // the long-context releases (rope.scaling.factor 4 over 32k)
    a.read_hparams = read_qwen3moe_hparams;
    return a;
}

}  // namespace

extern const ArchitectureRegistration kQwen3MoeArchitecture{describe};

}  // namespace workbench
