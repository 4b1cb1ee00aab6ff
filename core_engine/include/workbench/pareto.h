// The Pareto front of a trade-off: the points that nothing beats on both cost (smaller) and
// quality (better) at once. The variants map draws it (sweep --plot, the GUI's Variants map).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace workbench {

// Indices of the Pareto-optimal points, in ascending cost; points with cost ≤ 0 or a non-finite
// value are left out. Equal cost: the better quality wins.
std::vector<size_t> pareto_front(std::span<const double> cost, std::span<const double> quality, bool higher_is_better);

// Where a quality axis should stop so a broken configuration (ΔPPL in the thousands of %) does
// not flatten every other point: twice the spread from the best value to the 80th percentile
// (the 20th when higher is better). Empty when no value lies beyond it.
std::optional<double> quality_axis_cap(std::span<const double> quality, bool higher_is_better);

}  // namespace workbench
