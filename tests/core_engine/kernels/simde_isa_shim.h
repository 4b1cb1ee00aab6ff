// Force-included (-include) into the VNNI and AVX-512 kernel files when the kernel test builds
// them a second time without their instruction-set flags: SIMDe's portable versions stand in for
// the intrinsics this CPU lacks, so their arithmetic is checked here against the scalar reference
// even on machines without AVX-512 or VNNI. Native AVX2 stays native.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

// What SIMDe 0.7 lacks or leaves unaliased, written plainly: lane by lane through memory.
namespace simde_isa_shim {

inline simde__m512 cvtph_ps(simde__m256i h) {
    alignas(32) uint16_t in[16];
    alignas(64) float out[16];
    simde_mm256_storeu_si256(reinterpret_cast<simde__m256i*>(in), h);
    _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in))));
    _mm256_storeu_ps(out + 8, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 8))));
    return simde_mm512_loadu_ps(out);
}

inline simde__m512 cvtepi32_ps(simde__m512i v) {
    alignas(64) int32_t in[16];
    alignas(64) float out[16];
    simde_mm512_storeu_si512(in, v);
    for (int i = 0; i < 16; ++i) out[i] = static_cast<float>(in[i]);
    return simde_mm512_loadu_ps(out);
}

// Pairwise, halves first, as the compilers' own reduction does.
inline float reduce_add_ps(simde__m512 v) {
    alignas(64) float f[16];
    simde_mm512_storeu_ps(f, v);
    for (int width = 8; width >= 1; width /= 2)
        for (int i = 0; i < width; ++i) f[i] += f[i + width];
    return f[0];
}

// Masked loads read only the lanes whose bit is set (the point of them: no read past an end).
inline simde__m256i maskz_loadu_epi16(uint16_t mask, const void* p) {
    alignas(32) uint16_t out[16] = {};
    for (int i = 0; i < 16; ++i)
        if (mask & (1u << i)) std::memcpy(&out[i], static_cast<const uint16_t*>(p) + i, 2);
    return simde_mm256_loadu_si256(reinterpret_cast<const simde__m256i*>(out));
}

// The first 16 lanes of v, each widened to int32 (zero- or sign-extended as Lane is).
template <typename Lane, typename Vec>
inline simde__m512i widen_to_epi32(Vec v) {
    Lane in[sizeof(Vec) / sizeof(Lane)];
    std::memcpy(in, &v, sizeof v);
    alignas(64) int32_t out[16];
    for (int i = 0; i < 16; ++i) out[i] = in[i];
    return simde_mm512_loadu_si512(out);
}

inline simde__m512 maskz_loadu_ps(uint16_t mask, const void* p) {
    alignas(64) float out[16] = {};
    for (int i = 0; i < 16; ++i)
        if (mask & (1u << i)) std::memcpy(&out[i], static_cast<const float*>(p) + i, 4);
    return simde_mm512_loadu_ps(out);
}

}  // namespace simde_isa_shim

#define _mm256_dpbusd_avx_epi32(src, a, b) simde_mm256_dpbusd_epi32(src, a, b)
#define _mm512_zextsi256_si512(a) simde_mm512_inserti64x4(simde_mm512_setzero_si512(), (a), 0)
#define _mm512_cvtph_ps(h) simde_isa_shim::cvtph_ps(h)
#define _mm512_cvtepi32_ps(v) simde_isa_shim::cvtepi32_ps(v)
#define _mm512_reduce_add_ps(v) simde_isa_shim::reduce_add_ps(v)
#define _mm256_maskz_loadu_epi16(k, p) simde_isa_shim::maskz_loadu_epi16(k, p)
#define _mm512_maskz_loadu_ps(k, p) simde_isa_shim::maskz_loadu_ps(k, p)
#define _mm512_cvtepu16_epi32(v) simde_isa_shim::widen_to_epi32<uint16_t>(v)
#define _mm512_cvtepu8_epi32(v) simde_isa_shim::widen_to_epi32<uint8_t>(v)
#define _mm512_cvtepi8_epi32(v) simde_isa_shim::widen_to_epi32<int8_t>(v)
