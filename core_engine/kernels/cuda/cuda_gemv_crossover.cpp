// Where the GEMV stops paying. It reads the weights once per 8 tokens of a step, while the
// prompt path decodes the whole matrix to bf16 and runs cuBLASLt, whose cost barely grows with
// the step; where the two cross depends on the device and on the weights' format (a 4-bit matrix
// decoded to bf16 writes and reads 3.6 times its own bytes). So it is timed once, at load, on
// the model's MLP up matrix (its most common large shape) with device events, and the GEMV
// serves steps up to the last size at which it was not slower — batched decode moves to
// cuBLASLt once the batch pays. Without a measurement (no MLP, a failed timing) it stays at 16.
#include <cuda_runtime_api.h>

#include <atomic>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_backend_impl.h"
#include "kernels/cuda/matmul_kernels.h"

namespace workbench {
namespace {

std::atomic<int64_t> last_crossover{0};

}  // namespace

int64_t cuda_gemv_max_tokens() { return last_crossover.load(); }

void CudaBackend::measure_gemv_crossover() {
    if (layers_.empty() || layers_[0].ffn_up.data == nullptr) return;
    const DeviceMatrix& w = layers_[0].ffn_up;
    constexpr int64_t kSizes[] = {16, 24, 32, 48, 64, 96, 128};
    if (!ensure_capacity(128).ok()) return;
    cudaEvent_t start = nullptr, stop = nullptr;
    const bool events = cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess;
    // Milliseconds per run (3 runs after one that warms up and makes cuBLASLt's plan); < 0 when
    // anything failed.
    auto timed = [&](auto&& run) -> float {
        if (!run().ok() || cudaEventRecord(start, stream_) != cudaSuccess) return -1.0f;
        for (int i = 0; i < 3; ++i)
            if (!run().ok()) return -1.0f;
        float ms = 0.0f;
        if (cudaEventRecord(stop, stream_) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess ||
            cudaEventElapsedTime(&ms, start, stop) != cudaSuccess)
            return -1.0f;
        return ms / 3.0f;
    };
    if (events && cudaMemsetAsync(xn_.data(), 0, static_cast<size_t>(128 * w.n_in) * 4, stream_) == cudaSuccess) {
        int64_t crossover = 8;   // a GEMV step of 8 tokens reads the weights once: never slower
        for (const int64_t n : kSizes) {
            const float gemv = timed([&] { return cuda::gemv(w, xn_.as<float>(), up_.as<float>(), n, stream_); });
            const float lt = timed([&] { return matmul_lt(w, xn_.as<float>(), up_.as<float>(), n, nullptr); });
            if (gemv < 0 || lt < 0) {
                crossover = -1;   // no measurement: keep the default
                break;
            }
            if (gemv > lt) break;
            crossover = n;
        }
        if (crossover > 0) gemv_max_tokens_ = crossover;
    }
    if (start) (void)cudaEventDestroy(start);
    if (stop) (void)cudaEventDestroy(stop);
    (void)cudaStreamSynchronize(stream_);
    (void)cudaGetLastError();   // a failed timing is not the first step's error
    last_crossover.store(gemv_max_tokens_);
}

}  // namespace workbench
