// One block of 256 threads per row: strided squares summed in double, reduced across the warp by
// shuffles and across warps through shared memory, then the row scaled in place of the reads.
#include "kernels/cuda/rms_norm.h"

#include "kernels/cuda/cuda_status.h"

namespace workbench::cuda {
namespace {

constexpr int kThreads = 256;

__device__ double block_sum(double v) {
    __shared__ double warp_sums[kThreads / 32];
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < kThreads / 32 ? warp_sums[lane] : 0.0;
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (lane == 0) warp_sums[0] = v;
    }
    __syncthreads();
    return warp_sums[0];
}

__global__ void rms_norm_rows(const float* x, const float* __restrict__ weight, float* out, int64_t n, float eps) {
    const float* xr = x + blockIdx.x * n;
    float* o = out + blockIdx.x * n;
    double sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) sum += static_cast<double>(xr[i]) * xr[i];
    sum = block_sum(sum);
    const float scale = 1.0f / sqrtf(static_cast<float>(sum / static_cast<double>(n)) + eps);
    for (int64_t i = threadIdx.x; i < n; i += kThreads) o[i] = xr[i] * scale * weight[i];
}

// The residual add fused in: each thread adds and writes back the elements it then squares, and
// later scales those same elements, so no other thread's write is read.
__global__ void add_rms_norm_rows(float* x, const float* __restrict__ y, const float* __restrict__ weight, float* __restrict__ out,
                                  int64_t n, float eps) {
    float* xr = x + blockIdx.x * n;
    const float* yr = y + blockIdx.x * n;
    float* o = out + blockIdx.x * n;
    double sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) {
        const float v = xr[i] + yr[i];
        xr[i] = v;
        sum += static_cast<double>(v) * v;
    }
    sum = block_sum(sum);
    const float scale = 1.0f / sqrtf(static_cast<float>(sum / static_cast<double>(n)) + eps);
    for (int64_t i = threadIdx.x; i < n; i += kThreads) o[i] = xr[i] * scale * weight[i];
}

}  // namespace

Status add_rms_norm(float* x, const float* y, const float* weight, float* out, int64_t n_rows, int64_t n, float eps, cudaStream_t stream) {
    if (n_rows <= 0) return Status::ok_status();
    add_rms_norm_rows<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(x, y, weight, out, n, eps);
    return check_launch("add + rms_norm launch");
}

Status rms_norm(const float* x, const float* weight, float* out, int64_t n_rows, int64_t n, float eps, cudaStream_t stream) {
    if (n_rows <= 0) return Status::ok_status();
    rms_norm_rows<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(x, weight, out, n, eps);
    return check_launch("rms_norm launch");
}

}  // namespace workbench::cuda
