// The selection step topk and heavy share: keep the `keep` best-scoring candidates (ties go to
// the earlier one) and add them to the plan in position order, runs of neighbours as one span.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv_blocks/attend_plan.h"

namespace workbench {

// Candidate c covers entries [c·unit, (c+1)·unit) of `stream`. `order` is scratch space.
void add_top_spans(std::span<const float> score, int32_t keep, int32_t unit, int32_t stream, std::vector<int32_t>& order,
                   AttendPlan& plan);

}  // namespace workbench
