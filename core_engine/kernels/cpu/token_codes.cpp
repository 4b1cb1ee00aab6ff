// Encoding rounds each rotated dimension to the nearest of four levels at the step (of five tried)
// that restores the row best; scoring adds one table
// entry per code byte into four accumulators, so the additions do not wait on each other.
#include "kernels/cpu/token_codes.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kv_blocks/kv_row_codec.h"
#include "tensor/half_convert.h"

namespace workbench {
namespace {

// Lloyd's optimal step of a 4-level uniform quantizer for a unit Gaussian.
constexpr float kStepPerRms = 0.9957f;

}  // namespace

void encode_token_code(const float* key, int64_t hd, uint8_t* code) {
    thread_local std::vector<float> rotated;
    rotated.assign(key, key + hd);
    hadamard_rotate(rotated.data(), hd);
    double sum_sq = 0;
    for (float x : rotated) sum_sq += static_cast<double>(x) * x;
    const float rms = static_cast<float>(std::sqrt(sum_sq / static_cast<double>(hd)));
    auto level = [](float x, float inv) { return std::clamp(static_cast<int>(std::floor(x * inv)) + 2, 0, 3); };
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
        code[j] = byte;
    }
    code[hd / 4] = static_cast<uint8_t>(step_bits & 0xff);
    code[hd / 4 + 1] = static_cast<uint8_t>(step_bits >> 8);
}

void token_code_table(const float* q, int64_t n_rows, int64_t hd, float* table) {
    thread_local std::vector<float> sum;
    sum.assign(static_cast<size_t>(hd), 0.0f);
    for (int64_t r = 0; r < n_rows; ++r)
        for (int64_t d = 0; d < hd; ++d) sum[static_cast<size_t>(d)] += q[r * hd + d];
    hadamard_rotate(sum.data(), hd);
    for (int64_t j = 0; j < hd / 4; ++j) {
        float lv[4][4];  // [dimension i][level c]
        for (int i = 0; i < 4; ++i)
            for (int c = 0; c < 4; ++c) lv[i][c] = sum[static_cast<size_t>(4 * j + i)] * (static_cast<float>(c) - 1.5f);
        float* t = table + j * 256;
        for (int b = 0; b < 256; ++b) t[b] = (lv[0][b & 3] + lv[1][(b >> 2) & 3]) + (lv[2][(b >> 4) & 3] + lv[3][b >> 6]);
    }
}

float token_code_score(const float* table, const uint8_t* code, int64_t hd) {
    const int64_t n = hd / 4;
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        a0 += table[j * 256 + code[j]];
        a1 += table[(j + 1) * 256 + code[j + 1]];
        a2 += table[(j + 2) * 256 + code[j + 2]];
        a3 += table[(j + 3) * 256 + code[j + 3]];
    }
    for (; j < n; ++j) a0 += table[j * 256 + code[j]];
    const uint16_t step_bits = static_cast<uint16_t>(code[n] | (code[n + 1] << 8));
    return ((a0 + a1) + (a2 + a3)) * half_to_float(step_bits);
}

}  // namespace workbench
