// The selection step topk and heavy share: per (query, KV head) pair, score its candidates and
// keep the `keep` best (ties go to the earlier one), scoring and selecting on the thread pool;
// then the kept ones go into the plan in position order, runs of neighbours as one span.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "kv_blocks/attend_plan.h"

namespace workbench {

// The kept candidates of every pair, in position order: pair i's are kept[offsets[i], offsets[i + 1]).
struct TopSelection {
    std::vector<float> scores;           // scratch: every pair's candidates, one after another
    std::vector<int64_t> score_offsets;  // pair i's scores start here
    std::vector<int64_t> chunk_offsets;  // pair i's first chunk of candidates (scratch)
    std::vector<int32_t> kept;
    std::vector<int64_t> offsets;
    std::span<const int32_t> of(int64_t pair) const {
        return {kept.data() + offsets[static_cast<size_t>(pair)], kept.data() + offsets[static_cast<size_t>(pair) + 1]};
    }
};

// Keeps `keep` of indices [0, score.size()) by score, in position order (`order` is scratch).
void keep_best(std::span<const float> score, int32_t keep, std::vector<int32_t>& order);

// Candidate c covers entries [c·unit, (c+1)·unit) of `stream`: adds each run of kept ones as a span.
void add_kept_spans(std::span<const int32_t> kept, int32_t unit, int32_t stream, AttendPlan& plan);

// n_cand(pair): the pair's candidates (≤ keep: all kept, none scored); score(pair, c): candidate c's
// score, or score(pair, c0, c1, out): candidates [c0, c1) into out (a scorer that works on groups;
// c0 is a multiple of 64). Scores in chunks of candidates across the pool (a decode step has few
// pairs and many candidates), then each pair's selection.
template <typename NCand, typename Score>
void select_top(int64_t n_pairs, int32_t keep, NCand n_cand, Score score, ThreadPool& pool, TopSelection& sel) {
    constexpr int64_t kChunk = 64;
    sel.score_offsets.assign(static_cast<size_t>(n_pairs) + 1, 0);
    std::vector<int64_t>& chunk_offsets = sel.chunk_offsets;
    chunk_offsets.assign(static_cast<size_t>(n_pairs) + 1, 0);
    for (int64_t p = 0; p < n_pairs; ++p) {
        const int64_t n = n_cand(p) > keep ? n_cand(p) : 0;
        sel.score_offsets[static_cast<size_t>(p) + 1] = sel.score_offsets[static_cast<size_t>(p)] + n;
        chunk_offsets[static_cast<size_t>(p) + 1] = chunk_offsets[static_cast<size_t>(p)] + (n + kChunk - 1) / kChunk;
    }
    sel.scores.resize(static_cast<size_t>(sel.score_offsets.back()));
    pool.run(chunk_offsets.back(), [&](int64_t chunk) {
        const int64_t p = std::upper_bound(chunk_offsets.begin(), chunk_offsets.end(), chunk) - chunk_offsets.begin() - 1;
        const int64_t c0 = (chunk - chunk_offsets[static_cast<size_t>(p)]) * kChunk;
        const int64_t n = sel.score_offsets[static_cast<size_t>(p) + 1] - sel.score_offsets[static_cast<size_t>(p)];
        float* out = sel.scores.data() + sel.score_offsets[static_cast<size_t>(p)];
        if constexpr (std::is_invocable_v<Score, int64_t, int32_t, int32_t, float*>)
            score(p, static_cast<int32_t>(c0), static_cast<int32_t>(std::min(n, c0 + kChunk)), out + c0);
        else
            for (int64_t c = c0; c < std::min(n, c0 + kChunk); ++c) out[c] = score(p, static_cast<int32_t>(c));
    });
    sel.offsets.assign(static_cast<size_t>(n_pairs) + 1, 0);
    for (int64_t p = 0; p < n_pairs; ++p) sel.offsets[static_cast<size_t>(p) + 1] = sel.offsets[static_cast<size_t>(p)] + std::min<int64_t>(n_cand(p), keep);
    sel.kept.resize(static_cast<size_t>(sel.offsets.back()));
    pool.parallel_for(n_pairs, [&](int64_t p0, int64_t p1) {
        thread_local std::vector<int32_t> order;
        for (int64_t p = p0; p < p1; ++p) {
            int32_t* kept = sel.kept.data() + sel.offsets[static_cast<size_t>(p)];
            const int64_t n = sel.score_offsets[static_cast<size_t>(p) + 1] - sel.score_offsets[static_cast<size_t>(p)];
            if (n == 0) {   // keep ≥ its candidates: all of them
                for (int32_t c = 0; c < n_cand(p); ++c) kept[c] = c;
                continue;
            }
            keep_best({sel.scores.data() + sel.score_offsets[static_cast<size_t>(p)], static_cast<size_t>(n)}, keep, order);
            std::copy(order.begin(), order.end(), kept);
        }
    });
}

}  // namespace workbench
