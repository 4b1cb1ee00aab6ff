// SnapKV (Li et al. 2024): once a prompt is read, the attention of its last `window` queries (where the question is), pooled over
// neighbouring tokens, ranks the prompt's tokens; each layer and KV head keeps the same share of the best.
// The mechanism (lanes, freed blocks, plans) is press_policy.cpp's.
#include "attention/press_policy.h"

namespace workbench {
namespace {

constexpr PressMethod kMethod{PressScore::window_attention, PressBudget::uniform};

AttentionVariant describe() {
    return {AttentionKind::snapkv, "snapkv", "the prompt's last queries rank its tokens by attention; each layer and KV head keeps the best `keep` of them, the rest are evicted", press_parameters(kMethod)};
}

std::string spec_parameters(const AttentionSpec& spec) { return press_spec_parameters(spec, kMethod); }

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) {
    return make_press_policy(spec, kMethod);
}

}  // namespace

extern const PolicyRegistration kSnapkvPolicy{describe, spec_parameters, make};

}  // namespace workbench
