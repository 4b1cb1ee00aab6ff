// Repacking GGUF blocks into the split quants/scales layout, and reading rows back.
#include "kernels/cpu/packed_matrix.h"

#include <immintrin.h>

#include <cstring>
#include <new>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/half_convert.h"
#include "tensor/dequantize.h"
#include "tensor/quant_blocks.h"

namespace workbench {
using quant::BlockQ4_0;
using quant::BlockQ4_1;
using quant::BlockQ8_0;

namespace {

// One GGUF block's quants in element order (4-bit: 0..15, q8_0: signed), its scale and offset.
struct BlockValues {
    int q[32];
    uint16_t d = 0, m = 0;
};

BlockValues read_block(DType type, const uint8_t* row, int64_t b) {
    BlockValues v;
    if (type == DType::q8_0) {
        const auto* blk = reinterpret_cast<const BlockQ8_0*>(row) + b;
        for (int j = 0; j < 32; ++j) v.q[j] = blk->qs[j];
        v.d = blk->d;
        return v;
    }
    const uint8_t* qs;
    if (type == DType::q4_0) {
        const auto* blk = reinterpret_cast<const BlockQ4_0*>(row) + b;
        qs = blk->qs;
        v.d = blk->d;
    } else {
        const auto* blk = reinterpret_cast<const BlockQ4_1*>(row) + b;
        qs = blk->qs;
        v.d = blk->d;
        v.m = blk->m;
    }
    // GGUF: byte j holds elements j (low nibble) and j + 16 (high nibble).
    for (int j = 0; j < 16; ++j) {
        v.q[j] = qs[j] & 0x0F;
        v.q[j + 16] = qs[j] >> 4;
    }
    return v;
}

// Row groups (see packed_matrix.h), one group's block at a time so the writes stay within a few
// cache lines; padding rows stay zero.
void pack_row_groups(const WeightTensor& w, PackedMatrix& out) {
    const int64_t block_bytes = group_block_bytes(out.layout);
    const int64_t quant_bytes = group_quant_bytes(out.layout);
    for (int64_t g = 0; g * 8 < w.n_out; ++g) {
        const int rows = static_cast<int>(w.n_out - g * 8 < 8 ? w.n_out - g * 8 : 8);
        for (int64_t b = 0; b < out.n_blocks; ++b) {
            uint8_t* block = out.owned.get() + g * out.row_bytes + b * block_bytes;
            auto* scales = reinterpret_cast<uint16_t*>(block + quant_bytes);
            // A GGUF 4-bit byte j holds elements j and j + 16: exactly byte j of the group's
            // registers (elements 4k..4k+3 low, 16+4k.. high), so 4-bit rows copy 4 bytes at a time.
            for (int i = 0; i < rows; ++i) {
                const uint8_t* row = w.row(g * 8 + i);
                const uint8_t* qs;
                if (w.type == DType::q8_0) {
                    const auto* blk = reinterpret_cast<const BlockQ8_0*>(row) + b;
                    qs = reinterpret_cast<const uint8_t*>(blk->qs);
                    scales[i] = blk->d;
                } else if (w.type == DType::q4_0) {
                    const auto* blk = reinterpret_cast<const BlockQ4_0*>(row) + b;
                    qs = blk->qs;
                    scales[i] = blk->d;
                } else {
                    const auto* blk = reinterpret_cast<const BlockQ4_1*>(row) + b;
                    qs = blk->qs;
                    scales[i] = blk->d;
                    scales[8 + i] = blk->m;
                }
                for (int64_t k = 0; k < quant_bytes / 32; ++k) std::memcpy(block + k * 32 + i * 4, qs + k * 4, 4);
            }
        }
    }
}

// dst[c·8 + r] = src[r][k + c] for an 8 × 8 tile of 16-bit values (f16 row groups).
void transpose_8x8_u16(const uint16_t* const src[8], int64_t k, uint16_t* dst) {
    __m128i r[8], a[8], b[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[i] + k));
    for (int i = 0; i < 4; ++i) {
        a[2 * i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i)
        for (int h = 0; h < 2; ++h) {
            b[4 * i + 2 * h] = _mm_unpacklo_epi32(a[4 * i + h], a[4 * i + 2 + h]);
            b[4 * i + 2 * h + 1] = _mm_unpackhi_epi32(a[4 * i + h], a[4 * i + 2 + h]);
        }
    for (int c = 0; c < 4; ++c) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * c) * 8), _mm_unpacklo_epi64(b[c], b[4 + c]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * c + 1) * 8), _mm_unpackhi_epi64(b[c], b[4 + c]));
    }
}

}  // namespace

bool pack_matrix(const WeightTensor& w, PackedMatrix& out, PackFamily family) {
    if (family == PackFamily::for_this_cpu) family = cpu_allow_avx512() ? PackFamily::split_rows : PackFamily::row_groups;
    const bool groups = family == PackFamily::row_groups;
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
    if (out.layout == PackedLayout::f16 && groups) {
        out.layout = PackedLayout::f16x8;
        out.row_bytes = out.n_in * 16;
        out.n_bytes = static_cast<uint64_t>(out.row_bytes) * static_cast<uint64_t>((out.n_out + 7) / 8);
        out.owned.reset(new (std::nothrow) uint8_t[out.n_bytes]());
        if (!out.owned) return false;
        out.data = out.owned.get();
        for (int64_t g = 0; g * 8 < w.n_out; ++g) {
            uint16_t* group = reinterpret_cast<uint16_t*>(out.owned.get() + g * out.row_bytes);
            const int rows = static_cast<int>(w.n_out - g * 8 < 8 ? w.n_out - g * 8 : 8);
            const uint16_t* src[8];
            for (int i = 0; i < rows; ++i) src[i] = reinterpret_cast<const uint16_t*>(w.row(g * 8 + i));
            int64_t k = 0;
            if (rows == 8)
                for (; k + 8 <= out.n_in; k += 8) transpose_8x8_u16(src, k, group + k * 8);
            for (; k < out.n_in; ++k)
                for (int i = 0; i < rows; ++i) group[k * 8 + i] = src[i][k];
        }
        return true;
    }
    if (out.layout == PackedLayout::f16 || out.layout == PackedLayout::f32 || out.layout == PackedLayout::gguf_blocks) {
        out.data = w.data;
        out.row_bytes = static_cast<int64_t>(w.n_bytes / static_cast<uint64_t>(w.n_out));
        out.n_bytes = w.n_bytes;
        return true;
    }
    if (groups) {
        out.layout = w.type == DType::q4_0 ? PackedLayout::q4_0x8 : w.type == DType::q4_1 ? PackedLayout::q4_1x8 : PackedLayout::q8_0x8;
        out.row_bytes = out.n_blocks * group_block_bytes(out.layout);
        out.n_bytes = static_cast<uint64_t>(out.row_bytes) * static_cast<uint64_t>((out.n_out + 7) / 8);
    } else {
        out.n_bytes = static_cast<uint64_t>(out.row_bytes) * static_cast<uint64_t>(out.n_out);
    }
    out.owned.reset(new (std::nothrow) uint8_t[out.n_bytes]());
    if (!out.owned) return false;
    out.data = out.owned.get();
    if (groups) {
        pack_row_groups(w, out);
        return true;
    }
    for (int64_t r = 0; r < w.n_out; ++r) {
        uint8_t* q = out.owned.get() + r * out.row_bytes;
        auto* scales = const_cast<uint16_t*>(out.scales(r));
        for (int64_t b = 0; b < out.n_blocks; ++b) {
            const BlockValues v = read_block(w.type, w.row(r), b);
            scales[b] = v.d;
            if (w.type == DType::q8_0) {
                for (int j = 0; j < 32; ++j) q[b * 32 + j] = static_cast<uint8_t>(v.q[j] + 128);
                continue;
            }
            if (w.type == DType::q4_1) scales[out.n_blocks + b] = v.m;
            uint8_t* pair = q + (b / 2) * 32;
            const int shift = b % 2 == 0 ? 0 : 4;
            for (int j = 0; j < 32; ++j) pair[j] = static_cast<uint8_t>(pair[j] | (v.q[j] << shift));
        }
    }
    return true;
}

void packed_row_f32(const PackedMatrix& m, int64_t row, float* out) {
    if (m.layout == PackedLayout::f16x8) {
        const auto* group = reinterpret_cast<const uint16_t*>(m.data + (row / 8) * m.row_bytes);
        for (int64_t k = 0; k < m.n_in; ++k) out[k] = half_to_float(group[k * 8 + row % 8]);
        return;
    }
    if (m.layout == PackedLayout::gguf_blocks || m.layout == PackedLayout::f16 || m.layout == PackedLayout::f32) {
        dequantize_row(m.type, m.data + row * m.row_bytes, out, m.n_in);
        return;
    }
    if (is_row_grouped(m.layout)) {
        const int i = static_cast<int>(row % 8);
        const int64_t block_bytes = group_block_bytes(m.layout);
        for (int64_t b = 0; b < m.n_blocks; ++b) {
            const uint8_t* block = m.data + (row / 8) * m.row_bytes + b * block_bytes;
            const auto* scales = reinterpret_cast<const uint16_t*>(block + group_quant_bytes(m.layout));
            const float scale = half_to_float(scales[i]);
            const float offset = m.layout == PackedLayout::q4_1x8 ? half_to_float(scales[8 + i]) : 0.0f;
            const int bias = m.layout == PackedLayout::q4_0x8 ? 8 : 0;
            for (int j = 0; j < 32; ++j) out[b * 32 + j] = static_cast<float>(group_quant(m.layout, block, i, j) - bias) * scale + offset;
        }
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
