// Activations quantized to 8 bits per 32-value block, once per matmul input, in the split layout
// the SIMD kernels read: int8 quants per token, then per block the scale d (f16-rounded, as
// Q8_0/Q8_1 store it), s = d·Σq (f16-rounded, Q8_1's offset term) and Σq; and Σq of each
// 16-element half, for the Q2_K/Q3_K kernels, whose offsets change every 16 elements. Block
// arrays are padded with zeros to a multiple of 16 so kernels load 16 scales at once without masks.
#pragma once

#include <cstdint>
#include <vector>

namespace workbench {

struct QuantizedActivations {
    int64_t n_tokens = 0, n_in = 0, n_blocks = 0;
    int64_t block_stride = 0;     // n_blocks rounded up to 16
    std::vector<int8_t> qs;       // [n_tokens, n_in] (+64 bytes of padding)
    std::vector<float> d;         // [n_tokens, block_stride]
    std::vector<float> s;         // [n_tokens, block_stride]
    std::vector<float> sum_q;     // [n_tokens, block_stride]
    std::vector<int16_t> half_sum_q;  // [n_tokens, block_stride, 2]: Σq of elements 0..15, 16..31
};

// Sizes `a` for n_tokens × n_in (n_in a multiple of 32) and quantizes tokens [t0, t1) of x.
void resize_activations(QuantizedActivations& a, int64_t n_tokens, int64_t n_in);
void quantize_activations(const float* x, int64_t t0, int64_t t1, QuantizedActivations& a);
// Blocks [b0, b1) of token t, whose row starts at x_row (for a producer that writes a row in parts).
void quantize_activation_blocks(const float* x_row, int64_t t, int64_t b0, int64_t b1, QuantizedActivations& a);

}  // namespace workbench
