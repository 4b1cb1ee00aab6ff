// Weight matrices repacked at load into the layout our SIMD kernels stream: per row, the 4- or
// 8-bit quants contiguous, then the fp16 block scales (and Q4_1 offsets) as arrays. 4-bit quants
// are interleaved by pairs of blocks: byte j of a pair holds element j of the first block in its
// low nibble and element j of the second in its high nibble, so one 32-byte load and two masks
// give two blocks in element order (GGUF's order needs a shift and a lane insert per block). Q8_0 quants are
// stored biased (+128) because the int8 dot instructions want one unsigned operand. The packed
// copy has exactly the file's size; the file pages it replaces are released. F16/F32 matrices are
// used in place. Other types (k-quants, BF16, Q5) stay as GGUF blocks and take the generic path.
#pragma once

#include <cstdint>
#include <memory>

#include "model/weights.h"

namespace workbench {

enum class PackedLayout { q4_0, q4_1, q8_0, f16, f32, gguf_blocks };

struct PackedMatrix {
    PackedLayout layout = PackedLayout::gguf_blocks;
    DType type = DType::f32;      // the original element type
    int64_t n_in = 0, n_out = 0;
    int64_t n_blocks = 0;         // 32-element blocks per row (quantized layouts)
    int64_t row_bytes = 0;        // bytes per packed row
    const uint8_t* data = nullptr;
    std::unique_ptr<uint8_t[]> owned;  // the packed copy (null when used in place)
    uint64_t n_bytes = 0;

    // Bytes of quants per row: 32 per block for q8_0, 32 per pair of blocks for 4-bit layouts.
    int64_t quant_bytes() const { return layout == PackedLayout::q8_0 ? n_blocks * 32 : (n_blocks + 1) / 2 * 32; }
    // Row r's parts (quantized layouts): quants, then n_blocks fp16 scales, then (q4_1) offsets.
    const uint8_t* quants(int64_t r) const { return data + r * row_bytes; }
    const uint16_t* scales(int64_t r) const { return reinterpret_cast<const uint16_t*>(data + r * row_bytes + quant_bytes()); }
    const uint16_t* offsets(int64_t r) const { return scales(r) + n_blocks; }
};

// Packs a bound weight (any loadable type). Returns false only when out of memory.
bool pack_matrix(const WeightTensor& w, PackedMatrix& out);

// The 4-bit quant of element j (0..31) of block b in a pair-interleaved row.
inline int packed_nibble(const uint8_t* quants, int64_t b, int j) {
    const uint8_t byte = quants[(b / 2) * 32 + j];
    return b % 2 == 0 ? (byte & 0x0F) : (byte >> 4);
}

// Row `row` as f32 (embedding lookup from a packed table).
void packed_row_f32(const PackedMatrix& m, int64_t row, float* out);

}  // namespace workbench
