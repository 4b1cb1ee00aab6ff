// PyramidKV (Cai et al. 2024): SnapKV's ranking with per-layer budgets falling linearly from the first layer to the last (attention
// spreads wide low in the model and narrows higher up), `keep` on average; kvpress's rule, beta 20, even budgets where the pyramid does not fit.
// The mechanism (lanes, freed blocks, plans) is press_policy.cpp's.
#include "attention/press_policy.h"

namespace workbench {
namespace {

constexpr PressMethod kMethod{PressScore::window_attention, PressBudget::pyramid};

AttentionVariant describe() {
    return {AttentionKind::pyramidkv, "pyramidkv", "SnapKV's ranking, with more tokens kept in the first layers and fewer in the last (keep on average)", press_parameters(kMethod)};
}

std::string spec_parameters(const AttentionSpec& spec) { return press_spec_parameters(spec, kMethod); }

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) {
    return make_press_policy(spec, kMethod);
}

}  // namespace

extern const PolicyRegistration kPyramidkvPolicy{describe, spec_parameters, make};

}  // namespace workbench
