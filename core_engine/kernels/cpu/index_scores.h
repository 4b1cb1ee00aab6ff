// The indexers' scores (top-k block selection, heavy hitters): what a query group's rows say of a
// candidate before the attention kernel reads it. Eight lanes (AVX2, F16C); a candidate's score
// depends only on its own inputs, never on which other candidates are scored beside it.
#pragma once

#include <cstdint>

namespace workbench {

// Quest's bound on the group's q·k over a block of keys: Σ over rows r and dimensions d of
// max(q[r][d]·lo[d], q[r][d]·hi[d]), with lo and hi the block's elementwise key range (f16 bits,
// `range` = lo then hi, head_dim each). q: n_rows × head_dim f32.
float quest_bound(const float* q, int64_t n_rows, const uint16_t* range, int64_t head_dim);

// Asks for the cache lines of `bytes` bytes from `row` on: an indexer's candidates lie scattered
// over blocks, so it fetches a few ahead of the one it scores.
inline void prefetch_row(const void* row, int64_t bytes) {
    for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(static_cast<const char*>(row) + b);
}

// Σ over rows r of q[r]·k for one key row: k in f16 bits, or f32.
float group_dot_f16(const float* q, int64_t n_rows, const uint16_t* k, int64_t head_dim);
float group_dot_f32(const float* q, int64_t n_rows, const float* k, int64_t head_dim);

}  // namespace workbench
