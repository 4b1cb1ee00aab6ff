// Compute ceilings for the roofline picture: tight register-only loops of the instructions the
// kernels in use run (kernels/cpu/cpu_features.h), on every thread at once. int8: maddubs + madd +
// add (AVX2: 32 multiply-adds per 3 instructions), or vpdpbusd (AVX-VNNI: 32 per instruction;
// AVX512-VNNI: 64); fp32: independent FMA chains, 8 or 16 lanes. Best of a few passes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <immintrin.h>

#include "kernels/cpu/cpu_features.h"
#include "workbench/metrics.h"

namespace workbench {
namespace {

using Clock = std::chrono::steady_clock;

// 12 independent chains of 8-lane FMAs: 192 flops per iteration.
__attribute__((target("avx2,fma"))) double fma_loop(int64_t iters) {
    __m256 a[12];
    for (int k = 0; k < 12; ++k) a[k] = _mm256_set1_ps(1.0f + 0.001f * static_cast<float>(k));
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    for (int64_t i = 0; i < iters; ++i)
        for (int k = 0; k < 12; ++k) a[k] = _mm256_fmadd_ps(a[k], m, c);
    __m256 s = a[0];
    for (int k = 1; k < 12; ++k) s = _mm256_add_ps(s, a[k]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}

// 8 independent int8 dot-product chains: 8 × 32 multiply-adds = 512 ops per iteration.
__attribute__((target("avx2"))) int int8_loop(int64_t iters) {
    const __m256i w = _mm256_set1_epi8(3), ones = _mm256_set1_epi16(1);
    __m256i x[8], acc[8];
    for (int k = 0; k < 8; ++k) x[k] = _mm256_set1_epi8(static_cast<char>(k + 1)), acc[k] = _mm256_setzero_si256();
    for (int64_t i = 0; i < iters; ++i)
        for (int k = 0; k < 8; ++k) acc[k] = _mm256_add_epi32(acc[k], _mm256_madd_epi16(_mm256_maddubs_epi16(w, x[k]), ones));
    __m256i s = acc[0];
    for (int k = 1; k < 8; ++k) s = _mm256_add_epi32(s, acc[k]);
    return _mm256_extract_epi32(s, 0);
}

// The same chains on the VNNI instruction the kernels use there; these run only where
// cpu_group_kernels() chose that set, i.e. where the CPU has it.
__attribute__((target("avxvnni"))) int int8_loop_avx_vnni(int64_t iters) {
    const __m256i w = _mm256_set1_epi8(3);
    __m256i x[8], acc[8];
    for (int k = 0; k < 8; ++k) x[k] = _mm256_set1_epi8(static_cast<char>(k + 1)), acc[k] = _mm256_setzero_si256();
    for (int64_t i = 0; i < iters; ++i)
        for (int k = 0; k < 8; ++k) acc[k] = _mm256_dpbusd_avx_epi32(acc[k], w, x[k]);
    __m256i s = acc[0];
    for (int k = 1; k < 8; ++k) s = _mm256_add_epi32(s, acc[k]);
    return _mm256_extract_epi32(s, 0);
}

__attribute__((target("avx512f,avx512vnni"))) int int8_loop_avx512(int64_t iters) {
    const __m512i w = _mm512_set1_epi8(3);
    __m512i x[8], acc[8];
    for (int k = 0; k < 8; ++k) x[k] = _mm512_set1_epi8(static_cast<char>(k + 1)), acc[k] = _mm512_setzero_si512();
    for (int64_t i = 0; i < iters; ++i)
        for (int k = 0; k < 8; ++k) acc[k] = _mm512_dpbusd_epi32(acc[k], w, x[k]);
    __m512i s = acc[0];
    for (int k = 1; k < 8; ++k) s = _mm512_add_epi32(s, acc[k]);
    int32_t out[16];
    _mm512_storeu_si512(out, s);
    return out[0];
}

__attribute__((target("avx512f"))) double fma_loop_avx512(int64_t iters) {
    __m512 a[12];
    for (int k = 0; k < 12; ++k) a[k] = _mm512_set1_ps(1.0f + 0.001f * static_cast<float>(k));
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    for (int64_t i = 0; i < iters; ++i)
        for (int k = 0; k < 12; ++k) a[k] = _mm512_fmadd_ps(a[k], m, c);
    __m512 s = a[0];
    for (int k = 1; k < 12; ++k) s = _mm512_add_ps(s, a[k]);
    float out[16];
    _mm512_storeu_ps(out, s);
    return out[0];
}

template <class Loop>
double peak(int n_threads, double ops_per_iter, Loop loop) {
    n_threads = std::max(1, n_threads);
    const int64_t iters = 2'000'000;
    double best = 0;
    std::atomic<int64_t> sink{0};
    for (int pass = 0; pass < 3; ++pass) {
        std::vector<std::thread> threads;
        const auto t0 = Clock::now();
        for (int t = 0; t < n_threads; ++t) threads.emplace_back([&] { sink += static_cast<int64_t>(loop(iters)); });
        for (auto& th : threads) th.join();
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        best = std::max(best, ops_per_iter * static_cast<double>(iters) * n_threads / s / 1e9);
    }
    return best;
}

}  // namespace

ComputePeaks measure_compute_peaks(int n_threads) {
    ComputePeaks p;
    switch (cpu_group_kernels()) {
        case GroupKernels::avx512_vnni:
            p.fp32_gflop_s = peak(n_threads, 384.0, fma_loop_avx512);
            p.int8_gop_s = peak(n_threads, 1024.0, int8_loop_avx512);
            break;
        case GroupKernels::avx_vnni:
            p.fp32_gflop_s = peak(n_threads, 192.0, fma_loop);
            p.int8_gop_s = peak(n_threads, 512.0, int8_loop_avx_vnni);
            break;
        default:
            p.fp32_gflop_s = peak(n_threads, 192.0, fma_loop);
            p.int8_gop_s = peak(n_threads, 512.0, int8_loop);
    }
    return p;
}

}  // namespace workbench
