#include "attention/top_selection.h"

#include <numeric>

namespace workbench {

void keep_best(std::span<const float> score, int32_t keep, std::vector<int32_t>& order) {
    order.resize(score.size());
    std::iota(order.begin(), order.end(), 0);
    // A strict order (ties go to the earlier candidate), so the kept set is the same however the
    // selection runs; nth_element finds it in linear time, then the kept ones go in position order.
    std::nth_element(order.begin(), order.begin() + keep, order.end(), [&](int32_t a, int32_t b) {
        return score[static_cast<size_t>(a)] > score[static_cast<size_t>(b)] ||
               (score[static_cast<size_t>(a)] == score[static_cast<size_t>(b)] && a < b);
    });
    order.resize(static_cast<size_t>(keep));
    std::sort(order.begin(), order.end());
}

void add_kept_spans(std::span<const int32_t> kept, int32_t unit, int32_t stream, AttendPlan& plan) {
    for (size_t j = 0; j < kept.size();) {
        size_t e = j + 1;
        while (e < kept.size() && kept[e] == kept[e - 1] + 1) ++e;
        plan.add({stream, kept[j] * unit, (kept[e - 1] + 1) * unit});
        j = e;
    }
}

}  // namespace workbench
