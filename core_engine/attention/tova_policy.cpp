// TOVA (Oren et al. 2024): at the end of a prompt the attention of its last query, averaged over
// every head, ranks the tokens; every layer and KV head keeps the same share, the same tokens
// across heads. While the reply is generated, each whole block of new tokens is ranked with the
// kept ones by the newest query's attention, and the budget's worst go (TOVA's own policy, a
// block at a time). The mechanism (lanes, freed blocks, plans) is press_policy.cpp's.
#include "attention/press_policy.h"

namespace workbench {
namespace {

constexpr PressMethod kMethod{PressScore::last_query, PressBudget::uniform, true};

AttentionVariant describe() {
    return {AttentionKind::tova, "tova", "the newest query's attention, averaged over its heads, ranks the tokens: at the prompt's end the best `keep` stay, "
            "and while generating each block of new tokens competes for those places", press_parameters(kMethod)};
}

std::string spec_parameters(const AttentionSpec& spec) { return press_spec_parameters(spec, kMethod); }

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) {
    return make_press_policy(spec, kMethod);
}

}  // namespace

extern const PolicyRegistration kTovaPolicy{describe, spec_parameters, make};

}  // namespace workbench
