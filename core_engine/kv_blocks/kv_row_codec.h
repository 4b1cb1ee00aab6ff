// Converts one cached row (a head's head_dim values) between f32 and each KV element type, in the
// layouts kv_dtype.h describes. The attention kernel decodes with these; writes encode with them.
// q8_0 and q4_0 round exactly as ggml's reference quantizers; fp8 is e4m3 with one fp16 scale per
// 32 values (scale = amax / 448, so the largest value maps to e4m3's largest finite); q2_0 searches
// each block's step for the least squared error.
#pragma once

#include <cstdint>

#include "kv_blocks/kv_dtype.h"

namespace workbench {

// `n` must be a multiple of the type's block_values (validate_kv_cache_config guarantees it).
void kv_encode_row(KvDType type, const float* src, uint8_t* dst, int64_t n);
void kv_decode_row(KvDType type, const uint8_t* src, float* dst, int64_t n);

// e4m3 (bias 7, no infinities, ±448 max, NaN for 0x7f/0xff) ↔ float; encoding rounds to nearest
// even and saturates at ±448.
uint8_t float_to_e4m3(float f);
float e4m3_to_float(uint8_t b);

// In-place orthonormal Walsh–Hadamard transform of `n` values (n a power of two). Rotating both
// queries and keys by it leaves every dot product unchanged but spreads outliers across a block,
// so 4-bit keys lose far less.
void hadamard_rotate(float* x, int64_t n);

}  // namespace workbench
