// How far to trust an accuracy and a difference between two configurations that answered the
// same seeded prompts: a Wilson score interval for one row's proportion, McNemar's exact test and
// a paired bootstrap interval for the difference of two rows over the same prompts, and the
// smallest difference n paired prompts can resolve at all. Pure functions, no state; the
// distributions are Boost.Math's.
#pragma once

#include <cstdint>
#include <span>

namespace workbench {

struct Interval {
    double low = 0, high = 0;
};

// Wilson's score interval for k successes in n trials at two-sided confidence 1 − alpha
// (z from the normal quantile); {0, 1} for n = 0. k is clamped to [0, n].
Interval wilson_interval(int64_t k, int64_t n, double alpha = 0.05);

// The standard normal quantile Φ⁻¹(p) (Boost.Math); ∓infinity at p ≤ 0 and p ≥ 1.
double normal_quantile(double p);

// McNemar's exact two-sided test on paired outcomes: `a_only` prompts only the first row got
// right, `b_only` only the second. p = min(1, 2 · P[X ≤ min(a_only, b_only)]) for X ~ Bin(a_only +
// b_only, 1/2); 1 when no prompt is discordant (or a count is negative).
double mcnemar_exact_p(int64_t a_only, int64_t b_only);

// The counts behind it from two rows' per-prompt outcomes (the same prompts in the same order;
// the shorter length is used).
struct PairedCounts {
    int64_t both = 0, a_only = 0, b_only = 0, neither = 0;
};
PairedCounts paired_counts(std::span<const uint8_t> a, std::span<const uint8_t> b);

// A percentile bootstrap interval of mean(a) − mean(b) over the same prompts: `resamples`
// resamplings of the prompt indices with replacement, seeded, so a rerun gives the same interval.
// {0, 0} for no prompts.
Interval paired_bootstrap_difference(std::span<const uint8_t> a, std::span<const uint8_t> b, int32_t resamples = 2000,
                                     uint64_t seed = 1, double alpha = 0.05);

// The smallest accuracy difference that n paired prompts can show at level alpha under
// McNemar's exact test: m / n, m the fewest discordant prompts, all one way, with p < alpha
// (m = 6 at 0.05). 1 when even n discordant prompts cannot (n < m).
double smallest_resolvable_difference(int64_t n, double alpha = 0.05);

}  // namespace workbench
