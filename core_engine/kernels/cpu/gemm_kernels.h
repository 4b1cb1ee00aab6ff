// The matmul inner kernels, one set per instruction set, all over packed weights: rows [r0, r1)
// of W against every token, y[t·ldy + r] = W_r · x_t. Each (row, token) result is computed by the
// same sequence of operations whatever the number of tokens in the call (tiles of rows and tokens
// only share loads and unpacking), so results are batch-invariant. The AVX2 kernels read the row
// groups of packed_matrix.h, the AVX-512 ones the split rows. The scalar reference reads both and
// defines the arithmetic the SIMD paths are tested against.
#pragma once

#include <cstdint>

#include "kernels/cpu/packed_matrix.h"
#include "kernels/cpu/quantized_activations.h"

namespace workbench {

// Plain views handed to the kernels. The AVX-512 kernels live in a file compiled for AVX-512, so
// they must not instantiate shared inline code; these PODs carry raw pointers instead.
struct PackedView {
    PackedLayout layout;
    const uint8_t* data;
    int64_t n_in, n_blocks, row_bytes;
    int64_t scales_at;   // byte offset of the fp16 scales within a row
};
struct ActivationView {
    const int8_t* qs;
    const float *d, *s, *sum_q;
    const int16_t* half_sum_q;  // 2 per block
    int64_t n_tokens, n_in, block_stride;
};

inline PackedView view_of(const PackedMatrix& w) {
    return {w.layout, w.data, w.n_in, w.n_blocks, w.row_bytes, w.quant_bytes()};
}
inline ActivationView view_of(const QuantizedActivations& a) {
    return {a.qs.data(), a.d.data(), a.s.data(), a.sum_q.data(), a.half_sum_q.data(),
            a.n_tokens, a.n_in, a.block_stride};
}

// Quantized layouts against 8-bit activations.
void gemm_quant_ref(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy);
void gemm_quant_avx2(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy);
// The 2-bit row groups (q2_kx8, q3_kx8), called by gemm_quant_avx2.
void gemm_crumbs_avx2(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy);
// The same row groups with vpdpbusd: AVX-VNNI (8 rows per register), AVX512-VNNI (16 rows per
// register). Bit-identical to gemm_quant_avx2 (every block's integer sum is exact in all).
void gemm_quant_avx_vnni(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy);
void gemm_quant_avx512_vnni(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy);
void gemm_quant_avx512(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy);

// f16 and f32 layouts against f32 activations x [n_tokens, n_in].
void gemm_float_ref(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy);
void gemm_float_avx2(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy);
// f16x8/bf16x8 row groups on 512-bit registers (f32 rows go to gemm_float_avx2); bit-identical
// to gemm_float_avx2.
void gemm_float_avx512_groups(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy);
void gemm_float_avx512(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy);

}  // namespace workbench
