// KV row conversions: the SIMD decodes equal the reference dequantizers bit for bit, fp8 e4m3
// round-trips every finite code and rounds within half a step, q2_0 meets each value's nearest
// level with a step no worse than the plain amax step, and the Hadamard rotation keeps dot
// products (so rotated keys and queries score as before).
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kv_blocks/kv_row_codec.h"
#include "tensor/dequantize.h"
#include "tensor/half_convert.h"

using namespace workbench;

class TestKvRowCodec : public QObject {
    Q_OBJECT
private slots:
    void simd_decode_equals_reference() {
        std::mt19937 rng(7);
        std::normal_distribution<float> nd(0, 2);
        for (int it = 0; it < 500; ++it) {
            std::vector<float> x(64);
            for (auto& v : x) v = nd(rng) * static_cast<float>(1 + it % 9);
            for (auto [kt, dt] : {std::pair{KvDType::q8_0, DType::q8_0}, {KvDType::q4_0, DType::q4_0}, {KvDType::bf16, DType::bf16}}) {
                std::vector<uint8_t> enc(256);
                kv_encode_row(kt, x.data(), enc.data(), 64);
                std::vector<float> ours(64), ref(64);
                kv_decode_row(kt, enc.data(), ours.data(), 64);
                QVERIFY(dequantize_row(dt, enc.data(), ref.data(), 64));
                QVERIFY(std::memcmp(ours.data(), ref.data(), 64 * sizeof(float)) == 0);
            }
        }
    }

    void e4m3_codes_round_trip() {
        int finite = 0;
        for (int c = 0; c < 256; ++c) {
            const float v = e4m3_to_float(static_cast<uint8_t>(c));
            if (std::isnan(v)) continue;
            ++finite;
            const uint8_t back = float_to_e4m3(v);
            // ±0 both decode to 0; every other finite code comes back as itself.
            if (v == 0.0f) QCOMPARE(e4m3_to_float(back), 0.0f);
            else QCOMPARE(int(back), c);
        }
        QCOMPARE(finite, 254);
        QCOMPARE(e4m3_to_float(0x7e), 448.0f);
        QCOMPARE(e4m3_to_float(float_to_e4m3(1e6f)), 448.0f);  // saturates
        QCOMPARE(e4m3_to_float(0x01), std::ldexp(1.0f, -9));    // smallest subnormal
    }

    void fp8_rows_are_close() {
        std::mt19937 rng(3);
        std::normal_distribution<float> nd(0, 1);
        std::vector<float> x(64), y(64);
        for (auto& v : x) v = nd(rng);
        std::vector<uint8_t> enc(68);
        kv_encode_row(KvDType::fp8, x.data(), enc.data(), 64);
        kv_decode_row(KvDType::fp8, enc.data(), y.data(), 64);
        for (int b = 0; b < 2; ++b) {
            float amax = 0;
            for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
            for (int i = 0; i < 32; ++i) {
                const float v = x[b * 32 + i], err = std::fabs(v - y[b * 32 + i]);
                // Half a step of 3 mantissa bits (1/16 relative), or of the subnormal grid.
                QVERIFY(err <= std::max(std::fabs(v) / 16.0f, amax / 448.0f * std::ldexp(1.0f, -10)) * 1.01f);
            }
        }
    }

    void q2_0_rows_take_the_nearest_level_of_a_searched_step() {
        std::mt19937 rng(5);
        std::normal_distribution<float> nd(0, 1);
        double searched_err = 0, amax_err = 0;
        for (int it = 0; it < 300; ++it) {
            std::vector<float> x(64), y(64);
            for (auto& v : x) v = nd(rng) * static_cast<float>(1 + it % 7);
            if (it % 10 == 0) x[static_cast<size_t>(it % 64)] *= 8;   // an outlier now and then
            std::vector<uint8_t> enc(20);
            kv_encode_row(KvDType::q2_0, x.data(), enc.data(), 64);
            kv_decode_row(KvDType::q2_0, enc.data(), y.data(), 64);
            for (int b = 0; b < 2; ++b) {
                uint16_t d16;
                std::memcpy(&d16, &enc[static_cast<size_t>(b) * 10], 2);
                const float d = half_to_float(d16);
                float amax = 0;
                for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[static_cast<size_t>(b * 32 + i)]));
                const float d_amax = amax / 1.5f;
                QVERIFY(d > 0);
                for (int i = 0; i < 32; ++i) {
                    const float v = x[static_cast<size_t>(b * 32 + i)], got = y[static_cast<size_t>(b * 32 + i)];
                    // The decoded value is one of the four levels, and the nearest of them to v.
                    const float level = got / d + 1.5f;
                    QVERIFY(std::fabs(level - std::round(level)) < 1e-4f && level > -0.5f && level < 3.5f);
                    for (int c = 0; c < 4; ++c) QVERIFY(std::fabs(v - got) <= std::fabs(v - d * (c - 1.5f)) + 1e-5f * amax);
                    searched_err += static_cast<double>(v - got) * (v - got);
                    const float plain = d_amax * (std::clamp(std::floor(v / d_amax) + 2.0f, 0.0f, 3.0f) - 1.5f);
                    amax_err += static_cast<double>(v - plain) * (v - plain);
                }
            }
        }
        // Gaussian blocks: the searched step loses far less than spanning amax with the outer levels.
        QVERIFY2(searched_err < 0.75 * amax_err, qPrintable(QString("%1 vs %2").arg(searched_err).arg(amax_err)));
        std::vector<float> zeros(32, 0.0f), back(32, 1.0f);
        std::vector<uint8_t> enc(10);
        kv_encode_row(KvDType::q2_0, zeros.data(), enc.data(), 32);
        kv_decode_row(KvDType::q2_0, enc.data(), back.data(), 32);
        QVERIFY(back == zeros);
    }

    void hadamard_keeps_dot_products() {
        std::mt19937 rng(11);
        std::normal_distribution<float> nd(0, 1);
        std::vector<float> a(64), b(64);
        for (auto& v : a) v = nd(rng);
        for (auto& v : b) v = nd(rng);
        double before = 0;
        for (int i = 0; i < 64; ++i) before += static_cast<double>(a[i]) * b[i];
        auto ra = a, rb = b;
        hadamard_rotate(ra.data(), 64);
        hadamard_rotate(rb.data(), 64);
        double after = 0;
        for (int i = 0; i < 64; ++i) after += static_cast<double>(ra[i]) * rb[i];
        QVERIFY(std::fabs(before - after) < 1e-4);
        QVERIFY(ra != a);
        hadamard_rotate(ra.data(), 64);  // its own inverse
        for (int i = 0; i < 64; ++i) QVERIFY(std::fabs(ra[i] - a[i]) < 1e-5);
    }
};

QTEST_APPLESS_MAIN(TestKvRowCodec)
#include "test_kv_row_codec.moc"
