// Element types the paged KV cache can store, chosen separately for K and V, with their block
// layouts so byte accounting counts scales too. Names, sizes and spec parsing only: converting
// values to these layouts is the kernels' job, never this file's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "workbench/status.h"

namespace workbench {

// Storage layouts (a "block" is the unit that shares one scale; blocks never span heads):
//   f32   4 bytes a value
//   f16   2 bytes a value (IEEE binary16)
//   bf16  2 bytes a value (the high half of an f32)
//   q8_0  32 values in 34 bytes: fp16 scale d, then 32 int8 q; value = d * q
//   q4_0  32 values in 18 bytes: fp16 scale d, then 16 bytes of nibbles, value i in the low
//         nibble of byte i and value i + 16 in the high one; value = d * (nibble - 8) (ggml's)
//   fp8   32 values in 34 bytes: fp16 scale d, then 32 e4m3 bytes (1 sign, 4 exponent bits with
//         bias 7, 3 mantissa bits, no infinities, max 448); value = d * e4m3
//   q2_0  32 values in 10 bytes: fp16 step d, then 8 bytes of 2-bit codes c, value j + 8·i in
//         bits 2i..2i+1 of byte j; value = d * (c - 1.5) (four levels, none at zero). Ours, not
//         ggml's: d is searched per block for the least squared error.
enum class KvDType : uint8_t { f32, f16, bf16, q8_0, q4_0, fp8, q2_0 };

struct KvDTypeLayout {
    KvDType type;
    std::string_view name;    // "q8_0": as the --kv-type flag spells it
    uint32_t block_values;    // values sharing one scale (1 for plain types)
    uint32_t block_bytes;     // bytes of one block, scale included
};

// The element types for keys and for values; each may differ (keys are often kept more precise).
// `recent` > 0 (a quantized K or V only): each query also reads its last `recent` tokens in f16
// (KIVI's full-precision residual), from a per-sequence ring beside the quantized blocks; at most
// kMaxRecentKvTokens (workbench/attention.h).
struct KvTypes {
    KvDType k = KvDType::f16;
    KvDType v = KvDType::f16;
    int32_t recent = 0;
    friend bool operator==(const KvTypes&, const KvTypes&) = default;
};

const KvDTypeLayout& kv_dtype_layout(KvDType type);
// Rows of these types, keys and values, are stored Hadamard-rotated (the 4- and 2-bit ones:
// rotation spreads a row's outlier channels, which those few levels would otherwise clip; the
// queries turn alike, and the attention output turns back).
constexpr bool kv_type_rotates_rows(KvDType type) { return type == KvDType::q4_0 || type == KvDType::q2_0; }
std::string_view kv_dtype_name(KvDType type);

// Bytes taken by `n_values` values stored contiguously in one type. A trailing partial block is
// stored padded to a whole block (its scale still has to exist), so this rounds up.
uint64_t kv_bytes(KvDType type, uint64_t n_values);

// Parses a --kv-type spec: one type for both ("f16"), or "k=q8_0,v=q4_0" (both parts required,
// either order, case and spaces ignored), either followed by ",recent=N". Fails with
// invalid_argument naming the bad part and the accepted names.
Result<KvTypes> parse_kv_types(std::string_view spec);

// The spec that parses back to `types`: "f16" when K and V agree, else "k=q8_0,v=q4_0"; then
// ",recent=N" when set.
std::string kv_types_name(const KvTypes& types);

}  // namespace workbench
