// The MLP's gate: act(g) · u with act SiLU or tanh-GELU, as the CPU computes it — shared by the
// element-wise kernel (elementwise.cu) and the GEMV that fuses it (matmul_kernels.cu), so both
// round alike.
#pragma once

namespace workbench::cuda {

// SiLU(g) = g / (1 + e^−g); tanh-GELU(g) = g / (1 + e^(−2u)), u = sqrt(2/π)(g + 0.044715 g³).
__device__ inline float gated_value(float g, float u, bool gelu) {
    constexpr float kTwoSqrt2OverPi = 1.5957691216057308f, kCubic = 0.044715f;
    const float e = gelu ? expf(-kTwoSqrt2OverPi * (g + kCubic * g * g * g)) : expf(-g);
    return g / (1.0f + e) * u;
}

}  // namespace workbench::cuda
