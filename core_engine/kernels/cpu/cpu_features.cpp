// cpuid-based feature detection, with the XCR0 check that the OS saves the registers.
#include "kernels/cpu/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace workbench {
namespace {

CpuFeatures detect() {
    CpuFeatures f;
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const bool osxsave = c & (1u << 27);
    f.fma = c & (1u << 12);
    f.f16c = c & (1u << 29);
    unsigned long long xcr0 = 0;
    if (osxsave) {
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
    }
    const bool ymm_ok = (xcr0 & 0x6) == 0x6;
    const bool zmm_ok = (xcr0 & 0xE6) == 0xE6;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f.avx2 = ymm_ok && (b & (1u << 5));
        f.avx512f = zmm_ok && (b & (1u << 16));
        f.avx512bw = zmm_ok && (b & (1u << 30));
        f.avx512vl = zmm_ok && (b & (1u << 31));
        f.avx512_vnni = zmm_ok && (c & (1u << 11));
    }
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx_vnni = ymm_ok && (a & (1u << 4));
    f.fma = f.fma && ymm_ok;
    f.f16c = f.f16c && ymm_ok;
#endif
    return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = detect();
    return features;
}

namespace {
bool cpu_path_is(const char* name) {
    const char* path = std::getenv("WORKBENCH_CPU_PATH");
    return path && std::strcmp(path, name) == 0;
}
}  // namespace

bool cpu_allow_avx512() {
    static const bool allow = cpu_path_is("avx512") && cpu_features().has_avx512_vnni_path();
    return allow;
}

GroupKernels cpu_group_kernels() {
    static const GroupKernels kernels = [] {
        const CpuFeatures& f = cpu_features();
        if (cpu_path_is("avx2")) return GroupKernels::avx2;
        if (f.has_avx512_vnni_path()) return GroupKernels::avx512_vnni;
        if (f.avx_vnni) return GroupKernels::avx_vnni;
        return GroupKernels::avx2;
    }();
    return kernels;
}

const char* group_kernels_name(GroupKernels kernels) {
    switch (kernels) {
        case GroupKernels::avx_vnni: return "avx-vnni";
        case GroupKernels::avx512_vnni: return "avx512-vnni";
        default: return "avx2";
    }
}

std::string CpuFeatures::describe() const {
    std::string s;
    auto add = [&](bool on, const char* name) {
        if (!on) return;
        if (!s.empty()) s += ' ';
        s += name;
    };
    add(avx2, "AVX2");
    add(fma, "FMA");
    add(f16c, "F16C");
    add(avx512f, "AVX512F");
    add(avx512bw, "AVX512BW");
    add(avx512vl, "AVX512VL");
    add(avx512_vnni, "AVX512_VNNI");
    add(avx_vnni, "AVX_VNNI");
    return s.empty() ? "none" : s;
}

}  // namespace workbench
