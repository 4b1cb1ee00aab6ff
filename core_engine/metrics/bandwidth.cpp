// Read-bandwidth probe for the decode roofline: threads sum disjoint slices of one buffer with
// wide loads, so the figure is what a weight-streaming GEMV could at best achieve. The buffer is
// on the same 2 MiB pages as the repacked weights, so the ceiling is not lowered by TLB misses
// the weights do not have.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/cpu/huge_page_arena.h"
#include "workbench/metrics.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace workbench {
namespace {

float sum_slice(const float* p, size_t n) {
#if defined(__AVX2__)
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    float out[8];
    _mm256_storeu_ps(out, s);
    float total = out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
    for (; i < n; ++i) total += p[i];
    return total;
#else
    float total = 0;
    for (size_t i = 0; i < n; ++i) total += p[i];
    return total;
#endif
}

}  // namespace

double measure_read_bandwidth_gb_s(uint64_t working_set_bytes, int n_threads, int max_passes, int budget_ms) {
    n_threads = std::max(1, n_threads);
    const size_t n_floats = std::max<size_t>(1 << 16, working_set_bytes / sizeof(float)) / 256 * 256;
    HugePageArena memory;
    float* buf = reinterpret_cast<float*>(memory.allocate(n_floats * sizeof(float)));
    if (!buf) return 0;
    for (size_t i = 0; i < n_floats; ++i) buf[i] = 1.0f;
    const size_t per = n_floats / static_cast<size_t>(n_threads) / 32 * 32;
    std::vector<float> sink(static_cast<size_t>(n_threads));
    double best = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(budget_ms);
    for (int pass = 0; pass < std::max(3, max_passes) && (pass < 3 || std::chrono::steady_clock::now() < deadline); ++pass) {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<std::thread> threads;
        for (int t = 1; t < n_threads; ++t)
            threads.emplace_back([&, t] { sink[t] += sum_slice(buf + per * t, per); });
        sink[0] += sum_slice(buf, per);
        for (auto& th : threads) th.join();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (pass > 0) best = std::max(best, static_cast<double>(per * n_threads * sizeof(float)) / s / 1e9);
    }
    volatile float keep = sink[0];
    (void)keep;
    return best;
}

}  // namespace workbench
