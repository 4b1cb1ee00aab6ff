// SwiGLU activation: out = silu(gate) · up, elementwise.
#pragma once

#include <cstdint>

namespace workbench {

void swiglu(const float* gate, const float* up, float* out, int64_t n);

}  // namespace workbench
