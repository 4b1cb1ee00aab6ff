// qwen2 (Qwen 1.5, Qwen2, Qwen2.5): llama's block with Q/K/V biases (required) and RoPE on the
// two halves of each head (NeoX pairing).
#include "model/arch/architecture.h"

namespace workbench {
namespace {

Architecture describe() { return llama_block_architecture("qwen2", RopeStyle::neox, true); }

}  // namespace

extern const ArchitectureRegistration kQwen2Architecture{describe};

}  // namespace workbench
