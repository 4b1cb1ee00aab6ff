// Byte layouts of the GGUF quantization blocks (the same fields, order and sizes as ggml's
// block_* structs) and the per-type row functions behind dequantize_row / quantize_row.
// Internal to core_engine/tensor: the SIMD kernels read blocks through these structs too.
#pragma once

#include <cstdint>
#include <cstring>

#include "tensor/dtype.h"

namespace workbench::quant {

constexpr int QK4_0 = 32;
constexpr int QK4_1 = 32;
constexpr int QK5_0 = 32;
constexpr int QK5_1 = 32;
constexpr int QK8_0 = 32;
constexpr int QK8_1 = 32;
constexpr int K_SCALE_SIZE = 12;  // packed 6-bit scales and mins of Q4_K / Q5_K

// Scales are raw fp16 bits (uint16_t) so the structs stay trivially copyable and packed.
struct BlockQ4_0 {
    uint16_t d;
    uint8_t qs[QK4_0 / 2];  // element j in the low nibble of qs[j], j+16 in the high nibble
};
struct BlockQ4_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[QK4_1 / 2];
};
struct BlockQ5_0 {
    uint16_t d;
    uint8_t qh[4];  // bit j = fifth bit of element j (little-endian uint32)
    uint8_t qs[QK5_0 / 2];
};
struct BlockQ5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[QK5_1 / 2];
};
struct BlockQ8_0 {
    uint16_t d;
    int8_t qs[QK8_0];
};
struct BlockQ8_1 {
    uint16_t d;
    uint16_t s;  // fp16(d * sum(qs)), lets dot products with Q4_1/Q5_1 fold the mins in
    int8_t qs[QK8_1];
};
struct BlockQ2_K {
    uint8_t scales[QK_K / 16];  // low nibble: scale, high nibble: min, per 16 elements
    uint8_t qs[QK_K / 4];
    uint16_t d;
    uint16_t dmin;
};
struct BlockQ3_K {
    uint8_t hmask[QK_K / 8];  // third bit of each element; a set bit means "no -4 offset"
    uint8_t qs[QK_K / 4];
    uint8_t scales[12];  // sixteen 6-bit scales, biased by 32
    uint16_t d;
};
struct BlockQ4_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qs[QK_K / 2];
};
struct BlockQ5_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
};
struct BlockQ6_K {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    uint16_t d;
};
struct BlockQ8_K {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];  // sums of 16 consecutive quants, for the k-quant dot products
};

// MXFP4: e is an E8M0 exponent, qs Q4_0's nibble order (byte j: element j low, j + 16 high),
// each nibble an index into kMxfp4Values (E2M1 values doubled, so the scale is 2^(e − 128)).
struct BlockMXFP4 {
    uint8_t e;
    uint8_t qs[16];
};
constexpr int QK_MXFP4 = 32;
constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
// 2^(e − 128) exactly, subnormal for e < 2 (ggml's E8M0_TO_FP32_HALF).
inline float e8m0_half(uint8_t e) {
    const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
constexpr uint8_t kMxfp4BadExponent = 0xFF;  // NaN in E8M0: ggml refuses a block holding it
static_assert(sizeof(BlockMXFP4) == 17);

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210 && sizeof(BlockQ8_K) == 292);

// Copies block `i` out of a byte buffer: tensor data in a mapped file need not be aligned for
// the struct, so the reference code never dereferences a cast pointer.
template <typename Block>
inline Block load_block(const void* src, int64_t i) {
    Block b;
    std::memcpy(&b, static_cast<const uint8_t*>(src) + i * static_cast<int64_t>(sizeof(Block)),
                sizeof(Block));
    return b;
}

template <typename Block>
inline void store_block(void* dst, int64_t i, const Block& b) {
    std::memcpy(static_cast<uint8_t*>(dst) + i * static_cast<int64_t>(sizeof(Block)), &b,
                sizeof(Block));
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block.
inline void k4_scale_min(int j, const uint8_t* q, uint8_t* scale, uint8_t* min) {
    if (j < 4) {
        *scale = q[j] & 63;
        *min = q[j + 4] & 63;
    } else {
        *scale = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *min = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// The sixteen 6-bit Q3_K scales, minus their bias of 32. Bytes 0-7 hold the low nibbles (of
// scales 0-7 in their low halves, 8-15 in their high halves); bytes 8-11 hold the top two
// bits, scale j at bits 2*(j/4) of byte 8 + j%4.
inline void unpack_q3_k_scales(const uint8_t* packed, int* scales) {
    for (int j = 0; j < 16; ++j) {
        const int low = j < 8 ? (packed[j] & 0xF) : (packed[j - 8] >> 4);
        const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
        scales[j] = (low | (high << 4)) - 32;
    }
}

// Runs `fn(block, out)` over the blocks of a row: `out` points at the block's `elements`
// floats in `dst`.
template <typename Block, typename Fn>
inline void dequantize_blocks(const void* src, float* dst, int64_t n, int elements, Fn fn) {
    for (int64_t i = 0; i < n / elements; ++i) fn(load_block<Block>(src, i), dst + i * elements);
}

// Runs `fn(in, block)` over the blocks of a row: `in` points at the block's `elements` floats;
// the block starts zeroed and is stored once `fn` has filled it.
template <typename Block, typename Fn>
inline void quantize_blocks(const float* x, void* dst, int64_t n, int elements, Fn fn) {
    for (int64_t i = 0; i < n / elements; ++i) {
        Block b{};
        fn(x + i * elements, b);
        store_block(dst, i, b);
    }
}

// Row functions of the quantizers (quantize.cpp, quantize_kquants.cpp), tabled in
// dequantize.cpp with the dequantizers; `n` is a multiple of the block size (checked by
// quantize_row).
using DequantizeFn = void (*)(const void* src, float* dst, int64_t n);
using QuantizeFn = void (*)(const float* src, void* dst, int64_t n);

void quantize_f16(const float* src, void* dst, int64_t n);
void quantize_bf16(const float* src, void* dst, int64_t n);
void quantize_q4_0(const float* src, void* dst, int64_t n);
void quantize_q4_1(const float* src, void* dst, int64_t n);
void quantize_q5_0(const float* src, void* dst, int64_t n);
void quantize_q5_1(const float* src, void* dst, int64_t n);
void quantize_q8_0(const float* src, void* dst, int64_t n);
void quantize_q8_1(const float* src, void* dst, int64_t n);
void quantize_q8_k(const float* src, void* dst, int64_t n);
void quantize_q4_k(const float* src, void* dst, int64_t n);  // quantize_kquants.cpp
void quantize_q5_k(const float* src, void* dst, int64_t n);
void quantize_q6_k(const float* src, void* dst, int64_t n);
void quantize_mxfp4(const float* src, void* dst, int64_t n);

}  // namespace workbench::quant
