// A few lines of test harness for the Qt-free CUDA checks: CHECK prints the failing condition
// with its place and counts it; finish() turns the count into the exit code; skip() exits 77
// with the reason (CTest's SKIP_RETURN_CODE); random inputs and a NaN-aware worst error.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace cudacheck {

inline int failures = 0;

// The larger of a running worst error and a new one, NaN winning: std::max would drop a NaN
// (every comparison with it is false) and let a broken kernel pass.
inline double worse(double worst, double err) { return std::isnan(worst) || err <= worst ? worst : err; }

[[noreturn]] inline void skip(const std::string& reason) {
    std::printf("skipped: %s\n", reason.c_str());
    std::exit(77);
}

// n normal floats of standard deviation `scale`, the same for the same seed.
inline std::vector<float> random_floats(size_t n, float scale, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& f : v) f = dist(rng);
    return v;
}

// The largest |got − expected| (NaN-aware) and the largest |expected|, for bounds relative to
// the output's size.
struct Difference {
    double worst = 0, largest = 0;
};
inline Difference difference(const std::vector<float>& got, const std::vector<float>& expected) {
    Difference d;
    for (size_t i = 0; i < expected.size(); ++i) {
        d.worst = worse(d.worst, std::fabs(static_cast<double>(got[i]) - expected[i]));
        d.largest = std::fabs(static_cast<double>(expected[i])) > d.largest ? std::fabs(static_cast<double>(expected[i])) : d.largest;
    }
    return d;
}

inline int finish() {
    if (failures) std::printf("%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}

}  // namespace cudacheck

#define CHECK(cond, what)                                                                         \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            std::printf("%s:%d: CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond, std::string(what).c_str()); \
            ++cudacheck::failures;                                                                \
        }                                                                                         \
    } while (0)
