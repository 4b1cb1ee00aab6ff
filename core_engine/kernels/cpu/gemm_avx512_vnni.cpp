// The quantized row-group kernels with AVX512-VNNI on 256-bit registers (the EVEX encoding with
// AVX512VL: Ice Lake, Sapphire Rapids, Zen 4), for CPUs that have it without AVX-VNNI. Built with
// AVX-512 flags; runs only where cpu_features() finds AVX512-VNNI and AVX512VL (matmul.cpp).
#include <immintrin.h>

#include "kernels/cpu/gemm_quant_groups.h"

namespace workbench {
namespace {

struct Avx512VnniMultiplyAdd {
    static __m256i apply(__m256i acc, __m256i u8, __m256i s8) { return _mm256_dpbusd_epi32(acc, u8, s8); }
};

}  // namespace

void gemm_quant_avx512_vnni(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    quant_group_rows<VnniDot<Avx512VnniMultiplyAdd>>(w, a, r0, r1, y, ldy);
}

}  // namespace workbench
