// Weight matrices repacked at load into the layouts our SIMD kernels stream. Two families:
//
// Row groups (the AVX2 kernels): rows are taken 8 at a time and, block by block (32 elements),
// their quants are interleaved 4 bytes per row, so a 256-bit register holds the same 4 elements
// of 8 rows and one broadcast of 4 activation bytes feeds all 8 (int8 multiply-adds then leave
// one row per 32-bit lane: one convert and one FMA per block serve 8 rows). A group's block is
// [quants][8 scales][8 offsets, where the type has them]. 4-bit layouts (q4_0x8, q4_1x8,
// q4_kx8): register k (32 bytes) holds elements 4k..4k+3 of each row in its low nibbles and
// 16+4k..16+4k+3 in its high nibbles. 5-bit layouts (q5_0x8, q5_1x8, q5_kx8) add a bit plane
// after them (32 bytes: bit s of byte 4i + e is the fifth bit of element 4s + e). Byte layout
// (q8_0x8): register j holds elements 4j..4j+3, signed. Scales and offsets are fp16 as the file
// has them, so each keeps its file's size (q4_0x8, q4_1x8, q5_0x8, q5_1x8, q8_0x8: 4.5, 5, 5.5, 6
// and 8.5 bits a weight). The K-quants keep their file's structure, the kernels forming
// d·sc (and −dmin·m) in registers: q4_kx8 has per block the 8 rows' 6-bit sub-scales and mins as
// bytes, and after every 8 blocks (a super-block) the 8 rows' fp16 d and dmin (144 bytes a
// block: 4.625 bits per weight, the file's 4.5 and its scales' bytes); q5_kx8 is q4_kx8 with the
// bit plane (176 bytes a block: 5.625 bits, the file's 5.5); q6_kx8 has Q6_K's quants as a 4-bit
// plane in the 4-bit layouts' registers and a 2-bit plane (register p, byte 4i + e, bits 2s: the
// top two bits of element 16p + 4s + e), unpacked to q − 32, its int8 scales per 16 elements and
// the super-block's fp16 d (208 bytes a block: 6.56 bits, the file's size). Every repacking is
// exact. f16x8 / bf16x8:
// for each element k in order, the 8 rows' 16-bit values, so one convert gives a vector of 8
// rows to multiply by a broadcast activation. A last partial group is padded with zero rows.
//
// 2-bit row groups (q2_kx8 for Q2_K, q3_kx8 for Q3_K; a sub-scale per 16 elements): the quants
// stay at 2 bits. Crumb plane register h (h = 0, 1: 32 bytes) holds elements 16h..16h+15, byte
// 4i + e of row i holding element 16h + 4s + e at bits 2s. q3_kx8 adds a bit plane (32 bytes):
// bit s of byte 4i + e is the third bit of element 4s + e, so its quant is (low | bit·4) − 4, as
// Q3_K's "set bit = no −4". The sub-scales stay small integers, one byte per 16 elements and
// row (byte 2i + h after the quants): Q2_K's sc | m << 4 as the file has it, Q3_K's scale − 32
// as int8. As in the file, 8 blocks make a super-block (256 elements), closed by the 8 rows' fp16
// d (and Q2_K's dmin). The kernels scale integer dot products by the sub-scales in integers and
// convert once per block. q2_kx8: 672 bytes per 8 × 256 weights = 2.625 bits per weight, the
// file's size; q3_kx8: 912 bytes = 3.5625 bits per weight (file: 3.4375; its 6-bit scales take a
// byte here).
//
// Split rows (q4_0, q4_1, q8_0; the AVX-512 kernels): per row the quants contiguous, then the
// fp16 block scales (and Q4_1 offsets) as arrays. 4-bit quants are interleaved by pairs of
// blocks: byte j of a pair holds element j of the first block in its low nibble and element j of
// the second in its high nibble. Q8_0 quants are stored biased (+128) for the unsigned operand.
//
// Packed copies replace the file's pages (which are released); 4-, 5- and 8-bit types, Q2_K and
// Q6_K keep the file's size, Q4_K grows to 4.625 bits per weight, Q5_K to 5.625, Q3_K to 3.56.
// F32 matrices are used in place, as are F16 ones for the AVX-512 kernels. Other types (the
// Q5/K/BF16/Q2_K/Q3_K types on AVX-512) stay as GGUF blocks and take the generic path.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include "tensor/half_convert.h"
#include "tensor/quant_blocks.h"

#include "model_data/weight_tensors.h"

namespace workbench {

enum class PackedLayout { q4_0, q4_1, q8_0, f16, f32, gguf_blocks, q4_0x8, q4_1x8, q8_0x8, q5_0x8, q5_1x8, q4_kx8, q5_kx8, q6_kx8, q2_kx8, q3_kx8, f16x8, bf16x8, mxfp4x8 };

// Which family the quantized types are packed into: the one the matmul kernels of this CPU read.
enum class PackFamily { for_this_cpu, row_groups, split_rows };

constexpr bool is_row_grouped(PackedLayout l) {  // the quantized row-group layouts
    return l == PackedLayout::q4_0x8 || l == PackedLayout::q4_1x8 || l == PackedLayout::q8_0x8 || l == PackedLayout::q5_0x8 ||
           l == PackedLayout::q5_1x8 ||
           l == PackedLayout::q4_kx8 || l == PackedLayout::q5_kx8 || l == PackedLayout::q6_kx8 || l == PackedLayout::q2_kx8 ||
           l == PackedLayout::q3_kx8 || l == PackedLayout::mxfp4x8;
}
constexpr bool is_quantized_layout(PackedLayout l) {
    return l == PackedLayout::q4_0 || l == PackedLayout::q4_1 || l == PackedLayout::q8_0 || is_row_grouped(l);
}

// Row groups: what a layout holds, the bytes of one block of 8 rows and where its parts start.
constexpr bool group_nibbles(PackedLayout l) {
    return l == PackedLayout::q4_0x8 || l == PackedLayout::q4_1x8 || l == PackedLayout::q4_kx8 || l == PackedLayout::mxfp4x8;
}
// mxfp4x8 (MXFP4): the nibbles index E2M1 values (kernels map them through a table to signed
// bytes −12..12), and each row's scale is the file's E8M0 exponent byte: 8 bytes after the
// quants, 136 bytes per 8 × 32 weights, the file's 4.25 bits per weight.
constexpr bool group_e8m0_scales(PackedLayout l) { return l == PackedLayout::mxfp4x8; }
// q2_kx8 / q3_kx8: 2-bit quants with integer sub-scales per 16 elements (see above).
constexpr bool group_crumbs(PackedLayout l) { return l == PackedLayout::q2_kx8 || l == PackedLayout::q3_kx8; }
// q4_kx8, q5_kx8: byte sub-scales and mins per block, fp16 d and dmin per super-block (see above).
constexpr bool group_sub_mins(PackedLayout l) { return l == PackedLayout::q4_kx8 || l == PackedLayout::q5_kx8; }
// q5_0x8, q5_1x8, q5_kx8: the 4-bit layouts' registers, then a bit plane (32 bytes: bit s of
// byte 4i + e is the fifth bit of element 4s + e), quants 0..31.
constexpr bool group_five_bits(PackedLayout l) { return l == PackedLayout::q5_0x8 || l == PackedLayout::q5_1x8 || l == PackedLayout::q5_kx8; }
// What an unsigned quant stands for is q − bias: Q4_0's 8, Q5_0's 16 (their kernels take
// bias·Σa off the integer dot product).
constexpr int group_quant_bias(PackedLayout l) { return l == PackedLayout::q4_0x8 ? 8 : l == PackedLayout::q5_0x8 ? 16 : 0; }
// q6_kx8: Q6_K's 6-bit quants as a 4-bit plane (the 4-bit layouts' registers) and a 2-bit plane
// (two registers: byte 4i + e of register p holds, at bits 2s, the top two bits of element
// 16p + 4s + e), its int8 sub-scales per 16 elements and the super-block's fp16 d (see above).
constexpr bool group_six_bits(PackedLayout l) { return l == PackedLayout::q6_kx8; }
// Scales kept as integers per block with the super-block's fp16 factors (q4_kx8, q5_kx8, q6_kx8).
constexpr bool group_byte_scales(PackedLayout l) { return group_sub_mins(l) || group_six_bits(l); }
// Layouts whose super-blocks (8 blocks) close with their rows' fp16 d (and dmin).
constexpr bool group_super_blocks(PackedLayout l) { return group_crumbs(l) || group_byte_scales(l); }
constexpr bool group_offsets(PackedLayout l) {
    return l != PackedLayout::q4_0x8 && l != PackedLayout::q8_0x8 && l != PackedLayout::q5_0x8 && l != PackedLayout::q6_kx8 && l != PackedLayout::q3_kx8 &&
           l != PackedLayout::mxfp4x8;
}
// q6_kx8: one scale per 16 elements (Q6_K's sub-blocks): part 0 for elements 0..15, part 1 for 16..31.
constexpr bool group_half_scales(PackedLayout l) { return l == PackedLayout::q6_kx8; }
constexpr int64_t group_quant_bytes(PackedLayout l) {
    return l == PackedLayout::q2_kx8 ? 64 : l == PackedLayout::q3_kx8 ? 96 : group_nibbles(l) ? 128 : group_five_bits(l) ? 160 : group_six_bits(l) ? 192 : 256;
}
constexpr int64_t group_scale_bytes(PackedLayout l) { return group_e8m0_scales(l) || group_byte_scales(l) ? 8 : 16; }
// 2-bit layouts: a block is its quants and 16 sub-scale bytes; the super-block's fp16 d (and
// dmin) follow its 8 blocks.
constexpr int64_t group_block_bytes(PackedLayout l) {
    if (group_crumbs(l)) return group_quant_bytes(l) + 16;
    return group_quant_bytes(l) + group_scale_bytes(l) * (group_offsets(l) || group_half_scales(l) ? 2 : 1);
}
constexpr int64_t super_block_bytes(PackedLayout l) {   // the trailer: d (16 bytes), and dmin where the type has mins
    return 8 * group_block_bytes(l) + (l == PackedLayout::q3_kx8 || l == PackedLayout::q6_kx8 ? 16 : 32);
}
// Where block b (32 elements) of a group starts, and the bytes of a group of n_blocks blocks.
constexpr int64_t group_block_offset(PackedLayout l, int64_t b) {
    return group_super_blocks(l) ? (b / 8) * super_block_bytes(l) + (b % 8) * group_block_bytes(l) : b * group_block_bytes(l);
}
constexpr int64_t group_row_bytes(PackedLayout l, int64_t n_blocks) {
    return group_super_blocks(l) ? n_blocks / 8 * super_block_bytes(l) : n_blocks * group_block_bytes(l);
}
// Super-block layouts: the 8 rows' fp16 d of block b's super-block (dmin 16 bytes further).
template <typename Byte>  // uint8_t or const uint8_t
inline Byte* super_block_scales(PackedLayout l, Byte* block, int64_t b) {
    return block + (8 - b % 8) * group_block_bytes(l);
}

// Element j (0..31) of row i (0..7) of a row-group block: the 4-bit quant (0..15), the byte
// (signed for q8_0x8 and q6_kx8), the 5-bit quant (0..31), Q2_K's 0..3 or Q3_K's −4..3.
inline int group_quant(PackedLayout l, const uint8_t* block, int i, int j) {
    if (group_crumbs(l)) {
        const int at = i * 4 + j % 4, s = (j % 16) / 4;
        const int low = (block[(j / 16) * 32 + at] >> (2 * s)) & 3;
        if (l == PackedLayout::q2_kx8) return low;
        return (low | (((block[64 + at] >> (j / 4)) & 1) << 2)) - 4;
    }
    if (group_five_bits(l)) {
        const uint8_t low = block[((j % 16) / 4) * 32 + i * 4 + j % 4];
        return (j < 16 ? low & 0x0F : low >> 4) | (((block[128 + i * 4 + j % 4] >> (j / 4)) & 1) << 4);
    }
    if (group_six_bits(l)) {
        const uint8_t low = block[((j % 16) / 4) * 32 + i * 4 + j % 4];
        const int high = (block[128 + (j / 16) * 32 + i * 4 + j % 4] >> (2 * ((j / 4) % 4))) & 3;
        return ((j < 16 ? low & 0x0F : low >> 4) | (high << 4)) - 32;
    }
    if (!group_nibbles(l)) return static_cast<int8_t>(block[(j / 4) * 32 + i * 4 + j % 4]);
    const int reg = (j % 16) / 4;
    const uint8_t byte = block[reg * 32 + i * 4 + j % 4];
    return j < 16 ? (byte & 0x0F) : (byte >> 4);
}
// The integer that element j stands for: the quant, or for mxfp4x8 the E2M1 value its nibble indexes.
inline int group_value(PackedLayout l, const uint8_t* block, int i, int j) {
    const int q = group_quant(l, block, i, j);
    return group_e8m0_scales(l) ? quant::kMxfp4Values[q] : q;
}
// Row i's scale (part 0) or offset (part 1; q6_kx8: the second half's scale) in block b, as a
// float; not for the 2-bit layouts (group_crumb_scales).
float group_scale(PackedLayout l, const uint8_t* block, int64_t b, int i, int part);

// What the 2-bit kernels work with: row i's integer sub-scales and (q2_kx8) mins of both halves
// of block b, and its super-block d and dmin.
struct CrumbScales {
    int sc[2] = {0, 0}, m[2] = {0, 0};
    float d = 0, dmin = 0;
};
CrumbScales group_crumb_scales(PackedLayout l, const uint8_t* block, int64_t b, int i);

// A value of an f16x8 / bf16x8 matrix as f32 (bf16 is the top half of an f32).
inline float sixteen_bit_to_float(PackedLayout l, uint16_t v) {
    if (l == PackedLayout::f16x8) return half_to_float(v);
    const uint32_t bits = static_cast<uint32_t>(v) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

struct PackedMatrix {
    PackedLayout layout = PackedLayout::gguf_blocks;
    DType type = DType::f32;      // the original element type
    int64_t n_in = 0, n_out = 0;
    int64_t n_blocks = 0;         // 32-element blocks per row (quantized layouts)
    int64_t row_bytes = 0;        // bytes per packed row; row groups (incl. f16x8): bytes per group of 8 rows
    const uint8_t* data = nullptr;
    std::unique_ptr<uint8_t[]> owned;  // the packed copy (null when used in place)
    uint64_t n_bytes = 0;

    // Split rows: bytes of quants per row (32 per block for q8_0, 32 per pair of 4-bit blocks).
    // Row groups: where the scales start within a block.
    int64_t quant_bytes() const {
        if (is_row_grouped(layout)) return group_quant_bytes(layout);
        return layout == PackedLayout::q8_0 ? n_blocks * 32 : (n_blocks + 1) / 2 * 32;
    }
    // Split rows: row r's parts: quants, then n_blocks fp16 scales, then (q4_1) offsets.
    const uint8_t* quants(int64_t r) const { return data + r * row_bytes; }
    const uint16_t* scales(int64_t r) const { return reinterpret_cast<const uint16_t*>(data + r * row_bytes + quant_bytes()); }
    const uint16_t* offsets(int64_t r) const { return scales(r) + n_blocks; }
};

// Packs a bound weight (any loadable type). Returns false only when out of memory.
bool pack_matrix(const WeightTensor& w, PackedMatrix& out, PackFamily family = PackFamily::for_this_cpu);

// The 4-bit quant of element j (0..31) of block b in a pair-interleaved row.
inline int packed_nibble(const uint8_t* quants, int64_t b, int j) {
    const uint8_t byte = quants[(b / 2) * 32 + j];
    return b % 2 == 0 ? (byte & 0x0F) : (byte >> 4);
}

// Row `row` as f32 (embedding lookup from a packed table).
void packed_row_f32(const PackedMatrix& m, int64_t row, float* out);

}  // namespace workbench
