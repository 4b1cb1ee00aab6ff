// mistral: llama's block and conventions under its own metadata prefix.
#include "model/arch/architecture.h"

namespace workbench {
namespace {

Architecture describe() { return llama_block_architecture("mistral", RopeStyle::normal, false); }

}  // namespace

extern const ArchitectureRegistration kMistralArchitecture{describe};

}  // namespace workbench
