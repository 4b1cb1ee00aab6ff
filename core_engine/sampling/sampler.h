// Picks the next token from logits: penalties (repetition, frequency, presence over the recent
// window), then top-k, top-p, min-p and temperature, then a seeded draw; temperature 0 is greedy.
// Same seed and inputs give the same tokens. The request's logit_bias and grammar are applied
// before, to the row (sampling/token_mask.h). One Sampler per sequence; not thread-safe.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "sampling/top_logits.h"
#include "tokenizer/tokenizer.h"
#include "workbench/config.h"

namespace workbench {

// One token's probability under a sampler's distribution.
struct TokenProbability {
    TokenId token = -1;
    double p = 0;
};

class Sampler {
public:
    explicit Sampler(SamplingParams params);

    // Chooses a token; `logits` has n_vocab entries and is not modified.
    TokenId sample(std::span<const float> logits);
    // How many of a row's best logits sample() reads, when that is fewer than the whole row:
    // 1 when greedy, top_k when it keeps at most kMaxTopLogits; 0 when it needs every logit
    // (penalties, no top_k or a larger one). Capped at `n_vocab`.
    int32_t top_logits_needed(int32_t n_vocab) const;
    // As sample() on the row whose best logits `top` holds (top_logits_needed() of them, best
    // first): the same token from the same seed and history.
    TokenId sample_top(std::span<const TopLogit> top);
    // The distribution sample() draws from under the current history: the surviving candidates
    // best first with probabilities summing to 1 (greedy: the one token with 1). Speculative
    // decoding compares the target's and the draft's with it.
    void distribution(std::span<const float> logits, std::vector<TokenProbability>& out);
    // A uniform number in [0, 1) from the sampler's seeded stream.
    double draw_unit();
    // Records a token that is now part of the sequence (prompt or generated) for the penalties.
    void accept(TokenId token);
    void reset();

    const SamplingParams& params() const { return params_; }

private:
    SamplingParams params_;
    std::mt19937_64 rng_;
    std::vector<TokenId> history_;
    std::vector<std::pair<float, TokenId>> candidates_;  // scratch, reused between calls
    std::vector<double> weights_;                         // scratch: softmax weights
    std::vector<TokenId> window_;                         // scratch: sorted penalty window

    // Applies repetition/frequency/presence penalties to candidates_ (indexed by id).
    void apply_penalties();
    // Penalties, then greedy (returns the token) or the filters: candidates_ sorted with their
    // relative weights in weights_ (returns -1).
    TokenId prepare(std::span<const float> logits);
    // prepare() after the penalties, on candidates_ as they stand.
    TokenId filter_candidates();
    // The inverse-CDF draw over candidates_ and weights_.
    TokenId draw();
};

}  // namespace workbench
