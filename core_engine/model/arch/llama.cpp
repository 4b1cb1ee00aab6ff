// llama (Llama 1-3, SmolLM2, TinyLlama): the pre-norm block with SwiGLU, RoPE on adjacent pairs,
// optional per-dimension RoPE factors (rope_freqs), Q/K/V biases when a file carries them.
#include "model/arch/architecture.h"

namespace workbench {
namespace {

Architecture describe() { return llama_block_architecture("llama", RopeStyle::normal, false); }

}  // namespace

extern const ArchitectureRegistration kLlamaArchitecture{describe};

}  // namespace workbench
