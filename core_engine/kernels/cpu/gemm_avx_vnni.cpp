// The quantized row-group kernels with AVX-VNNI (the VEX encoding: Alder Lake and later, Zen 5):
// one vpdpbusd per register in place of maddubs + madd. Built with -mavxvnni; runs only where
// cpu_features() finds AVX-VNNI (matmul.cpp).
#include <immintrin.h>

#include "kernels/cpu/gemm_quant_groups.h"

namespace workbench {
namespace {

struct AvxVnniMultiplyAdd {
    static __m256i apply(__m256i acc, __m256i u8, __m256i s8) { return _mm256_dpbusd_avx_epi32(acc, u8, s8); }
};

}  // namespace

void gemm_quant_avx_vnni(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    quant_group_rows<TilesWith<VnniDot<AvxVnniMultiplyAdd>>::template type>(w, a, r0, r1, y, ldy);
}

}  // namespace workbench
