// H2O (Zhang et al. 2023), pressed at the end of a prompt: every query of the prompt, as it is
// read, adds its attention over the unpressed tokens to each token's total (recomputed from the
// step's queries and the cached keys, its cost reported as index ops); at the prompt's end each
// layer and KV head keeps the heavy hitters (the largest totals) for half its budget and the most
// recent tokens for the other half. While the reply is generated the totals run on over the kept
// tokens and the new ones, and each whole block of new tokens competes for the budget's places
// (the newest half always kept): the cache stays at the prompt's budget. The mechanism (lanes,
// freed blocks, plans) is press_policy.cpp's.
#include "attention/press_policy.h"

namespace workbench {
namespace {

constexpr PressMethod kMethod{PressScore::accumulated_attention, PressBudget::uniform, true};

AttentionVariant describe() {
    return {AttentionKind::h2o, "h2o",
            "the attention each token received from every query so far picks the heavy hitters; they and the most recent "
            "tokens share the `keep` budget half and half, at the prompt's end and while generating",
            press_parameters(kMethod)};
}

std::string spec_parameters(const AttentionSpec& spec) { return press_spec_parameters(spec, kMethod); }

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) {
    return make_press_policy(spec, kMethod);
}

}  // namespace

extern const PolicyRegistration kH2oPolicy{describe, spec_parameters, make};

}  // namespace workbench
