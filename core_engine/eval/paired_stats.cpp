// Intervals and paired tests for accuracies over seeded prompts.
#include "workbench/paired_stats.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>

namespace workbench {

double normal_quantile(double p) {
    if (!(p > 0 && p < 1)) return p >= 1 ? HUGE_VAL : -HUGE_VAL;   // Boost would throw outside (0, 1)
    return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

Interval wilson_interval(int64_t k, int64_t n, double alpha) {
    if (n <= 0) return {0, 1};
    k = std::clamp<int64_t>(k, 0, n);
    const double z = normal_quantile(1 - alpha / 2), nn = static_cast<double>(n), p = static_cast<double>(k) / nn;
    const double denom = 1 + z * z / nn;
    const double center = (p + z * z / (2 * nn)) / denom;
    const double half = z / denom * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn));
    // The ends are exact at k = 0 and k = n (rounding would leave them a hair inside).
    return {k == 0 ? 0.0 : std::max(0.0, center - half), k == n ? 1.0 : std::min(1.0, center + half)};
}

double mcnemar_exact_p(int64_t a_only, int64_t b_only) {
    if (a_only < 0 || b_only < 0 || a_only + b_only == 0) return 1.0;
    const boost::math::binomial_distribution<double> discordant(static_cast<double>(a_only + b_only), 0.5);
    return std::min(1.0, 2 * boost::math::cdf(discordant, static_cast<double>(std::min(a_only, b_only))));
}

PairedCounts paired_counts(std::span<const uint8_t> a, std::span<const uint8_t> b) {
    PairedCounts c;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        if (a[i] && b[i]) ++c.both;
        else if (a[i]) ++c.a_only;
        else if (b[i]) ++c.b_only;
        else ++c.neither;
    }
    return c;
}

Interval paired_bootstrap_difference(std::span<const uint8_t> a, std::span<const uint8_t> b, int32_t resamples, uint64_t seed,
                                     double alpha) {
    const size_t n = std::min(a.size(), b.size());
    if (n == 0 || resamples < 1) return {0, 0};
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<size_t> pick(0, n - 1);
    std::vector<double> diffs(static_cast<size_t>(resamples));
    for (double& d : diffs) {
        int64_t sum = 0;
        for (size_t i = 0; i < n; ++i) {
            const size_t j = pick(rng);
            sum += static_cast<int64_t>(a[j] != 0) - static_cast<int64_t>(b[j] != 0);
        }
        d = static_cast<double>(sum) / static_cast<double>(n);
    }
    std::sort(diffs.begin(), diffs.end());
    const auto at = [&](double q) {
        const size_t i = static_cast<size_t>(std::clamp(q * static_cast<double>(resamples - 1), 0.0, static_cast<double>(resamples - 1)) + 0.5);
        return diffs[std::min(i, diffs.size() - 1)];
    };
    return {at(alpha / 2), at(1 - alpha / 2)};
}

double smallest_resolvable_difference(int64_t n, double alpha) {
    for (int64_t m = 1; m <= n; ++m)
        if (mcnemar_exact_p(m, 0) < alpha) return static_cast<double>(m) / static_cast<double>(n);
    return 1.0;
}

}  // namespace workbench
