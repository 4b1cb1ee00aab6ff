// mistral: llama's block and conventions under its own metadata prefix; [INST] turns when the
// file carries no chat template.
#include "model/arch/architecture.h"

namespace workbench {
namespace {

Architecture describe() {
    Architecture a = llama_block_architecture("mistral", RopeStyle::normal, false);
    a.chat_family = ChatTemplateFamily::mistral;
    return a;
}

}  // namespace

extern const ArchitectureRegistration kMistralArchitecture{describe};

}  // namespace workbench
