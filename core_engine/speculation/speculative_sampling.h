// The verification rule of speculative sampling (Leviathan et al. 2023; Chen et al. 2023): a
// drafted token x, proposed with probability q(x), is kept with probability min(1, p(x)/q(x))
// under the target's p; when it is not, the token is drawn from the residual max(0, p − q),
// normalized. The kept-or-redrawn token is then distributed exactly as p. A greedy target is p
// with all mass on its argmax, so it keeps exactly the drafts equal to its own choice.
#pragma once

#include <span>
#include <vector>

#include "sampling/sampler.h"

namespace workbench {

struct SpeculativeDecision {
    bool accepted = false;
    TokenId token = -1;   // the draft when accepted, else the redrawn one
};

// `p`, `q`: distributions as Sampler::distribution gives them (q empty: the draft was proposed
// with certainty, as prompt lookup does). `u_accept`, `u_residual`: uniform draws in [0, 1).
SpeculativeDecision verify_draft(std::span<const TokenProbability> p, std::span<const TokenProbability> q, TokenId draft,
                                 double u_accept, double u_residual);

}  // namespace workbench
