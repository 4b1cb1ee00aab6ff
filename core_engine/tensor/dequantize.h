// Reference (scalar) conversions between the GGUF block formats and float32. These are the
// ground truth the SIMD kernels are tested against, so they favour clarity over speed.
// Layouts follow ggml's block structs exactly (little-endian, packed).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/dtype.h"

namespace workbench {

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);           // round to nearest even, as numpy/ggml
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);           // round to nearest even, NaN kept quiet

// Converts `n_elements` (a multiple of the type's block size) from `src` to float32 in `dst`.
// Returns false when the type has no dequantizer (dtype_traits(type).dequantizable is false).
bool dequantize_row(DType type, const void* src, float* dst, int64_t n_elements);

// Reference quantizers, matching ggml's *_ref functions bit for bit: used for activation
// quantization checks, test fixtures and (later) requantizing models. Returns false for types
// without a quantizer. `n_elements` must be a multiple of the block size.
bool quantize_row(DType type, const float* src, void* dst, int64_t n_elements);

}  // namespace workbench
