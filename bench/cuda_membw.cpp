// workbench-cuda-membw: the device's copy bandwidth, the denominator of the CUDA decode roofline
// (a decode step reads every weight once: bytes read per token ÷ time over this). 1 GiB copied
// device to device ten times, timed with device events; a copy reads and writes each byte, so
// the rate counts both. Prints "device copy bandwidth: N GB/s"; exits 1 naming the reason when
// there is no device or a call fails.
#include <cuda_runtime_api.h>

#include <cstdio>

namespace {

bool ok(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return false;
}

}  // namespace

int main() {
    constexpr size_t kBytes = size_t{1} << 30;
    constexpr int kCopies = 10;
    void *a = nullptr, *b = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    float ms = 0.0f;
    const bool done = ok(cudaMalloc(&a, kBytes), "allocating 1 GiB") && ok(cudaMalloc(&b, kBytes), "allocating 1 GiB") &&
                      ok(cudaMemset(a, 1, kBytes), "filling") && ok(cudaMemcpy(b, a, kBytes, cudaMemcpyDeviceToDevice), "warm-up copy") &&
                      ok(cudaEventCreate(&start), "events") && ok(cudaEventCreate(&stop), "events") && ok(cudaEventRecord(start), "events") &&
                      [&] {
                          for (int i = 0; i < kCopies; ++i)
                              if (!ok(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, kBytes, cudaMemcpyDeviceToDevice), "copying")) return false;
                          return true;
                      }() &&
                      ok(cudaEventRecord(stop), "events") && ok(cudaEventSynchronize(stop), "copying") &&
                      ok(cudaEventElapsedTime(&ms, start, stop), "events");
    if (!done) return 1;
    std::printf("device copy bandwidth: %.0f GB/s\n", 2.0 * kBytes * kCopies / (ms / 1000.0) / 1e9);
    return 0;
}
