// KNorm (Devoto et al. 2024): keys with small L2 norms draw the most attention, so each layer and KV head keeps the `keep` share of
// prompt tokens with the smallest key norms. It needs no attention scores at all.
// The mechanism (lanes, freed blocks, plans) is press_policy.cpp's.
#include "attention/press_policy.h"

namespace workbench {
namespace {

constexpr PressMethod kMethod{PressScore::key_norm, PressBudget::uniform};

AttentionVariant describe() {
    return {AttentionKind::knorm, "knorm", "each layer and KV head keeps the prompt tokens with the smallest key norms (no attention scores needed)", press_parameters(kMethod)};
}

std::string spec_parameters(const AttentionSpec& spec) { return press_spec_parameters(spec, kMethod); }

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) {
    return make_press_policy(spec, kMethod);
}

}  // namespace

extern const PolicyRegistration kKnormPolicy{describe, spec_parameters, make};

}  // namespace workbench
