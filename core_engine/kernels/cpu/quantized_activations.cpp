// Activation quantization through the reference Q8_1 quantizer, so the values are exactly what
// llama.cpp's kernels see, scattered into the split layout.
#include "kernels/cpu/quantized_activations.h"

#include <cstring>

#include "kernels/cpu/half_convert.h"
#include "tensor/dequantize.h"

namespace workbench {
namespace {

#pragma pack(push, 1)
struct BlockQ8_1 { uint16_t d, s; int8_t qs[32]; };
#pragma pack(pop)

}  // namespace

void resize_activations(QuantizedActivations& a, int64_t n_tokens, int64_t n_in) {
    a.n_tokens = n_tokens;
    a.n_in = n_in;
    a.n_blocks = n_in / 32;
    a.block_stride = (a.n_blocks + 15) / 16 * 16;
    const size_t nb = static_cast<size_t>(n_tokens * a.block_stride);
    a.qs.resize(static_cast<size_t>(n_tokens * n_in) + 64);
    // Padding lanes must stay zero: assign, not resize, when the shape changes.
    if (a.d.size() != nb) {
        a.d.assign(nb, 0.0f);
        a.s.assign(nb, 0.0f);
        a.sum_q.assign(nb, 0.0f);
    }
}

void quantize_activations(const float* x, int64_t t0, int64_t t1, QuantizedActivations& a) {
    BlockQ8_1 block;
    for (int64_t t = t0; t < t1; ++t) {
        const float* xt = x + t * a.n_in;
        int8_t* q = a.qs.data() + t * a.n_in;
        float* d = a.d.data() + t * a.block_stride;
        float* s = a.s.data() + t * a.block_stride;
        float* sum_q = a.sum_q.data() + t * a.block_stride;
        for (int64_t b = 0; b < a.n_blocks; ++b) {
            quantize_row(DType::q8_1, xt + b * 32, &block, 32);
            std::memcpy(q + b * 32, block.qs, 32);
            int sum = 0;
            for (int j = 0; j < 32; ++j) sum += block.qs[j];
            d[b] = half_to_float(block.d);
            s[b] = half_to_float(block.s);
            sum_q[b] = static_cast<float>(sum);
        }
    }
}

}  // namespace workbench
