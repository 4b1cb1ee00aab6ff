#include "attention/top_selection.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>

namespace workbench {

namespace {

// Orders as the floats do (−0 and +0 as one), as unsigned integers.
uint32_t order_key(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    if (b == 0x80000000u) b = 0;
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

}  // namespace

void keep_best(std::span<const float> score, int32_t keep, std::vector<int32_t>& order) {
    // The kept set under a strict order (higher score first, ties to the earlier candidate), so it
    // is the same however the selection runs. The keep-th best score is found by a histogram over
    // the scores' range (a monotone map, so a higher bin holds only higher scores), then exactly
    // among the few in its bin; one pass in position order then takes every score above it and
    // the earliest of those equal to it, without branches.
    order.clear();
    if (keep <= 0) return;
    constexpr int32_t kBins = 1024;
    thread_local std::vector<uint32_t> keys, members;
    thread_local std::vector<int32_t> bins;
    thread_local std::array<int32_t, kBins + 1> histogram;   // the last bin: +inf (a policy's always-kept)
    keys.resize(score.size());
    bins.resize(score.size());
    float lo = INFINITY, hi = -INFINITY;
    for (size_t c = 0; c < score.size(); ++c) {
        keys[c] = order_key(score[c]);
        if (std::isfinite(score[c])) lo = std::min(lo, score[c]), hi = std::max(hi, score[c]);
    }
    const float per_bin = hi > lo ? static_cast<float>(kBins - 1) / (hi - lo) : 0.0f;
    histogram.fill(0);
    for (size_t c = 0; c < score.size(); ++c) {
        const float x = score[c];
        // Not finite: by sign (+inf and NaN above every bin, −inf and −NaN below), as their keys order.
        bins[c] = std::isfinite(x) ? std::clamp(static_cast<int32_t>((x - lo) * per_bin), 0, kBins - 1) : keys[c] >= 0x80000000u ? kBins : 0;
        ++histogram[static_cast<size_t>(bins[c])];
    }
    int32_t above = 0, bin = kBins;
    while (above + histogram[static_cast<size_t>(bin)] < keep) above += histogram[static_cast<size_t>(bin--)];
    members.clear();
    for (size_t c = 0; c < score.size(); ++c)
        if (bins[c] == bin) members.push_back(keys[c]);
    std::nth_element(members.begin(), members.begin() + (keep - above - 1), members.end(), std::greater<uint32_t>());
    const uint32_t threshold = members[static_cast<size_t>(keep - above - 1)];
    for (uint32_t k : members) above += k > threshold;
    int32_t ties_left = keep - above;
    order.resize(static_cast<size_t>(keep) + 1);
    int32_t n = 0;
    for (size_t c = 0; c < keys.size(); ++c) {
        const bool tie = keys[c] == threshold;
        const bool take = (keys[c] > threshold) | (tie & (ties_left > 0));
        ties_left -= tie & take;
        order[static_cast<size_t>(n)] = static_cast<int32_t>(c);
        n += take;
    }
    order.resize(static_cast<size_t>(keep));
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
