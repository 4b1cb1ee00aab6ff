// mistral: llama's block and conventions under its own metadata prefix.
#include "model/arch/architecture.h"

namespace workbench {
namespace {

Architecture describe() { return {"mistral", RopeStyle::normal, {"none", "linear"}, llama_block_tensors(false)}; }

}  // namespace

extern const ArchitectureRegistration kMistralArchitecture{describe};

}  // namespace workbench
