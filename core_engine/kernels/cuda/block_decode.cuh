// Device-side decoding of a matrix row's elements, 32 at a time (one quantization block; for
// the plain types 32 consecutive elements, zero past the row's end). Shared by the GEMV, the
// dequantization for cuBLASLt and the embedding lookup so every path reads a format one way.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/device_matrix.h"

namespace workbench::cuda {

constexpr int kBlock = 32;

__device__ inline float half_bits(const uint8_t* p) {
    const uint16_t bits = static_cast<uint16_t>(p[0] | (p[1] << 8));   // blocks are byte-packed: no aligned loads
    return __half2float(__ushort_as_half(bits));
}

// Elements [32·block, 32·block + 32) of `row` (n_in elements) into out[0..32).
template <DType T>
__device__ inline void decode_block(const uint8_t* row, int64_t block, int64_t n_in, float* out) {
    if constexpr (T == DType::q4_0) {
        const uint8_t* b = row + block * 18;
        const float d = half_bits(b);
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            const uint8_t q = b[2 + j];
            out[j] = static_cast<float>((q & 0xF) - 8) * d;
            out[j + 16] = static_cast<float>((q >> 4) - 8) * d;
        }
    } else if constexpr (T == DType::q4_1) {
        const uint8_t* b = row + block * 20;
        const float d = half_bits(b), m = half_bits(b + 2);
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            const uint8_t q = b[4 + j];
            out[j] = static_cast<float>(q & 0xF) * d + m;
            out[j + 16] = static_cast<float>(q >> 4) * d + m;
        }
    } else if constexpr (T == DType::q8_0) {
        const uint8_t* b = row + block * 34;
        const float d = half_bits(b);
#pragma unroll
        for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
    } else {
        const int64_t first = block * kBlock;
#pragma unroll
        for (int j = 0; j < 32; ++j) {
            const int64_t i = first + j;
            if (i >= n_in) {
                out[j] = 0.0f;
            } else if constexpr (T == DType::f32) {
                out[j] = reinterpret_cast<const float*>(row)[i];
            } else if constexpr (T == DType::f16) {
                out[j] = __half2float(reinterpret_cast<const __half*>(row)[i]);
            } else {
                out[j] = __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(row)[i]);
            }
        }
    }
}

inline int64_t blocks_per_row(int64_t n_in) { return (n_in + kBlock - 1) / kBlock; }

// Calls f(std::integral_constant<DType, T>{}) for the matrix's type T, so a launcher picks the
// kernel instantiation once (the .cu files are C++17: no template lambdas). False, calling
// nothing, for a type outside kept_on_device's.
template <typename F>
inline bool dispatch_type(DType type, F&& f) {
    switch (type) {
        case DType::q4_0: f(std::integral_constant<DType, DType::q4_0>{}); return true;
        case DType::q4_1: f(std::integral_constant<DType, DType::q4_1>{}); return true;
        case DType::q8_0: f(std::integral_constant<DType, DType::q8_0>{}); return true;
        case DType::f16: f(std::integral_constant<DType, DType::f16>{}); return true;
        case DType::bf16: f(std::integral_constant<DType, DType::bf16>{}); return true;
        case DType::f32: f(std::integral_constant<DType, DType::f32>{}); return true;
        default: return false;
    }
}

}  // namespace workbench::cuda
