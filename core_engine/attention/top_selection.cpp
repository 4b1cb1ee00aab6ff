#include "attention/top_selection.h"

#include <algorithm>
#include <numeric>

namespace workbench {

void add_top_spans(std::span<const float> score, int32_t keep, int32_t unit, int32_t stream, std::vector<int32_t>& order,
                   AttendPlan& plan) {
    order.resize(score.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + keep, order.end(), [&](int32_t a, int32_t b) {
        return score[static_cast<size_t>(a)] > score[static_cast<size_t>(b)] ||
               (score[static_cast<size_t>(a)] == score[static_cast<size_t>(b)] && a < b);
    });
    order.resize(static_cast<size_t>(keep));
    std::sort(order.begin(), order.end());
    for (size_t j = 0; j < order.size();) {
        size_t e = j + 1;
        while (e < order.size() && order[e] == order[e - 1] + 1) ++e;
        plan.add({stream, order[j] * unit, (order[e - 1] + 1) * unit});
        j = e;
    }
}

}  // namespace workbench
