// The Pareto front of a trade-off: the points that nothing beats on both cost (smaller) and
// quality (better) at once. The variants map draws it (sweep --plot, the GUI's Variants map).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace workbench {

// Indices of the Pareto-optimal points, in ascending cost; points with cost ≤ 0 or a non-finite
// value are left out. Equal cost: the better quality wins.
std::vector<size_t> pareto_front(std::span<const double> cost, std::span<const double> quality, bool higher_is_better);

}  // namespace workbench
