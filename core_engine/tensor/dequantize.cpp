// Reference dequantizers for every readable type (plain floats, 32-element blocks, k-quants),
// the half precision conversions, and the table behind dequantize_row / quantize_row (the
// quantizers live in quantize.cpp). Element and arithmetic order follow ggml's scalar code,
// which gguf-py reproduces, so the outputs match both bit for bit.

// Every product d*scale*q below is exact in float32 (an fp16 scale has 11 significant bits,
// sub-block scales and quants few enough) except Q6_K's and Q8_K's, which round once at the
// end: FMA-fused or regrouped SIMD versions give the same bits, so kernels can be tested for
// equality with these functions.

#include "tensor/dequantize.h"

#include <cstring>

#include "tensor/quant_blocks.h"

namespace workbench {

namespace {

uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

}  // namespace

float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    if (exp == 0x1F) return bits_float(sign | 0x7F800000u | (mant << 13));  // inf, NaN + payload
    if (exp != 0) return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
    if (mant == 0) return bits_float(sign);
    // Subnormal half: shift the mantissa up until its leading bit becomes the implicit one.
    uint32_t e = 113;
    while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --e;
    }
    return bits_float(sign | (e << 23) | ((mant & 0x3FFu) << 13));
}

uint16_t fp32_to_fp16(float f) {
    const uint32_t x = float_bits(f);
    const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t abs = x & 0x7FFFFFFFu;
    const uint32_t exp = abs >> 23;
    if (abs > 0x7F800000u)  // NaN: keep it quiet and keep the top payload bits, as F16C does
        return static_cast<uint16_t>(sign | 0x7E00u | ((abs & 0x7FFFFFu) >> 13));
    if (exp > 142) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 2^16, or inf: inf
    if (exp < 102) return sign;  // below 2^-25 (also float subnormals): rounds to zero
    uint32_t mant = abs & 0x7FFFFFu;
    uint32_t h;
    uint32_t shift;
    if (exp < 113) {  // becomes a half subnormal: keep the implicit bit, shift it down
        mant |= 0x800000u;
        shift = 126 - exp;  // 14..24
        h = mant >> shift;
    } else {  // normal half; a carry out of the mantissa bumps the exponent, up to inf
        shift = 13;
        h = ((exp - 112) << 10) | (mant >> shift);
    }
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;  // round to nearest, ties to even
    return static_cast<uint16_t>(sign | h);
}

float bf16_to_fp32(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

uint16_t fp32_to_bf16(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
    return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

namespace {

using namespace quant;

void copy_f32_out(const void* src, float* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void copy_f32_in(const float* src, void* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

template <float (*widen)(uint16_t)>
void dequantize_16bit(const void* src, float* dst, int64_t n) {
    const auto* p = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        dst[i] = widen(h);
    }
}

void dequantize_q4_0(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockQ4_0>(src, dst, n, QK4_0, [](const BlockQ4_0& b, float* y) {
        const float d = fp16_to_fp32(b.d);
        for (int j = 0; j < QK4_0 / 2; ++j) {
            y[j] = static_cast<float>((b.qs[j] & 0x0F) - 8) * d;
            y[j + QK4_0 / 2] = static_cast<float>((b.qs[j] >> 4) - 8) * d;
        }
    });
}

void dequantize_mxfp4(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockMXFP4>(src, dst, n, QK_MXFP4, [](const BlockMXFP4& b, float* y) {
        const float d = e8m0_half(b.e);
        for (int j = 0; j < QK_MXFP4 / 2; ++j) {
            y[j] = static_cast<float>(kMxfp4Values[b.qs[j] & 0x0F]) * d;
            y[j + QK_MXFP4 / 2] = static_cast<float>(kMxfp4Values[b.qs[j] >> 4]) * d;
        }
    });
}

void dequantize_q4_1(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockQ4_1>(src, dst, n, QK4_1, [](const BlockQ4_1& b, float* y) {
        const float d = fp16_to_fp32(b.d);
        const float m = fp16_to_fp32(b.m);
        for (int j = 0; j < QK4_1 / 2; ++j) {
            y[j] = static_cast<float>(b.qs[j] & 0x0F) * d + m;
            y[j + QK4_1 / 2] = static_cast<float>(b.qs[j] >> 4) * d + m;
        }
    });
}

// Q5_0 and Q5_1: the four low bits of each quant in qs (as Q4_0), the fifth in qh; Q5_0 is
// centred (q - 16) * d, Q5_1 offset q * d + m.
template <typename Block>
void dequantize_q5(const Block& b, float m, int centre, float* y) {
    const float d = fp16_to_fp32(b.d);
    uint32_t qh;
    std::memcpy(&qh, b.qh, sizeof qh);
    for (int j = 0; j < 16; ++j) {
        const int q0 = (b.qs[j] & 0x0F) | static_cast<int>(((qh >> j) & 1u) << 4);
        const int q1 = (b.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
        y[j] = static_cast<float>(q0 - centre) * d + m;
        y[j + 16] = static_cast<float>(q1 - centre) * d + m;
    }
}

void dequantize_q5_0(const void* src, float* dst, int64_t n) {
    // m = -0.0f: adding it keeps every q*d bit for bit, a -0 too (adding +0 would not)
    dequantize_blocks<BlockQ5_0>(src, dst, n, QK5_0, [](const BlockQ5_0& b, float* y) {
        dequantize_q5(b, -0.0f, 16, y);
    });
}

void dequantize_q5_1(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockQ5_1>(src, dst, n, QK5_1, [](const BlockQ5_1& b, float* y) {
        dequantize_q5(b, fp16_to_fp32(b.m), 0, y);
    });
}

void dequantize_q8_0(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockQ8_0>(src, dst, n, QK8_0, [](const BlockQ8_0& b, float* y) {
        const float d = fp16_to_fp32(b.d);
        for (int j = 0; j < QK8_0; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
    });
}

// Q2_K and Q3_K share an element order: each half of the super-block (128 elements) reads 32
// bytes of 2-bit quants four times, at shifts 0, 2, 4, 6; each pass yields 32 elements that
// use two consecutive 16-element scales.

void dequantize_q2_k(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockQ2_K>(src, dst, n, QK_K, [](const BlockQ2_K& b, float* y) {
        const float d = fp16_to_fp32(b.d);
        const float dmin = fp16_to_fp32(b.dmin);
        for (int half = 0; half < 2; ++half) {
            const uint8_t* q = b.qs + 32 * half;
            for (int pass = 0; pass < 4; ++pass, y += 32) {
                for (int l = 0; l < 32; ++l) {
                    const uint8_t sc = b.scales[8 * half + 2 * pass + l / 16];
                    const float dl = d * static_cast<float>(sc & 0xF);
                    const float ml = dmin * static_cast<float>(sc >> 4);
                    y[l] = dl * static_cast<float>((q[l] >> (2 * pass)) & 3) - ml;
                }
            }
        }
    });
}

// Q4_K and Q5_K: eight 32-element sub-blocks, each with a 6-bit scale and min; 64 elements
// share 32 bytes of nibbles (low nibbles first, then high nibbles). Q5_K adds a fifth bit per
// element, bit `sub` of qh[l]; `qh` is null for Q4_K.
void dequantize_k_nibbles(uint16_t d_half, uint16_t dmin_half, const uint8_t* scales,
                          const uint8_t* qs, const uint8_t* qh, float* y) {
    const float d = fp16_to_fp32(d_half);
    const float dmin = fp16_to_fp32(dmin_half);
    for (int sub = 0; sub < 8; ++sub, y += 32) {
        uint8_t sc, m;
        k4_scale_min(sub, scales, &sc, &m);
        const float dl = d * static_cast<float>(sc);
        const float ml = dmin * static_cast<float>(m);
        const uint8_t* q = qs + 32 * (sub / 2);
        const int shift = 4 * (sub % 2);
        for (int l = 0; l < 32; ++l) {
            const int high = qh != nullptr ? ((qh[l] >> sub) & 1) << 4 : 0;
            y[l] = dl * static_cast<float>(((q[l] >> shift) & 0xF) | high) - ml;
        }
    }
}

void dequantize_q3_k(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockQ3_K>(src, dst, n, QK_K, [](const BlockQ3_K& b, float* y) {
        const float d = fp16_to_fp32(b.d);
        int scales[16];
        unpack_q3_k_scales(b.scales, scales);
        for (int half = 0; half < 2; ++half) {
            const uint8_t* q = b.qs + 32 * half;
            for (int pass = 0; pass < 4; ++pass, y += 32) {
                const int hbit = 4 * half + pass;
                for (int l = 0; l < 32; ++l) {
                    const float dl = d * static_cast<float>(scales[8 * half + 2 * pass + l / 16]);
                    const int low = (q[l] >> (2 * pass)) & 3;
                    const int offset = (b.hmask[l] >> hbit) & 1 ? 0 : 4;
                    y[l] = dl * static_cast<float>(low - offset);
                }
            }
        }
    });
}

void dequantize_q4_k(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockQ4_K>(src, dst, n, QK_K, [](const BlockQ4_K& b, float* y) {
        dequantize_k_nibbles(b.d, b.dmin, b.scales, b.qs, nullptr, y);
    });
}

void dequantize_q5_k(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockQ5_K>(src, dst, n, QK_K, [](const BlockQ5_K& b, float* y) {
        dequantize_k_nibbles(b.d, b.dmin, b.scales, b.qs, b.qh, y);
    });
}

// Q6_K: each half (128 elements) takes 64 bytes of low nibbles and 32 bytes of 2-bit highs;
// element 32*k + l of the half uses nibble k/2 of ql[l + 32*(k%2)] and bits 2k of qh[l].
void dequantize_q6_k(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockQ6_K>(src, dst, n, QK_K, [](const BlockQ6_K& b, float* y) {
        const float d = fp16_to_fp32(b.d);
        for (int half = 0; half < 2; ++half, y += 128) {
            const uint8_t* ql = b.ql + 64 * half;
            const uint8_t* qh = b.qh + 32 * half;
            const int8_t* sc = b.scales + 8 * half;
            for (int k = 0; k < 4; ++k) {
                for (int l = 0; l < 32; ++l) {
                    const int low = (ql[l + 32 * (k % 2)] >> (4 * (k / 2))) & 0xF;
                    const int high = (qh[l] >> (2 * k)) & 3;
                    const float ds = d * static_cast<float>(sc[l / 16 + 2 * k]);
                    y[32 * k + l] = ds * static_cast<float>((low | (high << 4)) - 32);
                }
            }
        }
    });
}

void dequantize_q8_k(const void* src, float* dst, int64_t n) {
    dequantize_blocks<BlockQ8_K>(src, dst, n, QK_K, [](const BlockQ8_K& b, float* y) {
        for (int j = 0; j < QK_K; ++j) y[j] = b.d * static_cast<float>(b.qs[j]);
    });
}

// What the engine can do with each type; a null entry means "not supported".
struct RowCodec {
    DType type;
    DequantizeFn dequantize;
    QuantizeFn quantize;  // of the k-quant weight types only Q4_K and Q6_K so far
};

constexpr RowCodec kCodecs[] = {
    {DType::f32, copy_f32_out, copy_f32_in},
    {DType::f16, dequantize_16bit<fp16_to_fp32>, quantize_f16},
    {DType::bf16, dequantize_16bit<bf16_to_fp32>, quantize_bf16},
    {DType::q4_0, dequantize_q4_0, quantize_q4_0},
    {DType::q4_1, dequantize_q4_1, quantize_q4_1},
    {DType::q5_0, dequantize_q5_0, quantize_q5_0},
    {DType::q5_1, dequantize_q5_1, quantize_q5_1},
    {DType::q8_0, dequantize_q8_0, quantize_q8_0},
    {DType::q8_1, nullptr, quantize_q8_1},  // activations only: never dequantized
    {DType::q2_k, dequantize_q2_k, nullptr},
    {DType::q3_k, dequantize_q3_k, nullptr},
    {DType::q4_k, dequantize_q4_k, quantize_q4_k},
    {DType::q5_k, dequantize_q5_k, quantize_q5_k},
    {DType::q6_k, dequantize_q6_k, quantize_q6_k},
    {DType::q8_k, dequantize_q8_k, quantize_q8_k},
    {DType::mxfp4, dequantize_mxfp4, quantize_mxfp4},
};

// The table entry for a row of `n` elements of `type`; null for an unknown type or a row that
// is not whole blocks.
const RowCodec* codec_for_row(DType type, int64_t n) {
    for (const auto& c : kCodecs)
        if (c.type == type)
            return n >= 0 && n % dtype_traits(type).block_elements == 0 ? &c : nullptr;
    return nullptr;
}

}  // namespace

bool dequantize_row(DType type, const void* src, float* dst, int64_t n_elements) {
    const RowCodec* codec = codec_for_row(type, n_elements);
    if (codec == nullptr || codec->dequantize == nullptr) return false;
    codec->dequantize(src, dst, n_elements);
    return true;
}

bool quantize_row(DType type, const float* src, void* dst, int64_t n_elements) {
    const RowCodec* codec = codec_for_row(type, n_elements);
    if (codec == nullptr || codec->quantize == nullptr) return false;
    codec->quantize(src, dst, n_elements);
    return true;
}

}  // namespace workbench
