// One block a row, k rounds: each round every thread finds the best of its strided share that
// ranks after the last round's choice, and the block reduces those to the next choice. The row
// stays in L2 between rounds (the head just wrote it); greedy is a single pass. k is small
// (at most kMaxTopLogits), so the rounds cost less than a radix select's bookkeeping would.
#include "kernels/cuda/top_logits.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/cuda/cuda_status.h"

namespace workbench::cuda {
namespace {

constexpr int kThreads = 1024, kWarps = kThreads / 32;

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

__global__ void __launch_bounds__(kThreads) top_logits_kernel(const float* __restrict__ logits, int64_t n_vocab, int32_t k,
                                                               TopLogit* __restrict__ out) {
    const float* row = logits + static_cast<int64_t>(blockIdx.x) * n_vocab;
    TopLogit* row_out = out + static_cast<int64_t>(blockIdx.x) * k;
    // Plain arrays: a __shared__ variable of a type with member initializers is not allowed.
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
            const float x = row[i];
            TopLogit c;
            c.logit = isnan(x) ? -INFINITY : x;
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

}  // namespace

Status top_logits(const float* logits, int64_t n_rows, int64_t n_vocab, int32_t k, TopLogit* out, cudaStream_t stream) {
    if (n_rows <= 0) return Status::ok_status();
    if (k < 1 || k > kMaxTopLogits || k > n_vocab || n_vocab > INT32_MAX)
        return error(StatusCode::internal, "cuda: top logits asked for " + std::to_string(k) + " of " + std::to_string(n_vocab));
    top_logits_kernel<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(logits, n_vocab, k, out);
    return check_launch("top-logits launch");
}

}  // namespace workbench::cuda
