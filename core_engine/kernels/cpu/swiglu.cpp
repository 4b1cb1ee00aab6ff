// SwiGLU, elementwise (the compiler vectorises the loop apart from expf).
#include "kernels/cpu/swiglu.h"

#include <cmath>

namespace workbench {

void swiglu(const float* gate, const float* up, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace workbench
