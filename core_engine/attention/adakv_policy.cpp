// AdaKV (Feng et al. 2024): SnapKV's ranking, but a layer's KV heads share its budget by score, so a head whose attention is
// spread keeps more than one that looks at a few tokens (each keeps at least a fifth of an even share).
// The mechanism (lanes, freed blocks, plans) is press_policy.cpp's.
#include "attention/press_policy.h"

namespace workbench {
namespace {

constexpr PressMethod kMethod{PressScore::window_attention, PressBudget::adaptive};

AttentionVariant describe() {
    return {AttentionKind::adakv, "adakv", "SnapKV's ranking; a layer's KV heads share its budget by score, so heads keep different numbers of tokens", press_parameters(kMethod)};
}

std::string spec_parameters(const AttentionSpec& spec) { return press_spec_parameters(spec, kMethod); }

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) {
    return make_press_policy(spec, kMethod);
}

}  // namespace

extern const PolicyRegistration kAdakvPolicy{describe, spec_parameters, make};

}  // namespace workbench
