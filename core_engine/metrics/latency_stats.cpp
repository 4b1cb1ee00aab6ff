// Latency percentiles as vLLM's benchmark reports them (numpy's linear interpolation), so our
// p50/p90/p99 read the same as theirs.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "workbench/metrics.h"

namespace workbench {

LatencyStats latency_stats(std::vector<double> values) {
    LatencyStats s;
    s.n = static_cast<int64_t>(values.size());
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    auto at = [&](double q) {
        const double pos = q * static_cast<double>(values.size() - 1);
        const size_t lo = static_cast<size_t>(std::floor(pos));
        const size_t hi = std::min(lo + 1, values.size() - 1);
        return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
    };
    s.p50 = at(0.50);
    s.p90 = at(0.90);
    s.p99 = at(0.99);
    return s;
}

MeanStddev mean_stddev(const std::vector<double>& values) {
    MeanStddev out;
    if (values.empty()) return out;
    const double n = static_cast<double>(values.size());
    out.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
    double var = 0;
    for (double v : values) var += (v - out.mean) * (v - out.mean);
    out.stddev = values.size() > 1 ? std::sqrt(var / (n - 1)) : 0;
    return out;
}

}  // namespace workbench
