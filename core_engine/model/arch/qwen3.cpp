// qwen3 (dense Qwen3): llama's block without biases, each Q and K head RMS-normalized (its own
// [head_dim] weight) before RoPE, RoPE on the two halves of each head (NeoX pairing); the head
// size comes from attention.key_length and may differ from width / heads.
#include "model/arch/architecture.h"

namespace workbench {
namespace {

Architecture describe() {
    Architecture a = llama_block_architecture("qwen3", RopeStyle::neox, false);
    add_qk_norm_tensors(a.layer_tensors);
    a.rope_scaling.push_back("yarn");  // the long-context releases (rope.scaling.factor 4 over 32k)
    return a;
}

}  // namespace

extern const ArchitectureRegistration kQwen3Architecture{describe};

}  // namespace workbench
