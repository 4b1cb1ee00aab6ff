// The host's half of the prompt attention kernel (attention_tiles.cu): which keys the rows of each
// tile all read first, from a policy's plan — the same rule as the CPU kernel's shared prefix
// (same stream, same start, then the shortest end) — and whether tiling pays for the plan.
#pragma once

#include <cstdint>
#include <vector>

#include "kv_blocks/attend_plan.h"

namespace workbench::cuda {

// Appends to `out`, per tile of kAttendTileRows rows (per (tile, KV head) when the plan's lists
// are per head), the number of keys every row of the tile reads first in the same order, and
// returns true; or returns false with `out` as it was when staging would save under half of the
// plan's key reads (rows of separate sequences, decode rows) or a row would read over 1024 keys
// beyond its tile's shared ones: the split-key kernel, which spreads a row's keys over several
// warps, then does better.
bool tile_shared_keys(const AttendPlan& plan, int64_t n_rows, int32_t n_kv_heads, std::vector<int32_t>& out);

}  // namespace workbench::cuda
