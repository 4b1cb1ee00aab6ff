// Device-side decoding of a matrix row (device_matrix.h's layout), two ways sharing one formula
// per format:
//   decode_block  32 elements (one quantization block; for plain types 32 consecutive elements,
//                 zero past the row's end), for the embedding lookup and the decode to bf16;
//   Chunk<T>      the elements one 16-byte load holds (q4_0/q4_1: a block, q8_0: half a block,
//                 f16/bf16: 8, f32: 4), for the GEMV, whose lanes read a row 16 bytes at a time.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/device_matrix.h"

namespace workbench::cuda {

constexpr int kBlock = 32;

__device__ inline float scale_at(const uint8_t* scales, int64_t i) {
    return __half2float(reinterpret_cast<const __half*>(scales)[i]);
}

// The 4-bit and 8-bit formulas: q4_0 (q − 8)·d, q4_1 q·d + m, q8_0 q·d.
template <DType T>
__device__ inline void decode_nibbles(const uint8_t* q, float d, float m, float* out) {
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        if constexpr (T == DType::q4_0) {
            out[j] = static_cast<float>((q[j] & 0xF) - 8) * d;
            out[j + 16] = static_cast<float>((q[j] >> 4) - 8) * d;
        } else {
            out[j] = static_cast<float>(q[j] & 0xF) * d + m;
            out[j + 16] = static_cast<float>(q[j] >> 4) * d + m;
        }
    }
}

// Elements [32·block, 32·block + 32) of row r into out[0..32).
template <DType T>
__device__ inline void decode_block(const DeviceMatrix& w, int64_t r, int64_t block, float* out) {
    const uint8_t* row = w.data + r * w.row_bytes;
    if constexpr (T == DType::q4_0 || T == DType::q4_1) {
        const int64_t s = (r * (w.n_in / kBlock) + block) * (T == DType::q4_1 ? 2 : 1);
        decode_nibbles<T>(row + block * 16, scale_at(w.scales, s), T == DType::q4_1 ? scale_at(w.scales, s + 1) : 0.0f, out);
    } else if constexpr (T == DType::q8_0) {
        const int8_t* q = reinterpret_cast<const int8_t*>(row + block * 32);
        const float d = scale_at(w.scales, r * (w.n_in / kBlock) + block);
#pragma unroll
        for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(q[j]) * d;
    } else {
        const int64_t first = block * kBlock;
#pragma unroll
        for (int j = 0; j < 32; ++j) {
            const int64_t i = first + j;
            if (i >= w.n_in) {
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

// One 16-byte load's elements: chunk c of row r holds elements [c·kElements, (c + 1)·kElements).
template <DType T>
struct Chunk {
    static constexpr int kElements = T == DType::q4_0 || T == DType::q4_1 ? 32 : T == DType::q8_0 ? 16 : T == DType::f32 ? 4 : 8;

    __device__ static void decode(const DeviceMatrix& w, int64_t r, int64_t c, uint4 raw, float* out) {
        const uint8_t* bytes = reinterpret_cast<const uint8_t*>(&raw);
        if constexpr (T == DType::q4_0 || T == DType::q4_1) {
            const int64_t s = (r * (w.n_in / kBlock) + c) * (T == DType::q4_1 ? 2 : 1);
            decode_nibbles<T>(bytes, scale_at(w.scales, s), T == DType::q4_1 ? scale_at(w.scales, s + 1) : 0.0f, out);
        } else if constexpr (T == DType::q8_0) {
            const float d = scale_at(w.scales, r * (w.n_in / kBlock) + c / 2);
#pragma unroll
            for (int j = 0; j < 16; ++j) out[j] = static_cast<float>(static_cast<int8_t>(bytes[j])) * d;
        } else if constexpr (T == DType::f32) {
            const float* f = reinterpret_cast<const float*>(&raw);
#pragma unroll
            for (int j = 0; j < 4; ++j) out[j] = f[j];
        } else if constexpr (T == DType::f16) {
            const __half* h = reinterpret_cast<const __half*>(&raw);
#pragma unroll
            for (int j = 0; j < 8; ++j) out[j] = __half2float(h[j]);
        } else {
            const __nv_bfloat16* h = reinterpret_cast<const __nv_bfloat16*>(&raw);
#pragma unroll
            for (int j = 0; j < 8; ++j) out[j] = __bfloat162float(h[j]);
        }
    }
};

// Whether the GEMV may read w in 16-byte chunks: whole chunks per row and rows at 16-byte
// boundaries (split types always are; plain types when n_in allows).
inline bool reads_in_chunks(const DeviceMatrix& w) {
    if (split_on_device(w.type)) return true;
    const int64_t element = w.type == DType::f32 ? 4 : 2;
    return (w.n_in * element) % 16 == 0 && w.row_bytes % 16 == 0 && reinterpret_cast<uintptr_t>(w.data) % 16 == 0;
}

__host__ __device__ inline int64_t blocks_per_row(int64_t n_in) { return (n_in + kBlock - 1) / kBlock; }

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
