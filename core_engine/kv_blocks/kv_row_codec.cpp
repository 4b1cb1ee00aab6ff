// Row conversions for the KV cache. Plain and quantized types reuse the tensor module's reference
// converters (bit-exact with ggml); fp8 e4m3 and q2_0 are defined here because GGUF has no such type.
#include "kv_blocks/kv_row_codec.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include <immintrin.h>

#include "tensor/half_convert.h"
#include "tensor/dequantize.h"

namespace workbench {
namespace {

constexpr int64_t kFp8Block = 32;
constexpr float kE4m3Max = 448.0f;
constexpr int64_t kQ2Block = 32;

std::array<float, 256> make_e4m3_table() {
    std::array<float, 256> t{};
    for (int b = 0; b < 256; ++b) {
        const int sign = b >> 7, exp = (b >> 3) & 0xf, man = b & 7;
        float v;
        if (exp == 0xf && man == 7) v = NAN;
        else if (exp == 0) v = std::ldexp(static_cast<float>(man) / 8.0f, -6);
        else v = std::ldexp(1.0f + static_cast<float>(man) / 8.0f, exp - 7);
        t[static_cast<size_t>(b)] = sign ? -v : v;
    }
    return t;
}

const std::array<float, 256>& e4m3_table() {
    static const std::array<float, 256> table = make_e4m3_table();
    return table;
}

// q2_0: the code of x for step d, the nearest of the levels (c - 1.5) · d.
inline int q2_code(float x, float inv_d) { return std::clamp(static_cast<int>(std::floor(x * inv_d)) + 2, 0, 3); }

float q2_error(const float* x, float d) {
    if (d <= 0) return INFINITY;
    const float inv = 1.0f / d;
    float e = 0;
    for (int64_t i = 0; i < kQ2Block; ++i) {
        const float r = x[i] - d * (static_cast<float>(q2_code(x[i], inv)) - 1.5f);
        e += r * r;
    }
    return e;
}

// The step of least squared error over a block: a grid of fractions of amax / 1.5 (a Gaussian's
// best step sits near 0.6 of it for 32 values), then least-squares refits of d to the codes it
// gives, each kept only where the error falls.
float q2_step(const float* x) {
    float amax = 0;
    for (int64_t i = 0; i < kQ2Block; ++i) amax = std::max(amax, std::fabs(x[i]));
    if (amax == 0) return 0;
    float best = amax / 1.5f, best_err = q2_error(x, best);
    for (int f = 7; f < 20; ++f) {
        const float d = amax / 1.5f * (static_cast<float>(f) * 0.05f);
        const float e = q2_error(x, d);
        if (e < best_err) best = d, best_err = e;
    }
    for (int it = 0; it < 2; ++it) {
        const float inv = 1.0f / best;
        float xl = 0, ll = 0;
        for (int64_t i = 0; i < kQ2Block; ++i) {
            const float l = static_cast<float>(q2_code(x[i], inv)) - 1.5f;
            xl += x[i] * l, ll += l * l;
        }
        const float d = xl / ll, e = q2_error(x, d);
        if (!(e < best_err)) break;
        best = d, best_err = e;
    }
    return best;
}

}  // namespace

float e4m3_to_float(uint8_t b) { return e4m3_table()[b]; }

uint8_t float_to_e4m3(float f) {
    if (std::isnan(f)) return 0x7f;
    const uint8_t sign = std::signbit(f) ? 0x80 : 0;
    float a = std::min(std::fabs(f), kE4m3Max);
    // Nearest of the 127 non-negative finite codes; ties go to the even code (mantissa bit 0).
    // Codes are monotone in value, so a binary search over them finds the neighbours.
    const auto& t = e4m3_table();
    int lo = 0, hi = 0x7e;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (t[static_cast<size_t>(mid)] <= a) lo = mid;
        else hi = mid - 1;
    }
    int best = lo;
    if (lo < 0x7e) {
        const float d_lo = a - t[static_cast<size_t>(lo)], d_hi = t[static_cast<size_t>(lo + 1)] - a;
        if (d_hi < d_lo || (d_hi == d_lo && (lo & 1))) best = lo + 1;
    }
    return static_cast<uint8_t>(sign | best);
}

void kv_encode_row(KvDType type, const float* src, uint8_t* dst, int64_t n) {
    switch (type) {
    case KvDType::f32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); return;
    case KvDType::f16:
        for (int64_t i = 0; i < n; ++i) {
            const uint16_t h = float_to_half(src[i]);
            std::memcpy(dst + 2 * i, &h, 2);
        }
        return;
    case KvDType::bf16: quantize_row(DType::bf16, src, dst, n); return;
    case KvDType::q8_0: quantize_row(DType::q8_0, src, dst, n); return;
    case KvDType::q4_0: quantize_row(DType::q4_0, src, dst, n); return;
    case KvDType::fp8:
        for (int64_t b = 0; b < n; b += kFp8Block, dst += 34) {
            float amax = 0;
            for (int64_t i = 0; i < kFp8Block; ++i) amax = std::max(amax, std::fabs(src[b + i]));
            const uint16_t d16 = float_to_half(amax / kE4m3Max);
            const float d = half_to_float(d16);
            const float inv = d > 0 ? 1.0f / d : 0.0f;
            std::memcpy(dst, &d16, 2);
            for (int64_t i = 0; i < kFp8Block; ++i) dst[2 + i] = float_to_e4m3(src[b + i] * inv);
        }
        return;
    case KvDType::q2_0:
        for (int64_t b = 0; b < n; b += kQ2Block, dst += 10) {
            // Codes are chosen for the step as stored (f16), so decoding meets the nearest level.
            const uint16_t d16 = float_to_half(q2_step(src + b));
            const float d = half_to_float(d16);
            const float inv = d > 0 ? 1.0f / d : 0.0f;
            std::memcpy(dst, &d16, 2);
            for (int j = 0; j < 8; ++j) {
                int byte = 0;
                for (int i = 0; i < 4; ++i) byte |= q2_code(src[b + j + 8 * i], inv) << (2 * i);
                dst[2 + j] = static_cast<uint8_t>(byte);
            }
        }
        return;
    }
}

void kv_decode_row(KvDType type, const uint8_t* src, float* dst, int64_t n) {
    switch (type) {
    case KvDType::f32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); return;
    case KvDType::f16: {
        // F16C converts exactly, as half_to_float does, eight at a time.
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i))));
        for (; i < n; ++i) {
            uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            dst[i] = half_to_float(h);
        }
        return;
    }
    // The SIMD decodes below compute exactly the reference's products (d · q), eight at a time.
    case KvDType::bf16:
        for (int64_t i = 0; i < n; i += 8) {
            const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i)));
            _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(h, 16)));
        }
        return;
    case KvDType::q8_0:
        for (int64_t b = 0; b < n; b += 32, src += 34) {
            uint16_t d16;
            std::memcpy(&d16, src, 2);
            const __m256 d = _mm256_set1_ps(half_to_float(d16));
            for (int k = 0; k < 4; ++k) {
                const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + 2 + 8 * k)));
                _mm256_storeu_ps(dst + b + 8 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(q), d));
            }
        }
        return;
    case KvDType::q4_0:
        for (int64_t b = 0; b < n; b += 32, src += 18) {
            uint16_t d16;
            std::memcpy(&d16, src, 2);
            const __m256 d = _mm256_set1_ps(half_to_float(d16));
            const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2));
            const __m128i lo = _mm_sub_epi8(_mm_and_si128(bytes, _mm_set1_epi8(0x0f)), _mm_set1_epi8(8));
            const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), _mm_set1_epi8(0x0f)), _mm_set1_epi8(8));
            for (int k = 0; k < 2; ++k) {
                const __m128i l = k ? _mm_srli_si128(lo, 8) : lo, h = k ? _mm_srli_si128(hi, 8) : hi;
                _mm256_storeu_ps(dst + b + 8 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(l)), d));
                _mm256_storeu_ps(dst + b + 16 + 8 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(h)), d));
            }
        }
        return;
    case KvDType::fp8: {
        const auto& t = e4m3_table();
        for (int64_t b = 0; b < n; b += kFp8Block, src += 34) {
            uint16_t d16;
            std::memcpy(&d16, src, 2);
            const float d = half_to_float(d16);
            for (int64_t i = 0; i < kFp8Block; ++i) dst[b + i] = d * t[src[2 + i]];
        }
        return;
    }
    case KvDType::q2_0:
        for (int64_t b = 0; b < n; b += kQ2Block, src += 10) {
            uint16_t d16;
            std::memcpy(&d16, src, 2);
            const __m256 d = _mm256_set1_ps(half_to_float(d16));
            const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + 2));
            for (int i = 0; i < 4; ++i) {
                const __m128i c = _mm_and_si128(_mm_srli_epi16(bytes, 2 * i), _mm_set1_epi8(3));
                const __m256 level = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(c)), _mm256_set1_ps(1.5f));
                _mm256_storeu_ps(dst + b + 8 * i, _mm256_mul_ps(level, d));
            }
        }
        return;
    }
}

void hadamard_rotate(float* x, int64_t n) {
    for (int64_t len = 1; len < n; len <<= 1)
        for (int64_t i = 0; i < n; i += 2 * len)
            for (int64_t j = i; j < i + len; ++j) {
                const float a = x[j], b = x[j + len];
                x[j] = a + b;
                x[j + len] = a - b;
            }
    const float norm = 1.0f / std::sqrt(static_cast<float>(n));
    for (int64_t i = 0; i < n; ++i) x[i] *= norm;
}

}  // namespace workbench
