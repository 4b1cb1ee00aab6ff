// A few lines of test harness for the Qt-free CUDA checks: CHECK prints the failing condition
// with its place and counts it; finish() turns the count into the exit code; skip() exits 77
// with the reason (CTest's SKIP_RETURN_CODE).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace cudacheck {

inline int failures = 0;

[[noreturn]] inline void skip(const std::string& reason) {
    std::printf("skipped: %s\n", reason.c_str());
    std::exit(77);
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
