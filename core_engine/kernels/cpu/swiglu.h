// The MLP's gated activations, elementwise: SwiGLU out = silu(gate) · up (llama, qwen, phi),
// GeGLU out = gelu_tanh(gate) · up (gemma), GELU in its tanh approximation, and gpt-oss's clamped
// SwiGLU out = x·σ(1.702·x) · (y + 1) with x = min(gate, 7), y = clamp(up, −7, 7).
#pragma once

#include <cstdint>

namespace workbench {

void swiglu(const float* gate, const float* up, float* out, int64_t n);
void geglu_tanh(const float* gate, const float* up, float* out, int64_t n);
void swiglu_clamped(const float* gate, const float* up, float* out, int64_t n);

}  // namespace workbench
