// Weight matrices repacked at load into the layouts our SIMD kernels stream. Two families:
//
// Row groups (q4_0x8, q4_1x8, q8_0x8; the AVX2 kernels): rows are taken 8 at a time and, block
// by block, their quants are interleaved 4 bytes per row, so a 256-bit register holds the same 4
// elements of 8 rows and one broadcast of 4 activation bytes feeds all 8 (int8 multiply-adds
// then leave one row per 32-bit lane: one convert and one FMA per block serve 8 rows). A group's
// block is [quants][8 fp16 scales][8 fp16 offsets (q4_1)]; 4-bit register k (32 bytes) holds
// elements 4k..4k+3 of each row in its low nibbles and 16+4k..16+4k+3 in its high nibbles; q8_0
// keeps signed bytes, register j holding elements 4j..4j+3. A last partial group is padded with
// zero rows. f16x8: for each element k in order, the 8 rows' fp16 values (16 bytes), so one
// convert gives a vector of 8 rows to multiply by a broadcast activation.
//
// Split rows (q4_0, q4_1, q8_0; the AVX-512 kernels): per row the quants contiguous, then the
// fp16 block scales (and Q4_1 offsets) as arrays. 4-bit quants are interleaved by pairs of
// blocks: byte j of a pair holds element j of the first block in its low nibble and element j of
// the second in its high nibble. Q8_0 quants are stored biased (+128) for the unsigned operand.
//
// Packed copies are the file's size (plus padding rows); the file pages they replace are
// released. F16 matrices are used in place for the AVX-512 kernels, F32 ones always. Other types (k-quants, BF16, Q5) stay as GGUF
// blocks and take the generic path.
#pragma once

#include <cstdint>
#include <memory>

#include "model/weights.h"

namespace workbench {

enum class PackedLayout { q4_0, q4_1, q8_0, f16, f32, gguf_blocks, q4_0x8, q4_1x8, q8_0x8, f16x8 };

// Which family the quantized types are packed into: the one the matmul kernels of this CPU read.
enum class PackFamily { for_this_cpu, row_groups, split_rows };

constexpr bool is_row_grouped(PackedLayout l) {
    return l == PackedLayout::q4_0x8 || l == PackedLayout::q4_1x8 || l == PackedLayout::q8_0x8;
}
constexpr bool is_quantized_layout(PackedLayout l) {
    return l == PackedLayout::q4_0 || l == PackedLayout::q4_1 || l == PackedLayout::q8_0 || is_row_grouped(l);
}

// Row groups: bytes of one block of 8 rows (quants, scales, offsets) and where its parts start.
constexpr int64_t group_quant_bytes(PackedLayout l) { return l == PackedLayout::q8_0x8 ? 256 : 128; }
constexpr int64_t group_block_bytes(PackedLayout l) {
    return group_quant_bytes(l) + 16 + (l == PackedLayout::q4_1x8 ? 16 : 0);
}

// Element j (0..31) of row i (0..7) of a row-group block: the 4-bit quant (0..15) or the int8.
inline int group_quant(PackedLayout l, const uint8_t* block, int i, int j) {
    if (l == PackedLayout::q8_0x8) return static_cast<int8_t>(block[(j / 4) * 32 + i * 4 + j % 4]);
    const int reg = (j % 16) / 4;
    const uint8_t byte = block[reg * 32 + i * 4 + j % 4];
    return j < 16 ? (byte & 0x0F) : (byte >> 4);
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
