// Integer-domain dot products for the legacy 32-element block formats, AVX2 with scalar twins.
#include "kernels/cpu/quant_dot.h"

#include <cstring>

#include "kernels/cpu/half_convert.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define WB_HAVE_AVX2 1
#endif

namespace workbench {
namespace {

#pragma pack(push, 1)
struct BlockQ4_0 { uint16_t d; uint8_t qs[16]; };
struct BlockQ4_1 { uint16_t d, m; uint8_t qs[16]; };
struct BlockQ8_0 { uint16_t d; int8_t qs[32]; };
struct BlockQ8_1 { uint16_t d, s; int8_t qs[32]; };
#pragma pack(pop)
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ8_0) == 34 && sizeof(BlockQ8_1) == 36);

#ifdef WB_HAVE_AVX2
inline float hsum(__m256 v) {
    __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}

// 16 packed bytes -> 32 nibbles: low nibbles (elements 0..15) then high nibbles (16..31).
inline __m256i unpack_nibbles(const uint8_t* qs) {
    __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    __m256i both = _mm256_set_m128i(_mm_srli_epi16(bytes, 4), bytes);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// Sum of products of signed bytes, as 8 int32 lanes -> floats.
inline __m256 signed_dot(__m256i x, __m256i y) {
    __m256i ax = _mm256_sign_epi8(x, x);
    __m256i sy = _mm256_sign_epi8(y, x);
    __m256i p16 = _mm256_maddubs_epi16(ax, sy);
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)));
}
#endif

}  // namespace

DType activation_type_for(DType weight_type) {
    switch (weight_type) {
        case DType::q4_0: case DType::q8_0: return DType::q8_0;
        case DType::q4_1: return DType::q8_1;
        default: return DType::f32;
    }
}

float dot_q4_0_q8_0_ref(const void* w, const void* a, int64_t n) {
    auto* x = static_cast<const BlockQ4_0*>(w);
    auto* y = static_cast<const BlockQ8_0*>(a);
    float sum = 0;
    for (int64_t b = 0; b < n / 32; ++b) {
        int32_t isum = 0;
        for (int j = 0; j < 16; ++j) {
            isum += ((x[b].qs[j] & 0x0F) - 8) * y[b].qs[j];
            isum += ((x[b].qs[j] >> 4) - 8) * y[b].qs[j + 16];
        }
        sum += static_cast<float>(isum) * half_to_float(x[b].d) * half_to_float(y[b].d);
    }
    return sum;
}

float dot_q4_1_q8_1_ref(const void* w, const void* a, int64_t n) {
    auto* x = static_cast<const BlockQ4_1*>(w);
    auto* y = static_cast<const BlockQ8_1*>(a);
    float sum = 0;
    for (int64_t b = 0; b < n / 32; ++b) {
        int32_t isum = 0;
        for (int j = 0; j < 16; ++j) {
            isum += (x[b].qs[j] & 0x0F) * y[b].qs[j];
            isum += (x[b].qs[j] >> 4) * y[b].qs[j + 16];
        }
        // Q8_1's s holds d * sum(q), so the weight offset m contributes m * s.
        sum += static_cast<float>(isum) * half_to_float(x[b].d) * half_to_float(y[b].d) + half_to_float(x[b].m) * half_to_float(y[b].s);
    }
    return sum;
}

float dot_q8_0_q8_0_ref(const void* w, const void* a, int64_t n) {
    auto* x = static_cast<const BlockQ8_0*>(w);
    auto* y = static_cast<const BlockQ8_0*>(a);
    float sum = 0;
    for (int64_t b = 0; b < n / 32; ++b) {
        int32_t isum = 0;
        for (int j = 0; j < 32; ++j) isum += x[b].qs[j] * y[b].qs[j];
        sum += static_cast<float>(isum) * half_to_float(x[b].d) * half_to_float(y[b].d);
    }
    return sum;
}

#ifdef WB_HAVE_AVX2
float dot_q4_0_q8_0(const void* w, const void* a, int64_t n) {
    auto* x = static_cast<const BlockQ4_0*>(w);
    auto* y = static_cast<const BlockQ8_0*>(a);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / 32; ++b) {
        __m256i qx = _mm256_sub_epi8(unpack_nibbles(x[b].qs), _mm256_set1_epi8(8));
        __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
        __m256 d = _mm256_set1_ps(half_to_float(x[b].d) * half_to_float(y[b].d));
        acc = _mm256_fmadd_ps(d, signed_dot(qx, qy), acc);
    }
    return hsum(acc);
}

float dot_q4_1_q8_1(const void* w, const void* a, int64_t n) {
    auto* x = static_cast<const BlockQ4_1*>(w);
    auto* y = static_cast<const BlockQ8_1*>(a);
    __m256 acc = _mm256_setzero_ps();
    float offsets = 0;
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t b = 0; b < n / 32; ++b) {
        __m256i qx = unpack_nibbles(x[b].qs);  // unsigned 0..15: maddubs takes it directly
        __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
        __m256 p = _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(qx, qy), ones));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(x[b].d) * half_to_float(y[b].d)), p, acc);
        offsets += half_to_float(x[b].m) * half_to_float(y[b].s);
    }
    return hsum(acc) + offsets;
}

float dot_q8_0_q8_0(const void* w, const void* a, int64_t n) {
    auto* x = static_cast<const BlockQ8_0*>(w);
    auto* y = static_cast<const BlockQ8_0*>(a);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / 32; ++b) {
        __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
        __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
        __m256 d = _mm256_set1_ps(half_to_float(x[b].d) * half_to_float(y[b].d));
        acc = _mm256_fmadd_ps(d, signed_dot(qx, qy), acc);
    }
    return hsum(acc);
}

float dot_f32(const float* a, const float* b, int64_t n) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    }
    float sum = hsum(_mm256_add_ps(acc0, acc1));
    for (; i < n; ++i) sum += a[i] * b[i];
    return sum;
}
#else
float dot_q4_0_q8_0(const void* w, const void* a, int64_t n) { return dot_q4_0_q8_0_ref(w, a, n); }
float dot_q4_1_q8_1(const void* w, const void* a, int64_t n) { return dot_q4_1_q8_1_ref(w, a, n); }
float dot_q8_0_q8_0(const void* w, const void* a, int64_t n) { return dot_q8_0_q8_0_ref(w, a, n); }
float dot_f32(const float* a, const float* b, int64_t n) {
    float sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
    return sum;
}
#endif

}  // namespace workbench
