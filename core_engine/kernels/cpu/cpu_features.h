// What this CPU can run, detected once at run time (cpuid + OS support for the wide registers),
// so one binary picks the fastest kernel on every machine of its kind and never assumes.
#pragma once

#include <string>

namespace workbench {

struct CpuFeatures {
    bool avx2 = false, fma = false, f16c = false;
    bool avx512f = false, avx512bw = false, avx512vl = false, avx512_vnni = false;
    bool avx_vnni = false;

    bool has_avx512_vnni_path() const { return avx512f && avx512bw && avx512vl && avx512_vnni; }
    std::string describe() const;  // "AVX2 FMA F16C AVX512F ..."
};

const CpuFeatures& cpu_features();

// Whether matmuls use the AVX-512 VNNI kernels. They are opt-in (WORKBENCH_CPU_PATH=avx512)
// until they have run on AVX-512 hardware: the machines we develop on so far lack it, and the
// kernel test (which checks them against the scalar reference wherever the CPU has AVX-512)
// has not yet run there. On by default once that test has passed on such a machine.
bool cpu_allow_avx512();

}  // namespace workbench
