// Converting weight matrices to another GGUF type (dequantize each row, quantize it again):
// in memory for `--weights TYPE`, and for writing requantized model files. Vectors (norms,
// biases) stay f32. Types without a quantizer are refused with a clear error; a matrix whose rows do
// not split into the target's blocks (k-quants need multiples of 256) takes llama.cpp's fallback.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/weights.h"
#include "tensor/dtype.h"
#include "workbench/status.h"

namespace workbench {

// Types a weight matrix can be converted to, and their names as a list for messages.
bool can_requantize_to(DType type);
std::string requantize_type_names();

// The type a matrix with rows of `n_in` elements gets when `type` is asked for: `type` itself
// when the rows split into its blocks, else llama.cpp's fallback (q4_k → q5_0, q5_k → q5_1,
// q6_k → q8_0; f16 when even 32 does not divide the rows).
DType effective_weight_type(DType type, int64_t n_in);

// Converts `n_rows` rows of `n_in` elements from `src_type` to `dst_type`.
Status requantize_rows(DType src_type, const uint8_t* src, DType dst_type, uint8_t* dst, int64_t n_rows, int64_t n_in);

// Converts every matrix of `w` to `type` into buffers held in `storage`; `w` then points at them.
// The mapped file's pages for the old weights are no longer touched, so memory does not double.
// `progress(done, total)` is called after each layer.
Status requantize_weights(ModelWeights& w, DType type, std::vector<std::unique_ptr<uint8_t[]>>& storage,
                          const std::function<void(int, int)>& progress = {});

}  // namespace workbench
