// Token sampling: penalties over the recent window, top-k, top-p, min-p, temperature and a
// seeded draw, in llama.cpp's order and with its semantics. Every step is deterministic (ties
// break on the lower id, the uniform draw is built from raw mt19937_64 bits), so a seed
// reproduces a run on any platform and standard library.
#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace workbench {
namespace {

using Candidate = std::pair<float, TokenId>;  // (logit, id)

// Higher logit first; equal logits keep the lower id first, so greedy ties go to the lowest id
// and the candidate order never depends on the sort implementation.
bool ranks_before(const Candidate& a, const Candidate& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// A double in [0, 1) from the top 53 bits of one engine output; std::*_distribution would be
// implementation-defined and break cross-platform reproducibility.
double uniform_unit(std::mt19937_64& rng) {
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Softmax weights exp((logit - best) / temperature) of sorted candidates; the best gets 1.
// Working on differences keeps tiny temperatures from overflowing; +inf logits (only possible
// from a broken model) share all the mass between them.
void relative_weights(const std::vector<Candidate>& sorted, double temperature, std::vector<double>& weights) {
    weights.resize(sorted.size());
    const double top = sorted.front().first;
    for (size_t i = 0; i < sorted.size(); ++i) {
        const double logit = sorted[i].first;
        weights[i] = std::isinf(top) ? (logit == top ? 1.0 : 0.0) : std::exp((logit - top) / temperature);
    }
}

// Keeps the k best candidates, sorted best first.
void keep_top_k(std::vector<Candidate>& candidates, size_t k) {
    if (k < candidates.size()) {
        std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k), candidates.end(),
                         ranks_before);
        candidates.resize(k);
    }
    std::sort(candidates.begin(), candidates.end(), ranks_before);
}

// Smallest prefix of the sorted candidates whose probability mass reaches p (at least one).
void keep_top_p(std::vector<Candidate>& sorted, float p, std::vector<double>& weights) {
    relative_weights(sorted, 1.0, weights);
    double total = 0.0;
    for (double w : weights) total += w;
    const double target = static_cast<double>(p) * total;
    double cumulative = 0.0;
    for (size_t i = 0; i < sorted.size(); ++i) {
        cumulative += weights[i];
        if (cumulative >= target) {
            sorted.resize(i + 1);
            return;
        }
    }
}

// Drops candidates whose probability is below min_p times the best one's, i.e. whose logit is
// below best + log(min_p). The best always survives.
void keep_min_p(std::vector<Candidate>& sorted, float min_p) {
    const float threshold = sorted.front().first + std::log(min_p);
    size_t keep = 1;
    while (keep < sorted.size() && sorted[keep].first >= threshold) ++keep;
    sorted.resize(keep);
}

}  // namespace

Sampler::Sampler(SamplingParams params) : params_(params), rng_(params.seed) {}

void Sampler::accept(TokenId token) {
    history_.push_back(token);
    // Only the last penalty_last_n tokens matter; trim in batches to keep accept() O(1) amortised.
    const int32_t window = params_.penalty_last_n;
    if (window >= 0 && history_.size() > 2 * static_cast<size_t>(window) + 256)
        history_.erase(history_.begin(), history_.end() - window);
}

void Sampler::reset() {
    history_.clear();
    rng_.seed(params_.seed);
}

TokenId Sampler::prepare(std::span<const float> logits) {
    const size_t n_vocab = logits.size();

    // candidates_[id] starts as (logit, id) so the penalties can index by token id. NaN and -inf
    // logits can never be drawn; mapping NaN to -inf keeps comparisons well defined.
    candidates_.resize(n_vocab);
    for (size_t i = 0; i < n_vocab; ++i) {
        const float logit = std::isnan(logits[i]) ? -std::numeric_limits<float>::infinity() : logits[i];
        candidates_[i] = {logit, static_cast<TokenId>(i)};
    }

    apply_penalties();
    return filter_candidates();
}

TokenId Sampler::filter_candidates() {
    // Temperature 0 (or below) is greedy: the best logit after penalties, lowest id on ties.
    // All -inf also lands here: id 0 is as good as any and always in range.
    if (!(params_.temperature > 0.0f)) {
        return std::min_element(candidates_.begin(), candidates_.end(), ranks_before)->second;
    }

    // -inf candidates are impossible; drop them unless nothing else is left.
    const auto finite_end = std::partition(candidates_.begin(), candidates_.end(),
                                           [](const Candidate& c) { return c.first > -std::numeric_limits<float>::infinity(); });
    if (finite_end == candidates_.begin()) return 0;
    candidates_.erase(finite_end, candidates_.end());

    const size_t k = params_.top_k > 0 ? static_cast<size_t>(params_.top_k) : candidates_.size();
    keep_top_k(candidates_, k);
    if (params_.top_p < 1.0f) keep_top_p(candidates_, std::max(params_.top_p, 0.0f), weights_);
    if (params_.min_p > 0.0f) keep_min_p(candidates_, std::min(params_.min_p, 1.0f));

    // Temperature scales the surviving logits.
    relative_weights(candidates_, params_.temperature, weights_);
    return -1;
}

TokenId Sampler::sample(std::span<const float> logits) {
    if (logits.empty()) return -1;  // no valid id exists; callers always pass n_vocab > 0
    if (const TokenId chosen = prepare(logits); chosen >= 0) return chosen;
    return draw();
}

int32_t Sampler::top_logits_needed(int32_t n_vocab) const {
    const bool penalties = (params_.repeat_penalty != 1.0f || params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f) &&
                           params_.penalty_last_n != 0;
    if (penalties || n_vocab <= 0) return 0;   // they may lift any token into the best
    if (!(params_.temperature > 0.0f)) return 1;
    if (params_.top_k <= 0 || params_.top_k > kMaxTopLogits) return 0;
    return std::min(params_.top_k, n_vocab);
}

// The best k logits are the candidates prepare() would keep before its top-p and min-p: the
// same finite ones (the k best of the row are finite whenever k finite exist), sorted alike.
TokenId Sampler::sample_top(std::span<const TopLogit> top) {
    if (top.empty()) return -1;
    candidates_.resize(top.size());
    for (size_t i = 0; i < top.size(); ++i) candidates_[i] = {top[i].logit, top[i].token};
    if (const TokenId chosen = filter_candidates(); chosen >= 0) return chosen;
    return draw();
}

TokenId Sampler::draw() {
    // Draw by inverse CDF over the weights.
    double total = 0.0;
    for (double w : weights_) total += w;
    const double target = uniform_unit(rng_) * total;
    double cumulative = 0.0;
    for (size_t i = 0; i < candidates_.size(); ++i) {
        cumulative += weights_[i];
        if (target < cumulative) return candidates_[i].second;
    }
    return candidates_.back().second;  // rounding left target at the very top
}

void Sampler::distribution(std::span<const float> logits, std::vector<TokenProbability>& out) {
    out.clear();
    if (logits.empty()) return;
    if (const TokenId chosen = prepare(logits); chosen >= 0) {
        out.push_back({chosen, 1.0});
        return;
    }
    double total = 0.0;
    for (double w : weights_) total += w;
    out.reserve(candidates_.size());
    for (size_t i = 0; i < candidates_.size(); ++i) out.push_back({candidates_[i].second, weights_[i] / total});
}

double Sampler::draw_unit() { return uniform_unit(rng_); }

void Sampler::apply_penalties() {
    const bool active = params_.repeat_penalty != 1.0f || params_.frequency_penalty != 0.0f ||
                        params_.presence_penalty != 0.0f;
    if (!active || params_.penalty_last_n == 0 || history_.empty()) return;

    // Count each token in the window once (sorted copy, then runs), as llama.cpp does.
    const size_t window = params_.penalty_last_n < 0 ? history_.size()
                                                     : std::min(history_.size(), static_cast<size_t>(params_.penalty_last_n));
    window_.assign(history_.end() - static_cast<std::ptrdiff_t>(window), history_.end());
    std::sort(window_.begin(), window_.end());
    for (size_t i = 0; i < window_.size();) {
        size_t j = i;
        while (j < window_.size() && window_[j] == window_[i]) ++j;
        const TokenId token = window_[i];
        const float count = static_cast<float>(j - i);
        i = j;
        if (token < 0 || static_cast<size_t>(token) >= candidates_.size()) continue;  // foreign id: ignore

        float& logit = candidates_[static_cast<size_t>(token)].first;
        // Repetition: push the logit towards "less likely" whatever its sign. A penalty <= 0 is
        // meaningless (dividing by it would make the token certain), so it counts as off.
        if (params_.repeat_penalty > 0.0f)
            logit = logit > 0.0f ? logit / params_.repeat_penalty : logit * params_.repeat_penalty;
        logit -= count * params_.frequency_penalty + params_.presence_penalty;
    }
}

}  // namespace workbench
