// Scalar reference kernels: the arithmetic every SIMD path must reproduce (up to float rounding).
#include "kernels/cpu/gemm_kernels.h"
#include "tensor/half_convert.h"

namespace workbench {

namespace {

// Row r's block b as the kernels see it: signed quants, scale and (q4_1) offset, in either family.
struct RefBlock {
    int q[32];
    float d = 0, m = 0;
    float d_second = 0;  // q6_kx8: the scale of elements 16..31 (d covers 0..15)
};

RefBlock ref_block(const PackedView& w, int64_t r, int64_t b) {
    RefBlock out;
    if (is_row_grouped(w.layout)) {
        const uint8_t* block = w.data + (r / 8) * w.row_bytes + group_block_offset(w.layout, b);
        const int i = static_cast<int>(r % 8);
        for (int j = 0; j < 32; ++j) out.q[j] = group_value(w.layout, block, i, j) - group_quant_bias(w.layout);
        out.d = group_scale(w.layout, block, b, i, 0);
        if (group_offsets(w.layout)) out.m = group_scale(w.layout, block, b, i, 1);
        if (group_half_scales(w.layout)) out.d_second = group_scale(w.layout, block, b, i, 1);
        return out;
    }
    const uint8_t* q = w.data + r * w.row_bytes;
    const auto* scales = reinterpret_cast<const uint16_t*>(q + w.scales_at);
    for (int j = 0; j < 32; ++j) {
        if (w.layout == PackedLayout::q8_0) out.q[j] = static_cast<int>(q[b * 32 + j]) - 128;
        else out.q[j] = packed_nibble(q, b, j) - (w.layout == PackedLayout::q4_0 ? 8 : 0);
    }
    out.d = half_to_float(scales[b]);
    if (w.layout == PackedLayout::q4_1) out.m = half_to_float(scales[w.n_blocks + b]);
    return out;
}

// q2_kx8 / q3_kx8: per 16-element half, the integer dot product times the integer sub-scale,
// summed over the block in integers and scaled once by d·d_a; Q2_K's mins meet the halves'
// activation sums the same way and are scaled by dmin·d_a.
double crumb_block_dot(const PackedView& w, int64_t r, int64_t b, const int8_t* aq, const int16_t* half_sums, float da) {
    const uint8_t* block = w.data + (r / 8) * w.row_bytes + group_block_offset(w.layout, b);
    const int i = static_cast<int>(r % 8);
    const CrumbScales c = group_crumb_scales(w.layout, block, b, i);
    int32_t isum = 0, msum = 0;
    for (int h = 0; h < 2; ++h) {
        int32_t dot = 0;
        for (int j = 16 * h; j < 16 * h + 16; ++j) dot += group_quant(w.layout, block, i, j) * aq[j];
        isum += c.sc[h] * dot;
        msum += c.m[h] * half_sums[h];
    }
    double sum = static_cast<double>(static_cast<float>(isum) * (c.d * da));
    if (w.layout == PackedLayout::q2_kx8) sum -= static_cast<double>(static_cast<float>(msum) * (c.dmin * da));
    return sum;
}

}  // namespace

void gemm_quant_ref(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    const bool has_offsets = w.layout == PackedLayout::q4_1 || (is_row_grouped(w.layout) && group_offsets(w.layout));
    for (int64_t r = r0; r < r1; ++r) {
        for (int64_t t = 0; t < a.n_tokens; ++t) {
            const int8_t* aq = a.qs + t * a.n_in;
            double sum = 0;
            for (int64_t b = 0; b < w.n_blocks; ++b) {
                const float da = a.d[t * a.block_stride + b];
                if (is_row_grouped(w.layout) && group_crumbs(w.layout)) {
                    sum += crumb_block_dot(w, r, b, aq + b * 32, a.half_sum_q + 2 * (t * a.block_stride + b), da);
                    continue;
                }
                const RefBlock blk = ref_block(w, r, b);
                if (is_row_grouped(w.layout) && group_half_scales(w.layout)) {
                    for (int half = 0; half < 2; ++half) {
                        int32_t isum = 0;
                        for (int j = 16 * half; j < 16 * half + 16; ++j) isum += blk.q[j] * aq[b * 32 + j];
                        sum += static_cast<double>(static_cast<float>(isum) * ((half == 0 ? blk.d : blk.d_second) * da));
                    }
                    continue;
                }
                int32_t isum = 0;
                for (int j = 0; j < 32; ++j) isum += blk.q[j] * aq[b * 32 + j];
                const float scale = blk.d * da;
                sum += static_cast<double>(static_cast<float>(isum) * scale);
                if (has_offsets) sum += static_cast<double>(blk.m * a.s[t * a.block_stride + b]);
            }
            y[t * ldy + r] = static_cast<float>(sum);
        }
    }
}

void gemm_float_ref(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* row = w.data + r * w.row_bytes;
        const auto* group = reinterpret_cast<const uint16_t*>(w.data + (r / 8) * w.row_bytes) + r % 8;
        for (int64_t t = 0; t < n_tokens; ++t) {
            double sum = 0;
            for (int64_t i = 0; i < w.n_in; ++i) {
                const float wv = w.layout == PackedLayout::f16x8 || w.layout == PackedLayout::bf16x8 ? sixteen_bit_to_float(w.layout, group[i * 8])
                                 : w.layout == PackedLayout::f16 ? half_to_float(reinterpret_cast<const uint16_t*>(row)[i])
                                                                 : reinterpret_cast<const float*>(row)[i];
                sum += static_cast<double>(wv) * x[t * w.n_in + i];
            }
            y[t * ldy + r] = static_cast<float>(sum);
        }
    }
}

}  // namespace workbench
