// The host's selection of a row's best logits (the CPU backend's, and the reference a device
// backend's is checked against).
#include "sampling/top_logits.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace workbench {
namespace {

bool ranks_before(const TopLogit& a, const TopLogit& b) { return a.logit > b.logit || (a.logit == b.logit && a.token < b.token); }

TopLogit at(const float* row, size_t i) {
    return {std::isnan(row[i]) ? -std::numeric_limits<float>::infinity() : row[i], static_cast<TokenId>(i)};
}

}  // namespace

void select_top_logits(const float* row, size_t n, TopLogit* out, size_t k) {
    if (k == 0 || n == 0) return;
    if (k == 1) {   // greedy: one pass
        TopLogit best = at(row, 0);
        for (size_t i = 1; i < n; ++i)
            if (const TopLogit c = at(row, i); ranks_before(c, best)) best = c;
        out[0] = best;
        return;
    }
    // A bounded heap of the best so far (its worst on top): one pass, k entries held.
    std::vector<TopLogit> heap;
    heap.reserve(k);
    for (size_t i = 0; i < n; ++i) {
        const TopLogit c = at(row, i);
        if (heap.size() < k) {
            heap.push_back(c);
            std::push_heap(heap.begin(), heap.end(), ranks_before);
        } else if (ranks_before(c, heap.front())) {
            std::pop_heap(heap.begin(), heap.end(), ranks_before);
            heap.back() = c;
            std::push_heap(heap.begin(), heap.end(), ranks_before);
        }
    }
    std::sort(heap.begin(), heap.end(), ranks_before);
    std::copy(heap.begin(), heap.end(), out);
}

}  // namespace workbench
