// Distributions are short sparse lists (the sampler's survivors), so lookups are linear scans.
#include "speculation/speculative_sampling.h"

#include <algorithm>

namespace workbench {
namespace {

double probability_of(std::span<const TokenProbability> d, TokenId token) {
    for (const TokenProbability& e : d)
        if (e.token == token) return e.p;
    return 0.0;
}

}  // namespace

SpeculativeDecision verify_draft(std::span<const TokenProbability> p, std::span<const TokenProbability> q, TokenId draft,
                                 double u_accept, double u_residual) {
    const double p_draft = probability_of(p, draft);
    const double q_draft = q.empty() ? 1.0 : probability_of(q, draft);
    // u < p/q, written without the division (q(draft) > 0 for a token the draft proposed).
    if (p_draft > 0 && u_accept * q_draft < p_draft) return {true, draft};
    // The residual max(0, p − q): for a certain draft that is p without the draft token.
    std::vector<double> residual(p.size());
    double total = 0.0;
    for (size_t i = 0; i < p.size(); ++i) {
        const double qi = q.empty() ? (p[i].token == draft ? 1.0 : 0.0) : probability_of(q, p[i].token);
        residual[i] = std::max(0.0, p[i].p - qi);
        total += residual[i];
    }
    if (!(total > 0)) return {false, p.empty() ? draft : p.front().token};   // p == q: rejection had probability 0
    const double target = u_residual * total;
    double cumulative = 0.0;
    for (size_t i = 0; i < p.size(); ++i) {
        cumulative += residual[i];
        if (target < cumulative && residual[i] > 0) return {false, p[i].token};
    }
    for (size_t i = p.size(); i-- > 0;)
        if (residual[i] > 0) return {false, p[i].token};   // rounding left target at the very top
    return {false, p.front().token};
}

}  // namespace workbench
