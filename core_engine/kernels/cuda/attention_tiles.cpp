#include "kernels/cuda/attention_tiles.h"

#include <algorithm>

#include "kernels/cuda/kv_attention.h"

namespace workbench::cuda {
namespace {

// Keys the lists first..first + n · stride (every stride-th) all read first, in order.
int32_t shared_prefix(const AttendPlan& plan, int64_t first, int64_t n, int64_t stride) {
    const std::span<const KvSpan> lead = plan.list(first);
    int32_t keys = 0;
    for (size_t si = 0; si < lead.size(); ++si) {
        const KvSpan& s0 = lead[si];
        int32_t end = s0.end;
        for (int64_t a = 1; a < n; ++a) {
            const std::span<const KvSpan> other = plan.list(first + a * stride);
            if (si >= other.size() || other[si].stream != s0.stream || other[si].begin != s0.begin) return keys;
            end = std::min(end, other[si].end);
        }
        keys += end - s0.begin;
        for (int64_t a = 0; a < n; ++a)
            if (plan.list(first + a * stride)[si].end != end) return keys;   // a list goes on past `end`: the rest differs
    }
    return keys;
}

// Most keys a row of a tile may read past the shared ones: the tiled kernel reads them with one
// warp and no splits, where the split-key kernel spreads a long list over many (a decode row of
// a long context batched with a prompt).
constexpr int64_t kMaxTailKeys = 1024;

int64_t list_keys(const AttendPlan& plan, int64_t list) {
    int64_t keys = 0;
    for (const KvSpan& sp : plan.list(list)) keys += sp.end - sp.begin;
    return keys;
}

}  // namespace

bool tile_shared_keys(const AttendPlan& plan, int64_t n_rows, int32_t n_kv_heads, std::vector<int32_t>& out) {
    const int64_t heads = plan.per_kv_head ? n_kv_heads : 1;
    const int64_t n_tiles = (n_rows + kAttendTileRows - 1) / kAttendTileRows;
    const size_t start = out.size();
    int64_t saved = 0, total = 0;   // key reads the tiles save (all but one row's), all key reads
    for (const KvSpan& sp : plan.spans) total += sp.end - sp.begin;
    for (int64_t tile = 0; tile < n_tiles; ++tile) {
        const int64_t r0 = tile * kAttendTileRows, rows = std::min<int64_t>(kAttendTileRows, n_rows - r0);
        for (int64_t h = 0; h < heads; ++h) {
            const int32_t keys = shared_prefix(plan, r0 * heads + h, rows, heads);
            for (int64_t a = 0; a < rows; ++a)
                if (list_keys(plan, (r0 + a) * heads + h) - keys > kMaxTailKeys) {
                    out.resize(start);
                    return false;
                }
            out.push_back(keys);
            saved += keys * (rows - 1);
        }
    }
    if (2 * saved >= total && total > 0) return true;
    out.resize(start);
    return false;
}

}  // namespace workbench::cuda
