// Converting weight matrices to another GGUF type (dequantize each row, quantize it again):
// in memory for `--weights TYPE`, and for writing requantized model files. Vectors (norms,
// biases) stay f32. Types without a quantizer (the k-quants) are refused with a clear error.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/weights.h"
#include "tensor/dtype.h"
#include "workbench/status.h"

namespace workbench {

// Types a weight matrix can be converted to.
bool can_requantize_to(DType type);

// Converts `n_rows` rows of `n_in` elements from `src_type` to `dst_type`.
Status requantize_rows(DType src_type, const uint8_t* src, DType dst_type, uint8_t* dst, int64_t n_rows, int64_t n_in);

// Converts every matrix of `w` to `type` into buffers held in `storage`; `w` then points at them.
// The mapped file's pages for the old weights are no longer touched, so memory does not double.
Status requantize_weights(ModelWeights& w, DType type, std::vector<std::unique_ptr<uint8_t[]>>& storage);

}  // namespace workbench
