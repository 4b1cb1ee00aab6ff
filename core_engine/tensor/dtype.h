// Tensor element types as GGUF numbers them, with their block layout (elements per block, bytes
// per block). Types the engine cannot read are still named so errors can say what was found.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace workbench {

enum class DType : uint32_t {
    f32 = 0,
    f16 = 1,
    q4_0 = 2,
    q4_1 = 3,
    q5_0 = 6,
    q5_1 = 7,
    q8_0 = 8,
    q8_1 = 9,
    q2_k = 10,
    q3_k = 11,
    q4_k = 12,
    q5_k = 13,
    q6_k = 14,
    q8_k = 15,
    i8 = 24,
    i16 = 25,
    i32 = 26,
    i64 = 27,
    f64 = 28,
    bf16 = 30,
    mxfp4 = 39,   // OCP microscaling FP4: 32 E2M1 values sharing an E8M0 exponent (gpt-oss's experts)
};

struct DTypeTraits {
    DType type;
    std::string_view name;      // "q4_1", as gguf and llama.cpp print it (lower case)
    uint32_t block_elements;    // elements per block (1 for plain types)
    uint32_t block_bytes;       // bytes per block
    bool dequantizable;         // the engine has a reference dequantizer for it
};

// Traits of a GGUF type number, or nullopt if the number is not a type this engine knows.
std::optional<DTypeTraits> dtype_traits(uint32_t raw_type);
const DTypeTraits& dtype_traits(DType type);
std::string_view dtype_name(DType type);
// Parses "q4_1", "Q4_1", "f16" ...; nullopt when unknown.
std::optional<DType> dtype_from_name(std::string_view name);

// Bytes taken by a row of `n_elements` elements; requires n_elements % block_elements == 0.
inline uint64_t dtype_row_bytes(const DTypeTraits& t, uint64_t n_elements) {
    return n_elements / t.block_elements * t.block_bytes;
}

constexpr int QK_K = 256;  // super-block size of the k-quants

}  // namespace workbench
