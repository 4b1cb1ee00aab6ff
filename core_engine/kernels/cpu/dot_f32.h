// Float dot product for the generic (dequantize-a-row) matmul path.
#pragma once

#include <cstdint>

namespace workbench {

float dot_f32(const float* a, const float* b, int64_t n);

}  // namespace workbench
