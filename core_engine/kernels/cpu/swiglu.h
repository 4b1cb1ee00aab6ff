// The MLP's gated activations, elementwise: SwiGLU out = silu(gate) · up (llama, qwen, phi) and
// GeGLU out = gelu_tanh(gate) · up (gemma), GELU in its tanh approximation.
#pragma once

#include <cstdint>

namespace workbench {

void swiglu(const float* gate, const float* up, float* out, int64_t n);
void geglu_tanh(const float* gate, const float* up, float* out, int64_t n);

}  // namespace workbench
