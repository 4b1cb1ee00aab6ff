// Tests of the reference dequantizers and the fp16/bf16 conversions: every dequantizable type
// against gguf-py's output (tests/data/dequant/, bit for bit), the half conversions over all
// 65536 inputs and their edge cases, and the refusals for types without a dequantizer.
#include <QTest>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dequant_golden.h"
#include "tensor/dequantize.h"

using namespace workbench;
using namespace workbench::test;

namespace {

bool is_fp16_nan(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }
bool is_bf16_nan(uint16_t h) { return (h & 0x7F80u) == 0x7F80u && (h & 0x7Fu) != 0; }

}  // namespace

class TestDequantize : public QObject {
    Q_OBJECT

private slots:
    void matchesGguf_data() {
        // Q8_1 has no dequantizer (activations only); its file is read by test_quantize.
        add_golden_rows({"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k",
                         "q3_k", "q4_k", "q5_k", "q6_k", "q8_k", "mxfp4"});
    }

    // The floats gguf-py's dequantizer produced for the stored blocks, to the bit. Exact
    // equality is expected: fp16 -> fp32 is exact and both sides round the same float32
    // products and sums once each (see dequantize.cpp).
    void matchesGguf() {
        QFETCH(QString, name);
        auto loaded = load_dequant_golden(name.toStdString());
        if (auto* err = std::get_if<std::string>(&loaded)) QFAIL(err->c_str());
        const auto& g = std::get<DequantGolden>(loaded);
        QVERIFY(dtype_name(g.type) == name.toStdString());

        std::vector<float> out(g.n_elements, -12345.0f);
        QVERIFY(dequantize_row(g.type, g.blocks.data(), out.data(), g.n_elements));
        const std::string diff = first_float_mismatch(out, g.dequantized);
        QVERIFY2(diff.empty(), diff.c_str());

        // Mapped tensor data need not be aligned for the block structs: shift it by one byte.
        std::vector<uint8_t> shifted(g.blocks.size() + 1);
        std::memcpy(shifted.data() + 1, g.blocks.data(), g.blocks.size());
        std::vector<float> out_shifted(g.n_elements);
        QVERIFY(dequantize_row(g.type, shifted.data() + 1, out_shifted.data(), g.n_elements));
        QVERIFY(first_float_mismatch(out_shifted, g.dequantized).empty());
    }

    // Only a prefix of whole blocks is written: rows are converted block by block.
    void dequantizesPrefixOfBlocks() {
        auto loaded = load_dequant_golden("q4_k");
        if (auto* err = std::get_if<std::string>(&loaded)) QFAIL(err->c_str());
        const auto& g = std::get<DequantGolden>(loaded);
        std::vector<float> out(g.n_elements, 7.0f);
        QVERIFY(dequantize_row(g.type, g.blocks.data(), out.data(), QK_K));
        for (int i = 0; i < QK_K; ++i) QCOMPARE(bits_of(out[i]), bits_of(g.dequantized[i]));
        QCOMPARE(out[QK_K], 7.0f);
    }

    // A zero quant times a negative scale is -0 in ggml and numpy; it must stay -0.
    void keepsNegativeZeros() {
        uint8_t q5_0[22] = {};
        const uint16_t d = fp32_to_fp16(-0.5f);
        std::memcpy(q5_0, &d, 2);
        const uint32_t qh = 0xFFFFFFFFu;  // fifth bits set, low nibbles 0: every quant is 16
        std::memcpy(q5_0 + 2, &qh, 4);
        float out[32];
        QVERIFY(dequantize_row(DType::q5_0, q5_0, out, 32));
        for (float v : out) QCOMPARE(bits_of(v), 0x80000000u);

        uint8_t q4_0[18];
        std::memset(q4_0, 0x88, sizeof q4_0);  // every quant 8, i.e. zero
        std::memcpy(q4_0, &d, 2);
        QVERIFY(dequantize_row(DType::q4_0, q4_0, out, 32));
        for (float v : out) QCOMPARE(bits_of(v), 0x80000000u);
    }

    void fp16RoundTripsEveryHalf() {
        int nans = 0;
        for (uint32_t h = 0; h <= 0xFFFF; ++h) {
            const auto half = static_cast<uint16_t>(h);
            const float f = fp16_to_fp32(half);
            if (is_fp16_nan(half)) {
                ++nans;
                QVERIFY(std::isnan(f));
                QVERIFY(is_fp16_nan(fp32_to_fp16(f)));
                if (half & 0x200u) QCOMPARE(fp32_to_fp16(f), half);  // quiet NaNs keep payload
                continue;
            }
            if (fp32_to_fp16(f) != half) QFAIL(qPrintable(QString("half 0x%1").arg(h, 4, 16)));
        }
        QCOMPARE(nans, 2 * 1023);
    }

    void fp16Values() {
        QCOMPARE(fp16_to_fp32(0x3C00), 1.0f);
        QCOMPARE(fp16_to_fp32(0xC000), -2.0f);
        QCOMPARE(fp16_to_fp32(0x7BFF), 65504.0f);
        QCOMPARE(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
        QCOMPARE(fp16_to_fp32(0x03FF), std::ldexp(1023.0f, -24));  // largest subnormal
        QCOMPARE(fp16_to_fp32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
        QCOMPARE(bits_of(fp16_to_fp32(0x8000)), 0x80000000u);
        QCOMPARE(fp16_to_fp32(0x7C00), std::numeric_limits<float>::infinity());
        QCOMPARE(fp16_to_fp32(0xFC00), -std::numeric_limits<float>::infinity());

        QCOMPARE(fp32_to_fp16(65519.99f), uint16_t{0x7BFF});
        QCOMPARE(fp32_to_fp16(65520.0f), uint16_t{0x7C00});  // the tie above 65504 goes to inf
        QCOMPARE(fp32_to_fp16(-1e9f), uint16_t{0xFC00});
        QCOMPARE(fp32_to_fp16(std::ldexp(1.0f, -25)), uint16_t{0x0000});  // tie to even: 0
        QCOMPARE(fp32_to_fp16(std::ldexp(1.5f, -25)), uint16_t{0x0001});
        QCOMPARE(fp32_to_fp16(std::ldexp(3.0f, -25)), uint16_t{0x0002});  // tie to even: 2
        QCOMPARE(fp32_to_fp16(std::ldexp(1023.5f, -24)), uint16_t{0x0400});  // into normals
        QCOMPARE(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), uint16_t{0x3C00});
        QCOMPARE(fp32_to_fp16(1.0f + std::ldexp(3.0f, -11)), uint16_t{0x3C02});
        QCOMPARE(fp32_to_fp16(1e-40f), uint16_t{0x0000});  // float subnormal
        QCOMPARE(fp32_to_fp16(-0.0f), uint16_t{0x8000});
        QCOMPARE(fp32_to_fp16(std::numeric_limits<float>::quiet_NaN()), uint16_t{0x7E00});
        QCOMPARE(fp32_to_fp16(float_of(0xFFC00000u)), uint16_t{0xFE00});
        QCOMPARE(fp32_to_fp16(float_of(0x7F800001u)), uint16_t{0x7E00});  // signalling: quieted
    }

#if defined(__FLT16_MAX__)
    // The compiler's own float -> _Float16 conversion (round to nearest even) as a second
    // opinion, over a spread of float bit patterns that hits every exponent.
    void fp16MatchesCompilerConversion() {
        for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 4093) {
            const float f = float_of(static_cast<uint32_t>(u));
            if (std::isnan(f)) continue;
            const auto h = static_cast<_Float16>(f);
            uint16_t want;
            std::memcpy(&want, &h, sizeof want);
            if (fp32_to_fp16(f) != want)
                QFAIL(describe_float(f).c_str());
        }
    }
#endif

    void bf16RoundTripsEveryValue() {
        for (uint32_t h = 0; h <= 0xFFFF; ++h) {
            const auto half = static_cast<uint16_t>(h);
            const float f = bf16_to_fp32(half);
            QCOMPARE(bits_of(f), h << 16);  // widening is exact, subnormals and NaNs included
            if (is_bf16_nan(half)) {
                QCOMPARE(fp32_to_bf16(f), static_cast<uint16_t>(half | 0x40u));  // made quiet
                continue;
            }
            if (fp32_to_bf16(f) != half) QFAIL(qPrintable(QString("bf16 0x%1").arg(h, 4, 16)));
        }
    }

    void bf16Values() {
        QCOMPARE(fp32_to_bf16(float_of(0x3F808000u)), uint16_t{0x3F80});  // tie, to even
        QCOMPARE(fp32_to_bf16(float_of(0x3F818000u)), uint16_t{0x3F82});  // tie, to even
        QCOMPARE(fp32_to_bf16(float_of(0x3F808001u)), uint16_t{0x3F81});
        QCOMPARE(fp32_to_bf16(std::numeric_limits<float>::max()), uint16_t{0x7F80});  // inf
        QCOMPARE(fp32_to_bf16(float_of(0x00000001u)), uint16_t{0x0000});  // tiny subnormal
        QCOMPARE(fp32_to_bf16(float_of(0x00018000u)), uint16_t{0x0002});  // subnormal tie
        QCOMPARE(fp32_to_bf16(float_of(0x7F800001u)), uint16_t{0x7FC0});  // signalling NaN
        QCOMPARE(fp32_to_bf16(float_of(0xFFC00000u)), uint16_t{0xFFC0});
        QCOMPARE(fp32_to_bf16(-std::numeric_limits<float>::infinity()), uint16_t{0xFF80});
    }

    // Every type the traits table marks as not dequantizable is refused, and nothing is written.
    void refusesTypesWithoutDequantizer() {
        int refused = 0;
        for (uint32_t raw = 0; raw < 64; ++raw) {
            const auto traits = dtype_traits(raw);
            if (!traits || traits->dequantizable) continue;
            std::vector<uint8_t> src(traits->block_bytes * 4, 0x11);
            std::vector<float> dst(traits->block_elements * 4, 3.0f);
            QVERIFY2(!dequantize_row(traits->type, src.data(), dst.data(),
                                     traits->block_elements * 4),
                     std::string(traits->name).c_str());
            for (float v : dst) QCOMPARE(v, 3.0f);
            ++refused;
        }
        QVERIFY(refused >= 6);  // q8_1, i8, i16, i32, i64, f64
        QVERIFY(!dequantize_row(DType::i32, nullptr, nullptr, 0));
        QVERIFY(!dequantize_row(static_cast<DType>(99), nullptr, nullptr, 0));
    }

    void refusesPartialBlocks() {
        std::vector<uint8_t> src(1024, 0);
        std::vector<float> dst(512, 0.0f);
        QVERIFY(!dequantize_row(DType::q4_0, src.data(), dst.data(), 33));
        QVERIFY(!dequantize_row(DType::q6_k, src.data(), dst.data(), 128));
        QVERIFY(!dequantize_row(DType::f16, src.data(), dst.data(), -1));
        QVERIFY(dequantize_row(DType::q4_0, src.data(), dst.data(), 0));  // empty row: no-op
    }
};

QTEST_APPLESS_MAIN(TestDequantize)
#include "test_dequantize.moc"
