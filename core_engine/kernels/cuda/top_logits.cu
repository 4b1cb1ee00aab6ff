// One block a row, two ways to its best k.
// A shortlist (k > 1): every thread's largest logit is an entry of its own, so at least k
// entries are at least the k-th largest of those maxima, and the best k all are. A second pass
// gathers the entries at or above that bar into shared memory, and each takes its place by
// counting the entries that rank before it: two passes over the row, whatever k is.
// Rounds (greedy, or when ties at the bar overflow the shortlist): each round every thread finds
// the best of its strided share that ranks after the last choice, and the block reduces those to
// the next choice; the row stays in L2 between rounds (the head just wrote it).
#include "kernels/cuda/top_logits.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/cuda/cuda_status.h"

namespace workbench::cuda {
namespace {

constexpr int kThreads = 1024, kWarps = kThreads / 32, kShortlist = 2048;

__device__ bool ranks_before(const TopLogit& a, const TopLogit& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.token < b.token);
}

__device__ TopLogit warp_best(TopLogit best) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        TopLogit other;
        other.logit = __shfl_down_sync(0xffffffffu, best.logit, offset);
        other.token = __shfl_down_sync(0xffffffffu, best.token, offset);
        if (ranks_before(other, best)) best = other;
    }
    return best;
}

__device__ float logit_at(const float* row, int64_t i) {
    const float x = row[i];
    return isnan(x) ? -INFINITY : x;
}

// Plain arrays in shared memory: a __shared__ variable of a type with member initializers is not allowed.
__device__ void select_by_rounds(const float* __restrict__ row, int64_t n_vocab, int32_t k, TopLogit* __restrict__ row_out) {
    __shared__ float warp_logit[kWarps];
    __shared__ int32_t warp_token[kWarps];
    __shared__ float chosen_logit;
    __shared__ int32_t chosen_token;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    // Ranks before every entry (+inf included, by its id), so the first round admits them all;
    // `none` ranks after every entry (-inf included), so any entry replaces it.
    TopLogit last;
    last.logit = INFINITY;
    last.token = -1;
    TopLogit none;
    none.logit = -INFINITY;
    none.token = INT32_MAX;
    for (int32_t round = 0; round < k; ++round) {
        TopLogit best = none;
        for (int64_t i = threadIdx.x; i < n_vocab; i += kThreads) {
            TopLogit c;
            c.logit = logit_at(row, i);
            c.token = static_cast<int32_t>(i);
            if (ranks_before(last, c) && ranks_before(c, best)) best = c;
        }
        best = warp_best(best);
        if (lane == 0) warp_logit[warp] = best.logit, warp_token[warp] = best.token;
        __syncthreads();
        if (warp == 0) {
            TopLogit w = none;
            if (lane < kWarps) w.logit = warp_logit[lane], w.token = warp_token[lane];
            best = warp_best(w);
            if (lane == 0) {
                chosen_logit = best.logit;
                chosen_token = best.token;
                row_out[round] = best;
            }
        }
        __syncthreads();   // the choice is read below; the next round writes the warps' only after this
        last.logit = chosen_logit;
        last.token = chosen_token;
    }
}

__device__ float warp_min(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v = fminf(v, __shfl_down_sync(0xffffffffu, v, offset));
    return v;
}

// False (the same for every thread) when more entries reach the bar than the shortlist holds.
__device__ bool select_by_shortlist(const float* __restrict__ row, int64_t n_vocab, int32_t k, TopLogit* __restrict__ row_out) {
    static_assert(kWarps == 32, "one warp reduces the warps' minima");
    __shared__ float maxima[kThreads];
    __shared__ float warp_minima[kWarps];
    __shared__ float bar;
    __shared__ unsigned n_listed;
    __shared__ float listed_logit[kShortlist];
    __shared__ int32_t listed_token[kShortlist];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float mine = -INFINITY;   // a thread without entries counts as -inf, which bars nothing
    for (int64_t i = threadIdx.x; i < n_vocab; i += kThreads) mine = fmaxf(mine, logit_at(row, i));
    maxima[threadIdx.x] = mine;
    if (threadIdx.x == 0) n_listed = 0;
    __syncthreads();
    // The k-th largest maximum: the least of those with fewer than k above them (the largest
    // has none, so some thread offers one).
    int32_t above = 0;
    for (int j = 0; j < kThreads; ++j) above += maxima[j] > mine;
    const float offered = warp_min(above < k ? mine : INFINITY);
    if (lane == 0) warp_minima[warp] = offered;
    __syncthreads();
    if (warp == 0) {
        const float least = warp_min(warp_minima[lane]);
        if (lane == 0) bar = least;
    }
    __syncthreads();
    const float at_least = bar;
    for (int64_t i = threadIdx.x; i < n_vocab; i += kThreads) {
        const float x = logit_at(row, i);
        if (x < at_least) continue;
        const unsigned slot = atomicAdd(&n_listed, 1u);
        if (slot < kShortlist) listed_logit[slot] = x, listed_token[slot] = static_cast<int32_t>(i);
    }
    __syncthreads();
    const unsigned n = n_listed;
    if (n > static_cast<unsigned>(kShortlist)) return false;
    // Every entry that ranks before a listed one of the best k is listed too, so its place
    // among the listed is its place in the row; the others' is k or later.
    for (unsigned j = threadIdx.x; j < n; j += kThreads) {
        TopLogit c;
        c.logit = listed_logit[j];
        c.token = listed_token[j];
        int32_t place = 0;
        for (unsigned m = 0; m < n; ++m) {
            TopLogit other;
            other.logit = listed_logit[m];
            other.token = listed_token[m];
            place += ranks_before(other, c);
        }
        if (place < k) row_out[place] = c;
    }
    return true;
}

__global__ void __launch_bounds__(kThreads) top_logits_kernel(const float* __restrict__ logits, int64_t n_vocab, int32_t k,
                                                               TopLogit* __restrict__ out) {
    const float* row = logits + static_cast<int64_t>(blockIdx.x) * n_vocab;
    TopLogit* row_out = out + static_cast<int64_t>(blockIdx.x) * k;
    if (k > 1 && select_by_shortlist(row, n_vocab, k, row_out)) return;
    __syncthreads();   // the shortlist's shared memory is not the rounds', but keep the block together
    select_by_rounds(row, n_vocab, k, row_out);
}

}  // namespace

Status top_logits(const float* logits, int64_t n_rows, int64_t n_vocab, int32_t k, TopLogit* out, cudaStream_t stream) {
    if (n_rows <= 0) return Status::ok_status();
    if (k < 1 || k > kMaxTopLogits || k > n_vocab || n_vocab > INT32_MAX)
        return error(StatusCode::internal, "cuda: top logits asked for " + std::to_string(k) + " of " + std::to_string(n_vocab));
    top_logits_kernel<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(logits, n_vocab, k, out);
    return check_launch("top-logits launch");
}

}  // namespace workbench::cuda
