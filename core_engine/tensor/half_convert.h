// Inline half-precision conversions for hot loops: the F16C instructions when the build has
// them, else the reference conversions (same results: round to nearest even, quiet NaNs).
#pragma once

#include <cstdint>

#include "tensor/dequantize.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace workbench {

inline float half_to_float(uint16_t h) {
#if defined(__F16C__)
    return _cvtsh_ss(h);
#else
    return fp16_to_fp32(h);
#endif
}

inline uint16_t float_to_half(float f) {
#if defined(__F16C__)
    return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
#else
    return fp32_to_fp16(f);
#endif
}

}  // namespace workbench
