// Dot products between a quantized weight row and an activation row quantized to 8 bits
// (Q8_0 or Q8_1 blocks): integer multiply-adds per 32-element block, one float scale per block.
// This is how llama.cpp computes quantized matmuls, so our logits land close to its own.
// Each kernel has a scalar reference (the *_ref functions) that tests hold the SIMD path to.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace workbench {

// The activation format a weight type's integer dot product wants, or nullopt-like f32 when
// the weight type has no integer kernel yet (the matmul then dequantizes rows to float).
DType activation_type_for(DType weight_type);

// n is the row length (a multiple of 32). Pointers are to packed GGUF blocks.
float dot_q4_0_q8_0(const void* w, const void* a, int64_t n);
float dot_q4_1_q8_1(const void* w, const void* a, int64_t n);
float dot_q8_0_q8_0(const void* w, const void* a, int64_t n);

float dot_q4_0_q8_0_ref(const void* w, const void* a, int64_t n);
float dot_q4_1_q8_1_ref(const void* w, const void* a, int64_t n);
float dot_q8_0_q8_0_ref(const void* w, const void* a, int64_t n);

// Float dot product (AVX2/FMA when built for it).
float dot_f32(const float* a, const float* b, int64_t n);

}  // namespace workbench
