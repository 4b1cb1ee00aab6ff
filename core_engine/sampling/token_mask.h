// The request's own say over its next token, applied to a copy of the model's logits row before
// the sampler reads it: OpenAI's logit_bias (added to a token's logit; -100 all but bans it) and
// then a grammar's refusals (-inf). The step loop passes every row it samples from through here —
// a plain draw, a grammar's redraw, speculative decoding's verification — so bias and grammar act
// in one stage and alike on every path; the sampler itself only penalises, filters and draws.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "workbench/config.h"

namespace workbench {

class GrammarMatcher;

// The row to sample from: `logits` itself when there is no bias and no grammar to apply, else
// `scratch` holding the row with the bias added and, with `grammar`, everything it refuses at -inf
// (`n_allowed`: how many tokens it left). Ids outside the row are ignored.
std::span<const float> mask_logits(std::span<const float> logits, std::span<const LogitBias> bias, GrammarMatcher* grammar,
                                   std::vector<float>& scratch, int32_t* n_allowed = nullptr);

}  // namespace workbench
