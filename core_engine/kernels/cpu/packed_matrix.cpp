// Repacking GGUF blocks into the split quants/scales layout, and reading rows back.
#include "kernels/cpu/packed_matrix.h"

#include <cstring>
#include <new>

#include "kernels/cpu/half_convert.h"
#include "tensor/dequantize.h"
#include "tensor/quant_blocks.h"

namespace workbench {
using quant::BlockQ4_0;
using quant::BlockQ4_1;
using quant::BlockQ8_0;

bool pack_matrix(const WeightTensor& w, PackedMatrix& out) {
    out = PackedMatrix{};
    out.type = w.type;
    out.n_in = w.n_in;
    out.n_out = w.n_out;
    out.n_blocks = w.n_in / 32;
    switch (w.type) {
        case DType::q4_0: out.layout = PackedLayout::q4_0; out.row_bytes = out.quant_bytes() + out.n_blocks * 2; break;
        case DType::q4_1: out.layout = PackedLayout::q4_1; out.row_bytes = out.quant_bytes() + out.n_blocks * 4; break;
        case DType::q8_0: out.layout = PackedLayout::q8_0; out.row_bytes = out.quant_bytes() + out.n_blocks * 2; break;
        case DType::f16: out.layout = PackedLayout::f16; break;
        case DType::f32: out.layout = PackedLayout::f32; break;
        default: out.layout = PackedLayout::gguf_blocks; break;
    }
    if (out.layout == PackedLayout::f16 || out.layout == PackedLayout::f32 || out.layout == PackedLayout::gguf_blocks) {
        out.data = w.data;
        out.row_bytes = static_cast<int64_t>(w.n_bytes / static_cast<uint64_t>(w.n_out));
        out.n_bytes = w.n_bytes;
        return true;
    }
    out.n_bytes = static_cast<uint64_t>(out.row_bytes) * static_cast<uint64_t>(out.n_out);
    out.owned.reset(new (std::nothrow) uint8_t[out.n_bytes]());
    if (!out.owned) return false;
    out.data = out.owned.get();
    for (int64_t r = 0; r < w.n_out; ++r) {
        uint8_t* q = out.owned.get() + r * out.row_bytes;
        auto* scales = const_cast<uint16_t*>(out.scales(r));
        for (int64_t b = 0; b < out.n_blocks; ++b) {
            if (w.type == DType::q4_0 || w.type == DType::q4_1) {
                const uint8_t* qs;
                if (w.type == DType::q4_0) {
                    const auto* blk = reinterpret_cast<const BlockQ4_0*>(w.row(r)) + b;
                    qs = blk->qs;
                    scales[b] = blk->d;
                } else {
                    const auto* blk = reinterpret_cast<const BlockQ4_1*>(w.row(r)) + b;
                    qs = blk->qs;
                    scales[b] = blk->d;
                    scales[out.n_blocks + b] = blk->m;
                }
                // GGUF: byte j holds elements j (low nibble) and j + 16 (high nibble).
                uint8_t* pair = q + (b / 2) * 32;
                const int shift = b % 2 == 0 ? 0 : 4;
                for (int j = 0; j < 16; ++j) {
                    pair[j] |= static_cast<uint8_t>((qs[j] & 0x0F) << shift);
                    pair[j + 16] |= static_cast<uint8_t>((qs[j] >> 4) << shift);
                }
            } else {
                const auto* blk = reinterpret_cast<const BlockQ8_0*>(w.row(r)) + b;
                for (int j = 0; j < 32; ++j) q[b * 32 + j] = static_cast<uint8_t>(blk->qs[j] + 128);
                scales[b] = blk->d;
            }
        }
    }
    return true;
}

void packed_row_f32(const PackedMatrix& m, int64_t row, float* out) {
    if (m.layout == PackedLayout::gguf_blocks || m.layout == PackedLayout::f16 || m.layout == PackedLayout::f32) {
        dequantize_row(m.type, m.data + row * m.row_bytes, out, m.n_in);
        return;
    }
    const uint8_t* q = m.quants(row);
    const uint16_t* d = m.scales(row);
    for (int64_t b = 0; b < m.n_blocks; ++b) {
        const float scale = half_to_float(d[b]);
        float* y = out + b * 32;
        if (m.layout == PackedLayout::q8_0) {
            for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<int>(q[b * 32 + j]) - 128) * scale;
            continue;
        }
        const float offset = m.layout == PackedLayout::q4_1 ? half_to_float(m.offsets(row)[b]) : 0.0f;
        const int bias = m.layout == PackedLayout::q4_0 ? 8 : 0;
        for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(packed_nibble(q, b, j) - bias) * scale + offset;
    }
}

}  // namespace workbench
