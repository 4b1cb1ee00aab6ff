// A sort by cost, then one pass keeping each point better than the last one kept.
#include "workbench/pareto.h"

#include <algorithm>
#include <cmath>

namespace workbench {

std::vector<size_t> pareto_front(std::span<const double> cost, std::span<const double> quality, bool higher_is_better) {
    std::vector<size_t> order;
    for (size_t i = 0; i < cost.size() && i < quality.size(); ++i)
        if (cost[i] > 0 && std::isfinite(cost[i]) && std::isfinite(quality[i])) order.push_back(i);
    auto better = [&](double a, double b) { return higher_is_better ? a > b : a < b; };
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (cost[a] != cost[b]) return cost[a] < cost[b];
        return better(quality[a], quality[b]);
    });
    std::vector<size_t> front;
    for (size_t i : order)
        if (front.empty() || better(quality[i], quality[front.back()])) front.push_back(i);
    return front;
}

std::optional<double> quality_axis_cap(std::span<const double> quality, bool higher_is_better) {
    std::vector<double> v;
    for (double q : quality)
        if (std::isfinite(q)) v.push_back(q);
    if (v.size() < 3) return std::nullopt;
    std::sort(v.begin(), v.end());
    if (higher_is_better) {
        const double best = v.back(), p20 = v[v.size() * 2 / 10], cap = best - 2 * (best - p20);
        return best > p20 && v.front() < cap ? std::optional<double>(cap) : std::nullopt;
    }
    const double best = v.front(), p80 = v[v.size() * 8 / 10], cap = best + 2 * (p80 - best);
    return p80 > best && v.back() > cap ? std::optional<double>(cap) : std::nullopt;
}

}  // namespace workbench
