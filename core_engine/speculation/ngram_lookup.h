// Prompt-lookup drafting: the tokens that followed the latest earlier occurrence of the text's
// last n-gram are guessed to follow again (quoting, editing, code). Free: no model runs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "workbench/types.h"

namespace workbench {

// Up to `n_max` tokens continuing `tokens`, copied from after the most recent earlier match of
// its last `ngram` tokens; when there is none, of its last ngram − 1 tokens, and so on down to
// `min_ngram`. Empty when nothing matches.
std::vector<TokenId> lookup_draft(std::span<const TokenId> tokens, int32_t ngram, int32_t n_max, int32_t min_ngram = 1);

}  // namespace workbench
