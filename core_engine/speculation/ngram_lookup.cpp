// A backwards scan for the suffix: the latest match is the likeliest to continue the same way
// (the passage being quoted right now, not an older one).
#include "speculation/ngram_lookup.h"

#include <algorithm>

namespace workbench {

std::vector<TokenId> lookup_draft(std::span<const TokenId> tokens, int32_t ngram, int32_t n_max, int32_t min_ngram) {
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n_max <= 0) return {};
    for (int64_t len = std::min<int64_t>(ngram, n - 1); len >= std::max(1, min_ngram); --len) {
        const std::span<const TokenId> suffix = tokens.subspan(static_cast<size_t>(n - len));
        // A match ends before the suffix starts, so at least one known token follows it.
        for (int64_t start = n - len - 1; start >= 0; --start) {
            if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + start)) continue;
            const int64_t from = start + len;
            const int64_t count = std::min<int64_t>(n_max, n - from);
            return {tokens.begin() + from, tokens.begin() + from + count};
        }
    }
    return {};
}

}  // namespace workbench
