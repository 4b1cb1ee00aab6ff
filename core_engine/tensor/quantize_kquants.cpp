// Reference quantizers of the Q4_K, Q5_K and Q6_K weight types (reached through quantize_row).
// Their bytes are those of ggml's quantize_row_q{4,5,6}_K_ref, the path llama.cpp's
// quantizer takes without an importance matrix: the same searches for the sub-block scales, the
// same float operations in the same order, the same rounding.
//
// The quantizers pick each sub-block's scale by a least-squares search over a few candidate
// scales, whose float sums decide which candidate wins; a fused multiply-add anywhere in them
// can change the choice, and the quants with it. ggml's generic C (as shipped in llama.cpp's
// libggml-base) rounds every product and sum separately, so contraction stays off here.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "tensor/dequantize.h"
#include "tensor/quant_blocks.h"

namespace workbench::quant {
namespace {

// Below this largest |x| (or |sub-block scale|) a group counts as all zero.
constexpr float kZeroGroup = 1e-15f;

// Round to nearest, ties to even, the way ggml's k-quants do it: adding 1.5 * 2^23 pushes the
// integer part of v into the low mantissa bits (float spacing there is exactly 1, so the one
// rounding of the addition is the rounding of v). Exact for |v| < 2^22, which every caller
// keeps to; outside it (and for NaN) this returns ggml's garbage rather than undefined
// behaviour.
int round_to_int(float v) {
    const float shifted = v + 12582912.0f;
    return static_cast<int>(std::bit_cast<uint32_t>(shifted) & 0x007FFFFFu) - 0x00400000;
}

// ----- Q4_K and Q5_K: 8 sub-blocks of 32, x ~ d*sc*q - dmin*m, q in [0, 15] or [0, 31], 6-bit sc and m

// How a sub-block's fit searches: the largest quant, and the candidate grids it tries
// (levels + first + 0.1*step steps over the range, step 0..steps).
struct SubBlockSearch {
    int levels;
    float first;
    int steps;
};
constexpr SubBlockSearch kQ4Search{15, -1.0f, 20};
constexpr SubBlockSearch kQ5Search{31, -0.5f, 15};
constexpr float kSearchStep = 0.1f;

// Weighted least-squares fit of a 32-element sub-block as scale * q - offset with q in
// [0, levels] and offset >= 0 (ggml's make_qkx2_quants with nmax = levels, rmin = first,
// rdelta 0.1, nstep = steps, squared error). Writes the quants, sets *offset, returns the scale.
float fit_min_sub_block(const SubBlockSearch& search, const float* x, const float* w, uint8_t* q, float* offset) {
    constexpr int n = 32;
    float lo = x[0];
    float hi = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (lo > 0) lo = 0;  // the offset only ever subtracts: an all-positive block starts at 0
    if (hi == lo) {      // constant non-positive block: all of it in the offset
        std::fill(q, q + n, uint8_t{0});
        *offset = -lo;
        return 0.0f;
    }

    // First guess: the range split evenly into `levels` steps.
    const int levels = search.levels;
    float inv = static_cast<float>(levels) / (hi - lo);
    float scale = 1.0f / inv;
    float best_error = 0.0f;
    for (int i = 0; i < n; ++i) {
        q[i] = static_cast<uint8_t>(std::clamp(round_to_int(inv * (x[i] - lo)), 0, levels));
        const float diff = scale * q[i] + lo - x[i];
        best_error += w[i] * (diff * diff);
    }

    // Then, for each candidate step count, the quants it gives and the scale and offset that
    // fit them best (offset clamped to >= 0); keep the candidate with the smallest error. As in
    // ggml, an accepted candidate's offset replaces `lo`, so the later candidates measure from
    // it (x - lo, hi - lo) rather than from the block's minimum.
    uint8_t trial[n];
    for (int step = 0; step <= search.steps; ++step) {
        inv = (search.first + kSearchStep * static_cast<float>(step) + static_cast<float>(levels)) / (hi - lo);
        float sum_l = 0.0f;
        float sum_l2 = 0.0f;
        float sum_xl = 0.0f;
        for (int i = 0; i < n; ++i) {
            const int l = std::clamp(round_to_int(inv * (x[i] - lo)), 0, levels);
            trial[i] = static_cast<uint8_t>(l);
            const float wl = w[i] * static_cast<float>(l);
            sum_l += wl;
            sum_l2 += wl * static_cast<float>(l);
            sum_xl += wl * x[i];
        }
        const float det = sum_w * sum_l2 - sum_l * sum_l;
        if (!(det > 0.0f)) continue;
        float trial_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
        float trial_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
        if (trial_min > 0.0f) {
            trial_min = 0.0f;
            trial_scale = sum_xl / sum_l2;
        }
        float error = 0.0f;
        for (int i = 0; i < n; ++i) {
            const float diff = trial_scale * trial[i] + trial_min - x[i];
            error += w[i] * (diff * diff);
        }
        if (error < best_error) {
            std::copy(trial, trial + n, q);
            best_error = error;
            scale = trial_scale;
            lo = trial_min;
        }
    }
    *offset = -lo;
    return scale;
}

// Stores the 6-bit scale and min of sub-block j: j < 4 in the low six bits of scales[j] and
// scales[j + 4]; j >= 4 as nibbles of scales[j + 4], their top two bits in the spare top bits
// of scales[j - 4] (scale) and scales[j] (min). The inverse of k4_scale_min.
void put_k4_scale_min(int j, uint8_t sc, uint8_t m, uint8_t* scales) {
    if (j < 4) {
        scales[j] = sc;
        scales[j + 4] = m;
    } else {
        scales[j + 4] = static_cast<uint8_t>((sc & 0xF) | ((m & 0xF) << 4));
        scales[j - 4] |= static_cast<uint8_t>((sc >> 4) << 6);
        scales[j] |= static_cast<uint8_t>((m >> 4) << 6);
    }
}

// A 6-bit code for v >= 0 on the grid max/63 (inv = 63/max): rounded, wrapped to a byte as
// ggml's uint8_t does, then capped at 63.
uint8_t six_bit_code(float inv, float v) {
    return std::min(uint8_t{63}, static_cast<uint8_t>(round_to_int(inv * v)));
}

// The part Q4_K and Q5_K share: fits the 8 sub-blocks, stores their 6-bit scales and mins with d
// and dmin, and leaves in q the quants (0..levels) against the scales as stored.
template <typename Block>
void fit_scales_and_mins(const SubBlockSearch& search, const float* x, Block& b, uint8_t q[QK_K]) {
    float scales[QK_K / 32];
    float offsets[QK_K / 32];
    float max_scale = 0.0f;
    float max_offset = 0.0f;
    for (int j = 0; j < QK_K / 32; ++j) {
        const float* xs = x + 32 * j;
        // Weights: |x| plus the sub-block's RMS, so small values still count.
        float sum_x2 = 0.0f;
        for (int i = 0; i < 32; ++i) sum_x2 += xs[i] * xs[i];
        const float rms = std::sqrt(sum_x2 / 32.0f);
        float w[32];
        for (int i = 0; i < 32; ++i) w[i] = rms + std::fabs(xs[i]);
        scales[j] = fit_min_sub_block(search, xs, w, q + 32 * j, &offsets[j]);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (offsets[j] > max_offset) max_offset = offsets[j];
    }

    // The sub-block scales and offsets as 6-bit multiples of the super-block's d and dmin.
    const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    const float inv_offset = max_offset > 0.0f ? 63.0f / max_offset : 0.0f;
    for (int j = 0; j < QK_K / 32; ++j) {
        put_k4_scale_min(j, six_bit_code(inv_scale, scales[j]),
                         six_bit_code(inv_offset, offsets[j]), b.scales);
    }
    b.d = fp32_to_fp16(max_scale / 63.0f);
    b.dmin = fp32_to_fp16(max_offset / 63.0f);

    // Requantize against the scales as stored; a sub-block whose scale came out 0 keeps the
    // quants of its fit.
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc;
        uint8_t m;
        k4_scale_min(j, b.scales, &sc, &m);
        const float d = fp16_to_fp32(b.d) * sc;
        if (d == 0.0f) continue;
        const float dm = fp16_to_fp32(b.dmin) * m;
        for (int i = 0; i < 32; ++i) {
            const int l = round_to_int((x[32 * j + i] + dm) / d);
            q[32 * j + i] = static_cast<uint8_t>(std::clamp(l, 0, search.levels));
        }
    }
}

void quantize_q4_k_block(const float* x, BlockQ4_K& b) {
    uint8_t q[QK_K];
    fit_scales_and_mins(kQ4Search, x, b, q);

    // Each 64 elements fill 32 bytes: the first 32 in the low nibbles, the next 32 above.
    for (int c = 0; c < QK_K / 64; ++c)
        for (int i = 0; i < 32; ++i)
            b.qs[32 * c + i] = static_cast<uint8_t>(q[64 * c + i] | (q[64 * c + 32 + i] << 4));
}

void quantize_q5_k_block(const float* x, BlockQ5_K& b) {
    uint8_t q[QK_K];
    fit_scales_and_mins(kQ5Search, x, b, q);
    // As Q4_K's nibbles, with each quant's fifth bit in qh: element i of 64-element chunk c at
    // bit 2c of qh[i], element 32 + i at bit 2c + 1.
    for (int c = 0; c < QK_K / 64; ++c)
        for (int i = 0; i < 32; ++i) {
            const uint8_t first = q[64 * c + i], second = q[64 * c + 32 + i];
            b.qs[32 * c + i] = static_cast<uint8_t>((first & 0x0F) | ((second & 0x0F) << 4));
            b.qh[i] = static_cast<uint8_t>(b.qh[i] | ((first >> 4) << (2 * c)) | ((second >> 4) << (2 * c + 1)));
        }
}

// ----- Q6_K: 16 sub-blocks of 16, x ~ d*sc*(q - 32), q in [0, 63], int8 sc

constexpr int kQ6Half = 32;         // quants are stored biased by 32: signed range [-32, 31]
constexpr int kQ6SearchSteps = 9;   // candidate scales -(32 + 0.1*step)/max, step -9..9

// Symmetric fit of a 16-element sub-block, weighted by x^2 (ggml's make_qx_quants with nmax 32,
// rmse_type 1, no importance weights). Writes q + 32 into `q` and returns the scale, negative
// when the largest |x| is positive (the extreme lands on -32, the level with no mirror).
float fit_q6_sub_block(const float* x, int8_t* q) {
    constexpr int n = 16;
    float amax = 0.0f;
    float max = 0.0f;  // the element of largest |x|, sign kept, first one on a tie
    for (int i = 0; i < n; ++i) {
        if (std::fabs(x[i]) > amax) {
            amax = std::fabs(x[i]);
            max = x[i];
        }
    }
    if (amax < kZeroGroup) {  // note: level 0, not the zero point; its scale of 0 makes it 0
        std::fill(q, q + n, int8_t{0});
        return 0.0f;
    }

    // Quants for 1/scale = inv and the sums of the weighted least-squares scale for them.
    struct Sums { float xl; float l2; };
    const auto sums_for = [&](float inv, bool store) {
        Sums s{0.0f, 0.0f};
        for (int i = 0; i < n; ++i) {
            const int l = std::clamp(round_to_int(inv * x[i]), -kQ6Half, kQ6Half - 1);
            if (store) q[i] = static_cast<int8_t>(l + kQ6Half);
            const float w = x[i] * x[i];
            s.xl += w * x[i] * static_cast<float>(l);
            s.l2 += w * static_cast<float>(l) * static_cast<float>(l);
        }
        return s;
    };

    Sums s = sums_for(static_cast<float>(-kQ6Half) / max, true);
    float scale = s.l2 != 0.0f ? s.xl / s.l2 : 0.0f;
    float best = scale * s.xl;  // the error reduction the scale buys; larger is better
    for (int step = -kQ6SearchSteps; step <= kQ6SearchSteps; ++step) {
        if (step == 0) continue;
        const float inv = -(static_cast<float>(kQ6Half) + 0.1f * static_cast<float>(step)) / max;
        s = sums_for(inv, false);
        if (s.l2 > 0.0f && s.xl * s.xl > best * s.l2) {
            sums_for(inv, true);
            scale = s.xl / s.l2;
            best = scale * s.xl;
        }
    }
    return scale;
}

void quantize_q6_k_block(const float* x, BlockQ6_K& b) {
    int8_t q[QK_K];
    float scales[QK_K / 16];
    float max_scale = 0.0f;  // the sub-block scale of largest magnitude, sign kept
    float max_abs = 0.0f;
    for (int j = 0; j < QK_K / 16; ++j) {
        scales[j] = fit_q6_sub_block(x + 16 * j, q + 16 * j);
        if (std::fabs(scales[j]) > max_abs) {
            max_abs = std::fabs(scales[j]);
            max_scale = scales[j];
        }
    }
    if (max_abs < kZeroGroup) return;  // the block stays all zero bytes, d = +0

    // int8 sub-block scales on the grid d = max_scale / -128 (the largest one maps to -128).
    const float inv = -128.0f / max_scale;
    b.d = fp32_to_fp16(1.0f / inv);
    for (int j = 0; j < QK_K / 16; ++j)
        b.scales[j] = static_cast<int8_t>(std::min(127, round_to_int(inv * scales[j])));

    // Requantize against the stored scales; a sub-block whose scale is 0 keeps its fit's quants.
    for (int j = 0; j < QK_K / 16; ++j) {
        const float d = fp16_to_fp32(b.d) * b.scales[j];
        if (d == 0.0f) continue;
        for (int i = 0; i < 16; ++i) {
            const int l = round_to_int(x[16 * j + i] / d);
            q[16 * j + i] = static_cast<int8_t>(std::clamp(l, -kQ6Half, kQ6Half - 1) + kQ6Half);
        }
    }

    // Each 128 elements: low nibbles of elements i and i+64 share ql[i], of i+32 and i+96
    // share ql[i+32]; the top two bits of i, i+32, i+64, i+96 fill qh[i] from the bottom up.
    for (int c = 0; c < QK_K / 128; ++c) {
        const int8_t* qc = q + 128 * c;
        uint8_t* ql = b.ql + 64 * c;
        uint8_t* qh = b.qh + 32 * c;
        for (int i = 0; i < 32; ++i) {
            ql[i] = static_cast<uint8_t>((qc[i] & 0xF) | ((qc[i + 64] & 0xF) << 4));
            ql[i + 32] = static_cast<uint8_t>((qc[i + 32] & 0xF) | ((qc[i + 96] & 0xF) << 4));
            qh[i] = static_cast<uint8_t>((qc[i] >> 4) | ((qc[i + 32] >> 4) << 2) |
                                         ((qc[i + 64] >> 4) << 4) | ((qc[i + 96] >> 4) << 6));
        }
    }
}

}  // namespace

void quantize_q4_k(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockQ4_K>(x, dst, n, QK_K, quantize_q4_k_block);
}

void quantize_q5_k(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockQ5_K>(x, dst, n, QK_K, quantize_q5_k_block);
}

void quantize_q6_k(const float* x, void* dst, int64_t n) {
    quantize_blocks<BlockQ6_K>(x, dst, n, QK_K, quantize_q6_k_block);
}

}  // namespace workbench::quant
