// Encoding rounds each rotated dimension to the nearest of four levels at the step (of five tried)
// that restores the row best. Scoring: per code byte, two 16-entry shuffles (one per nibble) look
// up 16 tokens' partial sums at once; int16 sums hold head_dim / 2 terms of at most 127.
#include "kernels/cpu/token_codes.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kv_blocks/kv_row_codec.h"
#include "tensor/half_convert.h"

namespace workbench {
namespace {

// Lloyd's optimal step of a 4-level uniform quantizer for a unit Gaussian.
constexpr float kStepPerRms = 0.9957f;

int level(float x, float inv) { return std::clamp(static_cast<int>(std::floor(x * inv)) + 2, 0, 3); }

}  // namespace

void encode_token_code(const float* key, int64_t hd, uint8_t* group, int32_t slot) {
    thread_local std::vector<float> rotated;
    rotated.assign(key, key + hd);
    hadamard_rotate(rotated.data(), hd);
    double sum_sq = 0;
    for (float x : rotated) sum_sq += static_cast<double>(x) * x;
    const float rms = static_cast<float>(std::sqrt(sum_sq / static_cast<double>(hd)));
    // Gaussian rows want the Lloyd step; a row an outlier channel dominates is not Gaussian after
    // the rotation either, so a few steps around it are tried and the smallest squared error kept.
    uint16_t step_bits = 0;
    double best_err = INFINITY;
    for (float scale : {0.7f, 0.85f, 1.0f, 1.15f, 1.3f}) {
        const uint16_t bits = float_to_half(scale * kStepPerRms * rms);
        const float step = half_to_float(bits);
        const float inv = step > 0 ? 1.0f / step : 0.0f;
        double err = 0;
        for (float x : rotated) {
            const float e = x - (static_cast<float>(level(x, inv)) - 1.5f) * step;
            err += static_cast<double>(e) * e;
        }
        if (err < best_err) best_err = err, step_bits = bits;
    }
    const float step = half_to_float(step_bits);
    const float inv = step > 0 ? 1.0f / step : 0.0f;
    for (int64_t j = 0; j < hd / 4; ++j) {
        uint8_t byte = 0;
        for (int64_t i = 0; i < 4; ++i) byte = static_cast<uint8_t>(byte | (level(rotated[static_cast<size_t>(4 * j + i)], inv) << (2 * i)));
        group[j * kTokenCodeGroup + slot] = byte;
    }
    std::memcpy(group + hd / 4 * kTokenCodeGroup + slot * 2, &step_bits, 2);
}

void token_code_table(const float* q, int64_t n_rows, int64_t hd, uint8_t* table) {
    thread_local std::vector<float> sum, sums;
    sum.assign(static_cast<size_t>(hd), 0.0f);
    for (int64_t r = 0; r < n_rows; ++r)
        for (int64_t d = 0; d < hd; ++d) sum[static_cast<size_t>(d)] += q[r * hd + d];
    hadamard_rotate(sum.data(), hd);
    // Nibble t covers dimensions 2t and 2t + 1 (low nibble of byte j: 4j, 4j + 1; high: 4j + 2, 4j + 3).
    sums.resize(static_cast<size_t>(hd / 2 * 16));
    float largest = 0;
    for (int64_t t = 0; t < hd / 2; ++t)
        for (int n = 0; n < 16; ++n) {
            const float v = sum[static_cast<size_t>(2 * t)] * (static_cast<float>(n & 3) - 1.5f) +
                            sum[static_cast<size_t>(2 * t + 1)] * (static_cast<float>(n >> 2) - 1.5f);
            sums[static_cast<size_t>(t * 16 + n)] = v;
            largest = std::max(largest, std::abs(v));
        }
    const float scale = largest > 0 ? largest / 127.0f : 1.0f;
    for (size_t i = 0; i < sums.size(); ++i)
        table[i] = static_cast<uint8_t>(static_cast<int8_t>(std::lrint(sums[i] / scale)));
    std::memcpy(table + hd / 2 * 16, &scale, 4);
}

void token_code_scores(const uint8_t* table, const uint8_t* group, int64_t hd, float* out) {
    const __m128i low4 = _mm_set1_epi8(0x0f);
    __m256i acc = _mm256_setzero_si256();
    for (int64_t j = 0; j < hd / 4; ++j) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(group + j * kTokenCodeGroup));
        const __m128i lo = _mm_and_si128(bytes, low4), hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low4);
        const __m128i t_lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 2 * j * 16));
        const __m128i t_hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + (2 * j + 1) * 16));
        acc = _mm256_add_epi16(acc, _mm256_cvtepi8_epi16(_mm_shuffle_epi8(t_lo, lo)));
        acc = _mm256_add_epi16(acc, _mm256_cvtepi8_epi16(_mm_shuffle_epi8(t_hi, hi)));
    }
    float scale;
    std::memcpy(&scale, table + hd / 2 * 16, 4);
    const uint8_t* steps = group + hd / 4 * kTokenCodeGroup;
    const __m256 s = _mm256_set1_ps(scale);
    for (int h = 0; h < 2; ++h) {
        const __m128i part = h == 0 ? _mm256_castsi256_si128(acc) : _mm256_extracti128_si256(acc, 1);
        const __m256 sums = _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(part));
        const __m256 step = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(steps + h * 16)));
        _mm256_storeu_ps(out + h * 8, _mm256_mul_ps(_mm256_mul_ps(sums, s), step));
    }
}

}  // namespace workbench
