// The device layout of a matrix: plain types as in the file; quantized blocks split into their
// quants and their scales (device_matrix.h says why).
#include "kernels/cuda/device_matrix.h"

#include <cstring>

namespace workbench::cuda {
namespace {

constexpr int64_t kBlockElements = 32;
constexpr int64_t kAlign = 256;

int64_t aligned(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

DeviceMatrixBytes device_matrix_bytes(DType type, int64_t n_in, int64_t n_out) {
    if (!split_on_device(type)) {
        const int64_t row = static_cast<int64_t>(dtype_row_bytes(dtype_traits(type), static_cast<uint64_t>(n_in)));
        return {row, 0, row * n_out};
    }
    const int64_t blocks = n_in / kBlockElements;
    const int64_t row = blocks * quant_bytes(type);
    const int64_t scales_at = aligned(row * n_out);
    return {row, scales_at, scales_at + blocks * n_out * scale_bytes(type)};
}

void to_device_layout(DType type, const uint8_t* rows, int64_t n_in, int64_t n_out, uint8_t* out) {
    const DeviceMatrixBytes bytes = device_matrix_bytes(type, n_in, n_out);
    if (!split_on_device(type)) {
        std::memcpy(out, rows, static_cast<size_t>(bytes.total));
        return;
    }
    // A GGUF block is its scales, then its quants; rows are whole blocks, so the split runs over
    // the matrix's blocks in order.
    const int64_t qb = quant_bytes(type), sb = scale_bytes(type), block = qb + sb;
    const int64_t n_blocks = n_in / kBlockElements * n_out;
    uint8_t* scales = out + bytes.scales_offset;
    for (int64_t b = 0; b < n_blocks; ++b) {
        std::memcpy(scales + b * sb, rows + b * block, static_cast<size_t>(sb));
        std::memcpy(out + b * qb, rows + b * block + sb, static_cast<size_t>(qb));
    }
}

DeviceMatrix device_matrix_at(DType type, const uint8_t* device, int64_t n_in, int64_t n_out) {
    const DeviceMatrixBytes bytes = device_matrix_bytes(type, n_in, n_out);
    return {type, device, n_in, n_out, bytes.row_bytes, split_on_device(type) ? device + bytes.scales_offset : nullptr};
}

}  // namespace workbench::cuda
