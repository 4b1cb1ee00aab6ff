// A matrix as the CUDA backend keeps it on the device: its GGUF blocks (f32, f16, bf16, q4_0,
// q4_1, q8_0; other types are converted to f16 when uploaded), with the quantized types' blocks
// split in two arrays — every block's quants, then every block's scales — so a lane reads a
// block's quants with one 16-byte load (a GGUF block of 18 or 34 bytes is only 2-byte aligned).
// The bits are the file's; only where they sit differs. Kernels read it through block_decode.cuh.
// No CUDA types: the backend's C++ side and the tests include it.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace workbench::cuda {

struct DeviceMatrix {
    DType type = DType::f32;
    const uint8_t* data = nullptr;   // device pointer: n_out rows of row_bytes (the quants, for split types)
    int64_t n_in = 0, n_out = 0;
    int64_t row_bytes = 0;
    const uint8_t* scales = nullptr;   // split types: per row, per block, scale_bytes(type)
};

// Whether the kernels read `type` in place (the rest are converted to f16 on upload).
inline bool kept_on_device(DType type) {
    return type == DType::f32 || type == DType::f16 || type == DType::bf16 || type == DType::q4_0 || type == DType::q4_1 ||
           type == DType::q8_0;
}

// The quantized types kept split, and their parts per 32-element block.
constexpr bool split_on_device(DType type) { return type == DType::q4_0 || type == DType::q4_1 || type == DType::q8_0; }
constexpr int64_t quant_bytes(DType type) { return type == DType::q8_0 ? 32 : 16; }
constexpr int64_t scale_bytes(DType type) { return type == DType::q4_1 ? 4 : 2; }   // q4_1: d then m

// Where a matrix's parts sit in its device allocation (scales at a 256-byte boundary).
struct DeviceMatrixBytes {
    int64_t row_bytes = 0, scales_offset = 0, total = 0;
};
DeviceMatrixBytes device_matrix_bytes(DType type, int64_t n_in, int64_t n_out);
// Writes the device layout of `rows` (n_out GGUF rows of `type`, kept_on_device) into `out`
// (device_matrix_bytes(...).total bytes, host memory).
void to_device_layout(DType type, const uint8_t* rows, int64_t n_in, int64_t n_out, uint8_t* out);
// The matrix whose device layout starts at `device`.
DeviceMatrix device_matrix_at(DType type, const uint8_t* device, int64_t n_in, int64_t n_out);

}  // namespace workbench::cuda
