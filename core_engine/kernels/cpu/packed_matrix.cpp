// Repacking GGUF blocks into the split quants/scales layout, and reading rows back.
#include "kernels/cpu/packed_matrix.h"

#include <immintrin.h>

#include <cstring>
#include <new>

#include "kernels/cpu/cpu_features.h"
#include "tensor/half_convert.h"
#include "tensor/dequantize.h"
#include "tensor/quant_blocks.h"

namespace workbench {
using quant::BlockMXFP4;
using quant::BlockQ4_0;
using quant::e8m0_half;
using quant::BlockQ4_1;
using quant::BlockQ8_0;
using quant::BlockQ5_0;
using quant::BlockQ5_1;
using quant::BlockQ4_K;
using quant::BlockQ5_K;
using quant::BlockQ6_K;
using quant::BlockQ2_K;
using quant::BlockQ3_K;
using quant::k4_scale_min;
using quant::unpack_q3_k_scales;

namespace {

// One 32-element block of a quantized row in element order, as the packed layouts store it:
// quants (4-bit: 0..15; Q8_0 signed; 5-bit: 0..31; Q6_K q − 32), and the scale and
// offset as fp16 bits (Q4_0/Q4_1/Q8_0/Q5_0/Q5_1). The K-quants keep their integer sub-scales (Q6_K:
// one per half) and mins with the super-block's d and dmin as fp16 bits; Q3_K's quants are q + 4.
struct GroupBlockSource {
    int q[32];
    uint16_t d16 = 0, m16 = 0;
    int sub_scale[2] = {0, 0}, sub_min[2] = {0, 0};
};

GroupBlockSource extract_block(DType type, const uint8_t* row, int64_t b) {
    GroupBlockSource v;
    auto five_bit = [&](const auto& blk) {
        uint32_t qh;
        std::memcpy(&qh, blk.qh, sizeof qh);
        for (int j = 0; j < 16; ++j) {
            v.q[j] = (blk.qs[j] & 0x0F) | static_cast<int>(((qh >> j) & 1u) << 4);
            v.q[j + 16] = (blk.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
        }
        v.d16 = blk.d;
    };
    if (type == DType::q8_0) {
        const auto& blk = reinterpret_cast<const BlockQ8_0*>(row)[b];
        for (int j = 0; j < 32; ++j) v.q[j] = blk.qs[j];
        v.d16 = blk.d;
    } else if (type == DType::q4_0 || type == DType::q4_1) {
        const uint8_t* qs;
        if (type == DType::q4_0) {
            const auto& blk = reinterpret_cast<const BlockQ4_0*>(row)[b];
            qs = blk.qs, v.d16 = blk.d;
        } else {
            const auto& blk = reinterpret_cast<const BlockQ4_1*>(row)[b];
            qs = blk.qs, v.d16 = blk.d, v.m16 = blk.m;
        }
        // GGUF: byte j holds elements j (low nibble) and j + 16 (high nibble).
        for (int j = 0; j < 16; ++j) {
            v.q[j] = qs[j] & 0x0F;
            v.q[j + 16] = qs[j] >> 4;
        }
    } else if (type == DType::q5_0) {
        five_bit(reinterpret_cast<const BlockQ5_0*>(row)[b]);
    } else if (type == DType::q5_1) {
        const auto& blk = reinterpret_cast<const BlockQ5_1*>(row)[b];
        five_bit(blk);
        v.m16 = blk.m;
    } else if (type == DType::q6_k) {  // 32 elements of super-block b / 8: pass k of half h
        const auto& blk = reinterpret_cast<const BlockQ6_K*>(row)[b / 8];
        const int h = static_cast<int>(b % 8) / 4, k = static_cast<int>(b % 4);
        v.sub_scale[0] = blk.scales[8 * h + 2 * k], v.sub_scale[1] = blk.scales[8 * h + 2 * k + 1], v.d16 = blk.d;   // q6_kx8's
        for (int l = 0; l < 32; ++l) {
            const int low = (blk.ql[64 * h + l + 32 * (k % 2)] >> (4 * (k / 2))) & 0x0F;
            const int high = (blk.qh[32 * h + l] >> (2 * k)) & 3;
            v.q[l] = (low | (high << 4)) - 32;
        }
    } else if (type == DType::q2_k || type == DType::q3_k) {
        // Pass b % 4 of half (b % 8) / 4 (dequantize.cpp): element l at bits 2·pass of qs[32·half + l].
        const int sub = static_cast<int>(b % 8), half = sub / 4, pass = sub % 4;
        const uint8_t* qs;
        if (type == DType::q2_k) {
            const auto& blk = reinterpret_cast<const BlockQ2_K*>(row)[b / 8];
            qs = blk.qs + 32 * half, v.d16 = blk.d, v.m16 = blk.dmin;
            for (int h = 0; h < 2; ++h) {
                v.sub_scale[h] = blk.scales[2 * sub + h] & 0x0F;
                v.sub_min[h] = blk.scales[2 * sub + h] >> 4;
            }
            for (int l = 0; l < 32; ++l) v.q[l] = (qs[l] >> (2 * pass)) & 3;
        } else {
            const auto& blk = reinterpret_cast<const BlockQ3_K*>(row)[b / 8];
            qs = blk.qs + 32 * half, v.d16 = blk.d;
            int scales[16];
            unpack_q3_k_scales(blk.scales, scales);
            v.sub_scale[0] = scales[2 * sub], v.sub_scale[1] = scales[2 * sub + 1];
            for (int l = 0; l < 32; ++l) v.q[l] = ((qs[l] >> (2 * pass)) & 3) | (((blk.hmask[l] >> sub) & 1) << 2);
        }
    } else {  // q4_k, q5_k: sub-block b % 8 of super-block b / 8
        const int sub = static_cast<int>(b % 8);
        const uint8_t *scales, *qs, *qh = nullptr;
        uint16_t d, dmin;
        if (type == DType::q4_k) {
            const auto& blk = reinterpret_cast<const BlockQ4_K*>(row)[b / 8];
            scales = blk.scales, qs = blk.qs, d = blk.d, dmin = blk.dmin;
        } else {
            const auto& blk = reinterpret_cast<const BlockQ5_K*>(row)[b / 8];
            scales = blk.scales, qs = blk.qs, qh = blk.qh, d = blk.d, dmin = blk.dmin;
        }
        uint8_t sc, m;
        k4_scale_min(sub, scales, &sc, &m);
        v.sub_scale[0] = sc, v.sub_min[0] = m, v.d16 = d, v.m16 = dmin;   // as q4_kx8 and q5_kx8 keep them
        for (int j = 0; j < 32; ++j)
            v.q[j] = ((qs[32 * (sub / 2) + j] >> (4 * (sub % 2))) & 0x0F) | (qh ? ((qh[j] >> sub) & 1) << 4 : 0);
    }
    return v;
}

// Row i of group block `block` (block b of its group).
void write_group_row(PackedLayout l, uint8_t* block, int64_t b, int i, const GroupBlockSource& v) {
    if (group_crumbs(l)) {
        for (int j = 0; j < 32; ++j) {
            const int at = i * 4 + j % 4;
            block[(j / 16) * 32 + at] |= static_cast<uint8_t>((v.q[j] & 3) << (2 * ((j % 16) / 4)));
            if (l == PackedLayout::q3_kx8) block[64 + at] |= static_cast<uint8_t>((v.q[j] >> 2) << (j / 4));
        }
        uint8_t* scales = block + group_quant_bytes(l);
        for (int h = 0; h < 2; ++h)
            scales[2 * i + h] = l == PackedLayout::q2_kx8 ? static_cast<uint8_t>(v.sub_scale[h] | (v.sub_min[h] << 4))
                                                          : static_cast<uint8_t>(static_cast<int8_t>(v.sub_scale[h]));
        if (b % 8 == 0) {  // the super-block's d and dmin, once
            uint8_t* super = super_block_scales(l, block, b);
            std::memcpy(super + 2 * i, &v.d16, 2);
            if (l == PackedLayout::q2_kx8) std::memcpy(super + 16 + 2 * i, &v.m16, 2);
        }
        return;
    }
    if (group_six_bits(l)) {   // q − 32 back to 0..63: its low 4 bits and its top 2 in their planes
        for (int j = 0; j < 32; ++j) {
            const int u = v.q[j] + 32;
            block[((j % 16) / 4) * 32 + i * 4 + j % 4] |= static_cast<uint8_t>(j < 16 ? (u & 0x0F) : (u & 0x0F) << 4);
            block[128 + (j / 16) * 32 + i * 4 + j % 4] |= static_cast<uint8_t>((u >> 4) << (2 * ((j / 4) % 4)));
        }
        uint8_t* scales = block + group_quant_bytes(l);
        scales[i] = static_cast<uint8_t>(static_cast<int8_t>(v.sub_scale[0]));
        scales[8 + i] = static_cast<uint8_t>(static_cast<int8_t>(v.sub_scale[1]));
        if (b % 8 == 0) std::memcpy(super_block_scales(l, block, b) + 2 * i, &v.d16, 2);
        return;
    }
    for (int j = 0; j < 32; ++j) {
        if (group_nibbles(l) || group_five_bits(l)) {
            const int low = v.q[j] & 0x0F;
            block[((j % 16) / 4) * 32 + i * 4 + j % 4] |= static_cast<uint8_t>(j < 16 ? low : low << 4);
            if (group_five_bits(l)) block[128 + i * 4 + j % 4] |= static_cast<uint8_t>((v.q[j] >> 4) << (j / 4));
        } else {
            block[(j / 4) * 32 + i * 4 + j % 4] = static_cast<uint8_t>(static_cast<int8_t>(v.q[j]));
        }
    }
    uint8_t* scales = block + group_quant_bytes(l);
    if (group_sub_mins(l)) {
        scales[i] = static_cast<uint8_t>(v.sub_scale[0]);
        scales[8 + i] = static_cast<uint8_t>(v.sub_min[0]);
        if (b % 8 == 0) {  // the super-block's d and dmin, once
            uint8_t* super = super_block_scales(l, block, b);
            std::memcpy(super + 2 * i, &v.d16, 2);
            std::memcpy(super + 16 + 2 * i, &v.m16, 2);
        }
    } else {
        std::memcpy(scales + 2 * i, &v.d16, 2);
        if (group_offsets(l)) std::memcpy(scales + 16 + 2 * i, &v.m16, 2);
    }
}

// Row groups (see packed_matrix.h), one group's block at a time so the writes stay within a few
// cache lines; padding rows stay zero.
void pack_row_groups(const WeightTensor& w, PackedMatrix& out) {
    const int64_t quant_bytes = group_quant_bytes(out.layout);
    for (int64_t g = 0; g * 8 < w.n_out; ++g) {
        const int rows = static_cast<int>(w.n_out - g * 8 < 8 ? w.n_out - g * 8 : 8);
        for (int64_t b = 0; b < out.n_blocks; ++b) {
            uint8_t* block = out.owned.get() + g * out.row_bytes + group_block_offset(out.layout, b);
            auto* scales = reinterpret_cast<uint16_t*>(block + quant_bytes);
            // A GGUF 4-bit byte j holds elements j and j + 16: exactly byte j of the group's
            // registers (elements 4k..4k+3 low, 16+4k.. high), so 4-bit rows copy 4 bytes at a time.
            if (w.type == DType::mxfp4) {  // Q4_0's nibble order, the exponent byte as the row's scale
                for (int i = 0; i < rows; ++i) {
                    const uint8_t* blk = w.row(g * 8 + i) + b * static_cast<int64_t>(sizeof(BlockMXFP4));
                    block[quant_bytes + i] = blk[0];
                    for (int64_t k = 0; k < quant_bytes / 32; ++k) std::memcpy(block + k * 32 + i * 4, blk + 1 + k * 4, 4);
                }
                continue;
            }
            if (!(w.type == DType::q8_0 || w.type == DType::q4_0 || w.type == DType::q4_1)) {
                for (int i = 0; i < rows; ++i) write_group_row(out.layout, block, b, i, extract_block(w.type, w.row(g * 8 + i), b));
                continue;
            }
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

CrumbScales group_crumb_scales(PackedLayout l, const uint8_t* block, int64_t b, int i) {
    CrumbScales out;
    const uint8_t* scales = block + group_quant_bytes(l);
    for (int h = 0; h < 2; ++h) {
        if (l == PackedLayout::q2_kx8) {
            out.sc[h] = scales[2 * i + h] & 0x0F;
            out.m[h] = scales[2 * i + h] >> 4;
        } else {
            out.sc[h] = static_cast<int8_t>(scales[2 * i + h]);
        }
    }
    const uint8_t* super = super_block_scales(l, block, b);
    uint16_t h16;
    std::memcpy(&h16, super + 2 * i, 2);
    out.d = half_to_float(h16);
    if (l == PackedLayout::q2_kx8) {
        std::memcpy(&h16, super + 16 + 2 * i, 2);
        out.dmin = half_to_float(h16);
    }
    return out;
}

float group_scale(PackedLayout l, const uint8_t* block, int64_t b, int i, int part) {
    const uint8_t* at = block + group_quant_bytes(l) + part * group_scale_bytes(l);
    if (group_e8m0_scales(l)) return e8m0_half(at[i]);
    if (group_sub_mins(l)) {  // d·sc, or −dmin·m: the products the kernels form
        uint16_t h16;
        std::memcpy(&h16, super_block_scales(l, block, b) + 16 * part + 2 * i, 2);
        const float product = half_to_float(h16) * static_cast<float>(at[i]);
        return part == 0 ? product : -product;
    }
    if (group_six_bits(l)) {  // d·sc of either half
        uint16_t h16;
        std::memcpy(&h16, super_block_scales(l, block, b) + 2 * i, 2);
        return half_to_float(h16) * static_cast<float>(static_cast<int8_t>(at[i]));
    }
    uint16_t h;
    std::memcpy(&h, at + 2 * i, 2);
    return half_to_float(h);
}

bool pack_matrix(const WeightTensor& w, PackedMatrix& out, PackFamily family) {
    if (family == PackFamily::for_this_cpu) family = cpu_allow_avx512() ? PackFamily::split_rows : PackFamily::row_groups;
    const bool groups = family == PackFamily::row_groups;
    out = PackedMatrix{};
    out.type = w.type;
    out.n_in = w.n_in;
    out.n_out = w.n_out;
    out.n_blocks = w.n_in / 32;
    if (groups) {
        switch (w.type) {
            case DType::q4_0: out.layout = PackedLayout::q4_0x8; break;
            case DType::q4_1: out.layout = PackedLayout::q4_1x8; break;
            case DType::q8_0: out.layout = PackedLayout::q8_0x8; break;
            case DType::q5_0: out.layout = PackedLayout::q5_0x8; break;
            case DType::q5_1: out.layout = PackedLayout::q5_1x8; break;
            case DType::q4_k: out.layout = PackedLayout::q4_kx8; break;
            case DType::q5_k: out.layout = PackedLayout::q5_kx8; break;
            case DType::q6_k: out.layout = PackedLayout::q6_kx8; break;
            case DType::q2_k: out.layout = PackedLayout::q2_kx8; break;
            case DType::q3_k: out.layout = PackedLayout::q3_kx8; break;
            case DType::f16: out.layout = PackedLayout::f16x8; break;
            case DType::bf16: out.layout = PackedLayout::bf16x8; break;
            case DType::f32: out.layout = PackedLayout::f32; break;
            case DType::mxfp4: out.layout = PackedLayout::mxfp4x8; break;
            default: out.layout = PackedLayout::gguf_blocks; break;
        }
    } else switch (w.type) {
        case DType::q4_0: out.layout = PackedLayout::q4_0; out.row_bytes = out.quant_bytes() + out.n_blocks * 2; break;
        case DType::q4_1: out.layout = PackedLayout::q4_1; out.row_bytes = out.quant_bytes() + out.n_blocks * 4; break;
        case DType::q8_0: out.layout = PackedLayout::q8_0; out.row_bytes = out.quant_bytes() + out.n_blocks * 2; break;
        case DType::f16: out.layout = PackedLayout::f16; break;
        case DType::f32: out.layout = PackedLayout::f32; break;
        default: out.layout = PackedLayout::gguf_blocks; break;
    }
    if (out.layout == PackedLayout::f16x8 || out.layout == PackedLayout::bf16x8) {
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
        out.row_bytes = group_row_bytes(out.layout, out.n_blocks);
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
            const GroupBlockSource v = extract_block(w.type, w.row(r), b);
            scales[b] = v.d16;
            if (w.type == DType::q8_0) {
                for (int j = 0; j < 32; ++j) q[b * 32 + j] = static_cast<uint8_t>(v.q[j] + 128);
                continue;
            }
            if (w.type == DType::q4_1) scales[out.n_blocks + b] = v.m16;
            uint8_t* pair = q + (b / 2) * 32;
            const int shift = b % 2 == 0 ? 0 : 4;
            for (int j = 0; j < 32; ++j) pair[j] = static_cast<uint8_t>(pair[j] | (v.q[j] << shift));
        }
    }
    return true;
}

void packed_row_f32(const PackedMatrix& m, int64_t row, float* out) {
    if (m.layout == PackedLayout::f16x8 || m.layout == PackedLayout::bf16x8) {
        const auto* group = reinterpret_cast<const uint16_t*>(m.data + (row / 8) * m.row_bytes);
        for (int64_t k = 0; k < m.n_in; ++k) out[k] = sixteen_bit_to_float(m.layout, group[k * 8 + row % 8]);
        return;
    }
    if (m.layout == PackedLayout::gguf_blocks || m.layout == PackedLayout::f16 || m.layout == PackedLayout::f32) {
        dequantize_row(m.type, m.data + row * m.row_bytes, out, m.n_in);
        return;
    }
    if (is_row_grouped(m.layout)) {
        const int i = static_cast<int>(row % 8);
        for (int64_t b = 0; b < m.n_blocks; ++b) {
            const uint8_t* block = m.data + (row / 8) * m.row_bytes + group_block_offset(m.layout, b);
            if (group_crumbs(m.layout)) {  // dequantize.cpp's dl·q − ml with dl = d·sc, ml = dmin·m
                const CrumbScales c = group_crumb_scales(m.layout, block, b, i);
                for (int j = 0; j < 32; ++j) {
                    const float dl = c.d * static_cast<float>(c.sc[j / 16]), ml = c.dmin * static_cast<float>(c.m[j / 16]);
                    out[b * 32 + j] = dl * static_cast<float>(group_quant(m.layout, block, i, j)) - ml;
                }
                continue;
            }
            const float scale = group_scale(m.layout, block, b, i, 0);
            const float part1 = group_offsets(m.layout) || group_half_scales(m.layout) ? group_scale(m.layout, block, b, i, 1) : 0.0f;
            const float offset = group_offsets(m.layout) ? part1 : 0.0f;
            const int bias = group_quant_bias(m.layout);
            for (int j = 0; j < 32; ++j) {
                const float s = group_half_scales(m.layout) && j >= 16 ? part1 : scale;
                out[b * 32 + j] = static_cast<float>(group_value(m.layout, block, i, j) - bias) * s + offset;
            }
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
