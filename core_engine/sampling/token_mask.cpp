#include "sampling/token_mask.h"

#include "sampling/grammar_matcher.h"

namespace workbench {

std::span<const float> mask_logits(std::span<const float> logits, std::span<const LogitBias> bias, GrammarMatcher* grammar,
                                   std::vector<float>& scratch, int32_t* n_allowed) {
    if (bias.empty() && !grammar) return logits;
    scratch.assign(logits.begin(), logits.end());
    for (const LogitBias& b : bias)
        if (b.token >= 0 && static_cast<size_t>(b.token) < scratch.size()) scratch[static_cast<size_t>(b.token)] += b.bias;
    if (grammar) {
        const int32_t allowed = grammar->mask(scratch);
        if (n_allowed) *n_allowed = allowed;
    }
    return scratch;
}

}  // namespace workbench
