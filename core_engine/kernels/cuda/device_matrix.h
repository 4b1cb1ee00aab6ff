// A matrix as the CUDA backend keeps it on the device: its rows in their GGUF block format
// (f32, f16, bf16, q4_0, q4_1, q8_0; other types are converted to f16 when uploaded), read by the
// kernels through one block decoder (block_decode.cuh). No CUDA types: the backend's C++ side
// and the tests include it.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace workbench::cuda {

struct DeviceMatrix {
    DType type = DType::f32;
    const uint8_t* data = nullptr;   // device pointer, n_out rows of row_bytes
    int64_t n_in = 0, n_out = 0;
    int64_t row_bytes = 0;
};

// Whether the kernels read `type` in place (the rest are converted to f16 on upload).
inline bool kept_on_device(DType type) {
    return type == DType::f32 || type == DType::f16 || type == DType::bf16 || type == DType::q4_0 || type == DType::q4_1 ||
           type == DType::q8_0;
}

}  // namespace workbench::cuda
