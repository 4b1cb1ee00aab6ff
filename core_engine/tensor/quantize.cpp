// Reference quantizers (reached through quantize_row): float32 rows to F16/BF16 and to the
// 32-element block types, plus the Q8_1 and Q8_K activation formats the dot-product kernels
// consume. The bytes they write are those of ggml's quantize_row_*_ref and of gguf-py.

// gguf-py rounds (x - min)*id and the + 0.5 of Q4_1/Q5_1 separately; under -mfma the
// compiler may fuse them, which can move a quant across a level in rare double-rounding cases.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/dequantize.h"
#include "tensor/quant_blocks.h"

namespace workbench::quant {
namespace {

// The element with the largest magnitude, sign kept; the first one wins a tie, as in ggml.
float signed_absmax(const float* x, int n) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

// q = trunc(x*id + offset), with x*id + offset rounded once. ggml computes it in float and,
// built with FMA (the usual build), fuses the two steps; gguf-py emulates that through
// doubles. The float product of two floats is exact in double, so this equals fmaf wherever
// the truncation could tell them apart.
int fused_trunc(float x, float id, double offset) {
    const auto v = static_cast<float>(static_cast<double>(x) * static_cast<double>(id) + offset);
    return static_cast<int>(v);  // v >= 0.5 - tiny: truncation, as ggml's cast to int8_t
}

// Symmetric 4/5-bit quants with d = max / -(levels/2): Q4_0 (16 levels), Q5_0 (32 levels).
float quantize_symmetric(const float* x, int levels, uint8_t* q) {
    const float d = signed_absmax(x, 32) / static_cast<float>(-levels / 2);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; ++j)
        q[j] = static_cast<uint8_t>(std::min(levels - 1, fused_trunc(x[j], id, levels / 2 + 0.5)));
    return d;
}

// Asymmetric quants over [min, max]: Q4_1 (16 levels), Q5_1 (32 levels). Returns d, sets min.
float quantize_min_max(const float* x, int levels, uint8_t* q, float* min_out) {
    float min = x[0];
    float max = x[0];
    for (int j = 1; j < 32; ++j) {
        min = std::min(min, x[j]);
        max = std::max(max, x[j]);
    }
    const float d = (max - min) / static_cast<float>(levels - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; ++j) {
        const float v = (x[j] - min) * id;
        q[j] = static_cast<uint8_t>(std::min(levels - 1, static_cast<int>(v + 0.5f)));
    }
    *min_out = min;
    return d;
}

// Stores 4- or 5-bit quants: the low four bits of quant j in the low nibble of qs[j], of
// quant j+16 in the high nibble; for Q5_x the fifth bit of quant j at bit j of qh (LE u32).
template <typename Block>
void pack_quants(const uint8_t* q, Block& b) {
    for (int j = 0; j < 16; ++j)
        b.qs[j] = static_cast<uint8_t>((q[j] & 0x0F) | ((q[j + 16] & 0x0F) << 4));
    if constexpr (requires { b.qh; }) {
        uint32_t qh = 0;
        for (int j = 0; j < 32; ++j) qh |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
        std::memcpy(b.qh, &qh, sizeof qh);
    }
}

// One Q4_0/Q5_0 block (symmetric) or Q4_1/Q5_1 block (with a min m), `levels` 16 or 32.
template <typename Block, int levels>
void quantize_small_block(const float* in, Block& b) {
    uint8_t q[32];
    if constexpr (requires { b.m; }) {
        float min;
        b.d = fp32_to_fp16(quantize_min_max(in, levels, q, &min));
        b.m = fp32_to_fp16(min);
    } else {
        b.d = fp32_to_fp16(quantize_symmetric(in, levels, q));
    }
    pack_quants(q, b);
}

// Q8_0 and Q8_1: d = absmax/127, q = round half away from zero (roundf) of x/d.
float quantize_q8_block(const float* x, int8_t* qs) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; ++j) qs[j] = static_cast<int8_t>(std::round(x[j] * id));
    return d;
}

template <uint16_t (*narrow)(float)>
void quantize_16bit(const float* x, void* dst, int64_t n) {
    auto* out = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = narrow(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
    }
}

}  // namespace

void quantize_f16(const float* x, void* dst, int64_t n) { quantize_16bit<fp32_to_fp16>(x, dst, n); }

void quantize_bf16(const float* x, void* dst, int64_t n) {
    quantize_16bit<fp32_to_bf16>(x, dst, n);
}

void quantize_q4_0(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockQ4_0>(x, dst, n, QK4_0, quantize_small_block<BlockQ4_0, 16>);
}

void quantize_q4_1(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockQ4_1>(x, dst, n, QK4_1, quantize_small_block<BlockQ4_1, 16>);
}

void quantize_q5_0(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockQ5_0>(x, dst, n, QK5_0, quantize_small_block<BlockQ5_0, 32>);
}

void quantize_q5_1(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockQ5_1>(x, dst, n, QK5_1, quantize_small_block<BlockQ5_1, 32>);
}

void quantize_q8_0(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockQ8_0>(x, dst, n, QK8_0, [](const float* in, BlockQ8_0& b) {
        b.d = fp32_to_fp16(quantize_q8_block(in, b.qs));
    });
}

// ggml's quantize_row_mxfp4_ref: the exponent from the block's largest magnitude (its top E2M1
// value 6 = 12/2 just holds it), each value to the nearest of the 16 (the first on a tie).
// Exponents outside E8M0's range are clamped to it (ggml's cast would wrap).
void quantize_mxfp4(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockMXFP4>(x, dst, n, QK_MXFP4, [](const float* in, BlockMXFP4& b) {
        float amax = 0.0f;
        for (int j = 0; j < QK_MXFP4; ++j) amax = std::max(amax, std::fabs(in[j]));
        const float e = amax > 0.0f ? std::floor(std::log2(amax)) - 2.0f + 127.0f : 0.0f;
        b.e = static_cast<uint8_t>(std::clamp(e, 0.0f, 254.0f));
        const float d = e8m0_half(b.e);
        auto nearest = [d](float v) {
            int best = 0;
            float best_err = std::fabs(static_cast<float>(kMxfp4Values[0]) * d - v);
            for (int i = 1; i < 16; ++i) {
                const float err = std::fabs(static_cast<float>(kMxfp4Values[i]) * d - v);
                if (err < best_err) best = i, best_err = err;
            }
            return static_cast<uint8_t>(best);
        };
        for (int j = 0; j < QK_MXFP4 / 2; ++j) b.qs[j] = static_cast<uint8_t>(nearest(in[j]) | (nearest(in[j + QK_MXFP4 / 2]) << 4));
    });
}

void quantize_q8_1(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockQ8_1>(x, dst, n, QK8_1, [](const float* in, BlockQ8_1& b) {
        const float d = quantize_q8_block(in, b.qs);
        int sum = 0;
        for (int8_t q : b.qs) sum += q;
        b.d = fp32_to_fp16(d);
        b.s = fp32_to_fp16(static_cast<float>(sum) * d);  // from the float d, as ggml does
    });
}

// Q8_K: scale by -127/max (max keeps its sign), round half to even; an all-zero block gets
// d = 0 and zero sums (ggml leaves the sums of such a block unwritten).
void quantize_q8_k(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockQ8_K>(x, dst, n, QK_K, [](const float* in, BlockQ8_K& b) {
        const float max = signed_absmax(in, QK_K);
        if (max == 0.0f) return;
        const float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; ++j) {
            const int v = static_cast<int>(std::nearbyint(iscale * in[j]));
            b.qs[j] = static_cast<int8_t>(std::min(127, v));
        }
        for (int g = 0; g < QK_K / 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) sum += b.qs[16 * g + j];
            b.bsums[g] = static_cast<int16_t>(sum);
        }
        b.d = 1.0f / iscale;
    });
}

}  // namespace workbench::quant
