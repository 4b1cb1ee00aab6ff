// TOVA (Oren et al. 2024) at the end of a prompt: the attention of its last query, averaged over every head, ranks the tokens; every
// layer and KV head keeps the same share, the same tokens across heads.
// The mechanism (lanes, freed blocks, plans) is press_policy.cpp's.
#include "attention/press_policy.h"

namespace workbench {
namespace {

AttentionVariant describe() {
    return {AttentionKind::tova, "tova", "the prompt's last query's attention, averaged over its heads, ranks the tokens; the best `keep` stay", press_parameters(false)};
}

std::string spec_parameters(const AttentionSpec& spec) { return press_spec_parameters(spec, false); }

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) {
    return make_press_policy(spec, {PressScore::last_query, PressBudget::uniform});
}

}  // namespace

extern const PolicyRegistration kTovaPolicy{describe, spec_parameters, make};

}  // namespace workbench
