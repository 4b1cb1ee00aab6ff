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

// Whether matmuls use the split-row AVX-512 kernels. Opt-in (WORKBENCH_CPU_PATH=avx512): their
// arithmetic is tested (natively where the CPU has AVX-512, under SIMDe emulation elsewhere), but
// whether they beat the row groups with 256-bit VNNI (the default there) has not been measured.
bool cpu_allow_avx512();

// Which kernels run the row groups: AVX-512 (quantized groups with VNNI and f16/bf16 groups, 16
// rows per register) where the CPU has AVX512-VNNI, else AVX-VNNI (quantized groups, 8 rows),
// else AVX2. All give the same results bit for bit (gemm_quant_groups.h, gemm_f16_groups.h).
// WORKBENCH_CPU_PATH=avx2 forces the AVX2 kernels.
enum class GroupKernels { avx2, avx_vnni, avx512_vnni };
GroupKernels cpu_group_kernels();
const char* group_kernels_name(GroupKernels kernels);  // "avx2", "avx-vnni", "avx512-vnni"

}  // namespace workbench
