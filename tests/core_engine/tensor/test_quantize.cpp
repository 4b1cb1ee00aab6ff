// Tests of the reference quantizers: the bytes quantize_row writes equal gguf-py's quantize()
// output (tests/data/dequant/) and, for Q4_K and Q6_K, llama.cpp's own quantizer's
// (tests/data/kquant/), and the fields the dot-product kernels rely on (Q8_1's s, Q8_K's bsums)
// and the degenerate blocks (all zero, constant) come out as ggml makes them.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dequant_golden.h"
#include "tensor/dequantize.h"
#include "tensor/quant_blocks.h"

using namespace workbench;
using namespace workbench::test;

namespace {

std::vector<uint8_t> quantized(DType type, const std::vector<float>& x) {
    std::vector<uint8_t> out(dtype_row_bytes(dtype_traits(type), x.size()), 0xCD);
    if (!quantize_row(type, x.data(), out.data(), static_cast<int64_t>(x.size()))) out.clear();
    return out;
}

// Deterministic pseudo-random floats in [-1, 1) (a 64-bit LCG's top 24 bits).
struct Lcg {
    uint64_t state;
    float next() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<float>(state >> 40) / static_cast<float>(1 << 23) - 1.0f;
    }
};

}  // namespace

class TestQuantize : public QObject {
    Q_OBJECT

    // Our quantize_row of a golden's input equals the golden's blocks byte for byte.
    void check_quantized_bytes(const QString& name, const char* dir) {
        auto loaded = load_dequant_golden(name.toStdString(), dir);
        if (auto* err = std::get_if<std::string>(&loaded)) QFAIL(err->c_str());
        const auto& g = std::get<DequantGolden>(loaded);
        QVERIFY(g.has_input);
        const std::vector<uint8_t> got = quantized(g.type, g.input);
        QVERIFY2(!got.empty(), "quantize_row refused the type");
        const std::string diff = first_byte_mismatch(got, g.blocks, dtype_traits(g.type).block_bytes);
        QVERIFY2(diff.empty(), diff.c_str());
    }

private slots:
    void matchesGguf_data() {
        add_golden_rows(
            {"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q8_k", "mxfp4"});
    }

    // The stored blocks are gguf-py's quantization of the stored input (for Q8_1 and Q8_K,
    // which gguf cannot quantize, the script's transcription of ggml's reference). Q4_0/Q5_0
    // round x*id + offset once, as ggml built with FMA and gguf-py do.
    void matchesGguf() {
        QFETCH(QString, name);
        check_quantized_bytes(name, "dequant");
    }

    void matchesLlamaCpp_data() { add_golden_rows({"q4_k", "q5_k", "q6_k"}); }

    // The stored blocks are llama.cpp's quantization of the stored input (ggml's
    // quantize_row_q{4,5,6}_K_ref, 12 rows of 512 with outliers, constant,
    // tiny, all-zero and grid-valued rows); our dequantization of them equals gguf-py's.
    void matchesLlamaCpp() {
        QFETCH(QString, name);
        check_quantized_bytes(name, "kquant");
        if (QTest::currentTestFailed()) return;
        auto loaded = load_dequant_golden(name.toStdString(), "kquant");
        const auto& g = std::get<DequantGolden>(loaded);
        std::vector<float> back(g.n_elements);
        QVERIFY(dequantize_row(g.type, g.blocks.data(), back.data(), g.n_elements));
        const std::string fdiff = first_float_mismatch(back, g.dequantized);
        QVERIFY2(fdiff.empty(), fdiff.c_str());
    }

    // Q4_K, Q5_K and Q6_K on random data: quantize, dequantize, and each value's error stays within
    // half a step of its sub-block's grid plus half a step of the widest sub-block's grid in
    // the super-block (the sub-block scales are stored as 6-bit / int8 multiples of a step
    // set by the widest; measured against ggml: at most 0.87 of that for Q4_K, 0.54 for Q6_K).
    // A grid step: (max(x, 0) - min(x, 0)) / 15 (Q5_K: / 31) over 32 values for Q4_K, max|x| / 32
    // over 16 for Q6_K. Magnitudes 0.1 to 1000 keep the fp16 super-block scales normal (smaller data
    // loses precision to subnormal or zero d, as in ggml). Also each super-block's relative
    // RMS error: about 4, 5 and 6 bits of precision.
    void kQuantRoundTrip() {
        constexpr int kBlocks = 64;
        std::vector<float> x(kBlocks * QK_K);
        Lcg rng{12345};
        for (int b = 0; b < kBlocks; ++b) {
            const float magnitude = std::pow(10.0f, static_cast<float>(b % 5) - 1.0f);
            for (int j = 0; j < QK_K; ++j) {
                float v = rng.next() + rng.next() + rng.next();  // roughly bell-shaped
                if (b % 4 == 1) v = std::fabs(v) + 0.5f;           // all positive
                if (b % 4 == 2 && j % 37 == 0) v *= 20.0f;        // outliers
                x[b * QK_K + j] = v * magnitude;
            }
        }
        struct Case { DType type; int group; float levels; float max_rms; };
        for (const Case c : {Case{DType::q4_k, 32, 15.0f, 0.15f}, Case{DType::q5_k, 32, 31.0f, 0.08f},
                             Case{DType::q6_k, 16, 32.0f, 0.05f}}) {
            const auto blocks = quantized(c.type, x);
            QVERIFY(!blocks.empty());
            std::vector<float> back(x.size());
            QVERIFY(dequantize_row(c.type, blocks.data(), back.data(),
                                   static_cast<int64_t>(x.size())));
            const int groups = QK_K / c.group;
            for (int b = 0; b < kBlocks; ++b) {
                std::vector<float> step(groups);
                for (int g = 0; g < groups; ++g) {
                    float lo = 0.0f, hi = 0.0f, amax = 0.0f;
                    for (int j = 0; j < c.group; ++j) {
                        const float v = x[b * QK_K + g * c.group + j];
                        lo = std::min(lo, v);
                        hi = std::max(hi, v);
                        amax = std::max(amax, std::fabs(v));
                    }
                    step[g] = (c.type == DType::q6_k ? amax : hi - lo) / c.levels;
                }
                const float widest = *std::max_element(step.begin(), step.end());
                double err = 0.0, ref = 0.0;
                for (int j = 0; j < QK_K; ++j) {
                    const size_t i = static_cast<size_t>(b) * QK_K + j;
                    const float allowed = 0.5f * (step[j / c.group] + widest);
                    QVERIFY2(std::fabs(back[i] - x[i]) <= allowed,
                             qPrintable(QString("%1[%2]: %3 for %4, allowed error %5")
                                            .arg(dtype_name(c.type).data()).arg(i)
                                            .arg(back[i]).arg(x[i]).arg(allowed)));
                    err += static_cast<double>(back[i] - x[i]) * (back[i] - x[i]);
                    ref += static_cast<double>(x[i]) * x[i];
                }
                QVERIFY2(std::sqrt(err / ref) <= c.max_rms,
                         qPrintable(QString("%1 block %2: relative RMS error %3")
                                        .arg(dtype_name(c.type).data()).arg(b)
                                        .arg(std::sqrt(err / ref))));
            }
        }
    }

    // Q8_1's s is fp16(d * sum(q)) from the float d; Q8_K's bsums are sums of 16 quants.
    void activationSums() {
        std::vector<float> x(QK_K);
        for (int i = 0; i < QK_K; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;

        const auto q81 = quantized(DType::q8_1, x);
        QCOMPARE(q81.size(), size_t{8 * 36});
        for (int b = 0; b < 8; ++b) {
            const auto blk = quant::load_block<quant::BlockQ8_1>(q81.data(), b);
            int sum = 0;
            for (int8_t q : blk.qs) sum += q;
            float amax = 0.0f;
            for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[32 * b + j]));
            QCOMPARE(blk.d, fp32_to_fp16(amax / 127.0f));
            QCOMPARE(blk.s, fp32_to_fp16(static_cast<float>(sum) * (amax / 127.0f)));
        }

        const auto q8k = quantized(DType::q8_k, x);
        const auto blk = quant::load_block<quant::BlockQ8_K>(q8k.data(), 0);
        for (int g = 0; g < QK_K / 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) sum += blk.qs[16 * g + j];
            QCOMPARE(int{blk.bsums[g]}, sum);
        }
        int extreme = 0;
        for (int8_t q : blk.qs) extreme = std::max(extreme, std::abs(int{q}));
        QCOMPARE(extreme, 127);
    }

    // All-zero blocks: d = 0 and every quant at its zero point; they dequantize to zeros.
    void zeroBlocks() {
        const std::vector<float> zeros(QK_K, 0.0f);
        for (DType type : {DType::q4_0, DType::q4_1, DType::q5_0, DType::q5_1, DType::q8_0,
                           DType::q8_k, DType::q4_k, DType::q5_k, DType::q6_k}) {
            const auto blocks = quantized(type, zeros);
            QVERIFY(!blocks.empty());
            std::vector<float> back(QK_K, 1.0f);
            QVERIFY(dequantize_row(type, blocks.data(), back.data(), QK_K));
            for (float v : back) QCOMPARE(v, 0.0f);
        }
        const auto q8k = quantized(DType::q8_k, zeros);
        const auto blk = quant::load_block<quant::BlockQ8_K>(q8k.data(), 0);
        QCOMPARE(blk.d, 0.0f);
        for (int16_t s : blk.bsums) QCOMPARE(int{s}, 0);  // ggml leaves these unwritten
        // ggml zeroes a whole all-zero Q6_K block; Q4_K's and Q5_K's come out all zero bytes too
        for (DType type : {DType::q4_k, DType::q5_k, DType::q6_k})
            for (uint8_t byte : quantized(type, zeros)) QCOMPARE(byte, uint8_t{0});
    }

    // A constant block comes back exactly when its value and value/8 (/16) are fp16 values:
    // the min/max types store d = 0 and m = the value, Q4_0/Q5_0 put it at level 0. (Q8_0's
    // d = value/127 is not exact in fp16, so it is left out.)
    void constantBlocks() {
        const std::vector<float> x(32, -1.25f);
        for (DType type : {DType::q4_1, DType::q5_1, DType::q4_0, DType::q5_0}) {
            const auto blocks = quantized(type, x);
            std::vector<float> back(32);
            QVERIFY(dequantize_row(type, blocks.data(), back.data(), 32));
            for (float v : back) QCOMPARE(v, -1.25f);
        }
    }

    // Quantize then dequantize stays within a bound per type, as a fraction of the block's
    // largest |x|: half a step, or a whole one for the value Q4_0/Q5_0 clip (the extreme of
    // the other sign lands one level past the top).
    void roundTripError() {
        std::vector<float> x(4 * QK_K);
        for (size_t i = 0; i < x.size(); ++i)
            x[i] = std::cos(0.113f * static_cast<float>(i)) * (1.0f + static_cast<float>(i % 7));
        struct Case { DType type; float max_error; };
        for (const Case c : {Case{DType::q4_0, 1.0f / 8}, Case{DType::q4_1, 1.0f / 15},
                             Case{DType::q5_0, 1.0f / 16}, Case{DType::q5_1, 1.0f / 31},
                             Case{DType::q8_0, 1.0f / 254}, Case{DType::q8_k, 1.0f / 254}}) {
            const auto blocks = quantized(c.type, x);
            std::vector<float> back(x.size());
            QVERIFY(dequantize_row(c.type, blocks.data(), back.data(),
                                   static_cast<int64_t>(x.size())));
            const int block = static_cast<int>(dtype_traits(c.type).block_elements);
            for (size_t b = 0; b < x.size() / block; ++b) {
                float range = 0.0f;
                for (int j = 0; j < block; ++j) range = std::max(range, std::fabs(x[b * block + j]));
                for (int j = 0; j < block; ++j) {
                    const size_t i = b * block + j;
                    // the bound, plus slack for the fp16 rounding of d and m
                    const float allowed = range * (c.max_error + 1.0f / 512.0f);
                    QVERIFY2(std::fabs(back[i] - x[i]) <= allowed,
                             qPrintable(QString("%1[%2]").arg(dtype_name(c.type).data()).arg(i)));
                }
            }
        }
    }

    void refusesTypesWithoutQuantizer() {
        const std::vector<float> x(QK_K, 0.5f);
        std::vector<uint8_t> out(4096, 0xCD);
        for (DType type : {DType::q2_k, DType::q3_k, DType::i8, DType::i32,
                           DType::f64}) {
            QVERIFY2(!quantize_row(type, x.data(), out.data(), QK_K), dtype_name(type).data());
        }
        for (uint8_t byte : out) QCOMPARE(byte, uint8_t{0xCD});
        QVERIFY(!quantize_row(DType::q8_0, x.data(), out.data(), 48));  // not whole blocks
        QVERIFY(!quantize_row(DType::q8_k, x.data(), out.data(), 32));
        QVERIFY(!quantize_row(DType::q4_k, x.data(), out.data(), 128));
        QVERIFY(!quantize_row(DType::q5_k, x.data(), out.data(), 128));
        QVERIFY(!quantize_row(DType::q6_k, x.data(), out.data(), 128));
        QVERIFY(!quantize_row(static_cast<DType>(99), x.data(), out.data(), 32));
    }
};

QTEST_APPLESS_MAIN(TestQuantize)
#include "test_quantize.moc"
