// Scalar reference kernels: the arithmetic every SIMD path must reproduce (up to float rounding).
#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/half_convert.h"

namespace workbench {

void gemm_quant_ref(const PackedView& w, const ActivationView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* q = w.data + r * w.row_bytes;
        const auto* scales = reinterpret_cast<const uint16_t*>(q + w.scales_at);
        for (int64_t t = 0; t < a.n_tokens; ++t) {
            const int8_t* aq = a.qs + t * a.n_in;
            double sum = 0;
            for (int64_t b = 0; b < w.n_blocks; ++b) {
                int32_t isum = 0;
                for (int j = 0; j < 32; ++j) {
                    int wq;
                    if (w.layout == PackedLayout::q8_0) {
                        wq = static_cast<int>(q[b * 32 + j]) - 128;
                    } else {
                        wq = packed_nibble(q, b, j);
                        if (w.layout == PackedLayout::q4_0) wq -= 8;
                    }
                    isum += wq * aq[b * 32 + j];
                }
                const float scale = half_to_float(scales[b]) * a.d[t * a.block_stride + b];
                sum += static_cast<double>(static_cast<float>(isum) * scale);
                if (w.layout == PackedLayout::q4_1)
                    sum += static_cast<double>(half_to_float(scales[w.n_blocks + b]) * a.s[t * a.block_stride + b]);
            }
            y[t * ldy + r] = static_cast<float>(sum);
        }
    }
}

void gemm_float_ref(const PackedView& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* row = w.data + r * w.row_bytes;
        for (int64_t t = 0; t < n_tokens; ++t) {
            double sum = 0;
            for (int64_t i = 0; i < w.n_in; ++i) {
                const float wv = w.layout == PackedLayout::f16 ? half_to_float(reinterpret_cast<const uint16_t*>(row)[i])
                                                               : reinterpret_cast<const float*>(row)[i];
                sum += static_cast<double>(wv) * x[t * w.n_in + i];
            }
            y[t * ldy + r] = static_cast<float>(sum);
        }
    }
}

}  // namespace workbench
