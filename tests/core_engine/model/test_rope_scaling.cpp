// RoPE scaling as the model's file asks (model/rope_scaling.h, kernels/cpu/rope): YaRN's
// magnitude as llama.cpp derives it (gpt-oss-like files: 1 + 0.1 ln factor on cos and sin;
// DeepSeek-V2's mscale = mscale_all_dim: 1, its attention scale carrying it instead), its ramp
// from the original frequency on the first pairs to the interpolated one on the last, and
// re-rotating a stored key by a shift: rotation_only turns it without scaling it again.
#include <QTest>

#include <cmath>
#include <vector>

#include "kernels/cpu/rope.h"
#include "model/rope_scaling.h"

using namespace workbench;

namespace {

ModelHparams yarn_model(float factor, float log_mul = 0.0f) {
    ModelHparams hp;
    hp.n_rot = 64;
    hp.rope_freq_base = 10000.0f;
    hp.rope_freq_scale = 1.0f / factor;
    hp.rope_style = RopeStyle::neox;
    hp.rope_yarn = true;
    hp.n_ctx_orig_yarn = 4096;
    hp.rope_yarn_log_mul = log_mul;
    hp.rope_yarn_mscale = log_mul;
    return hp;
}

RopeAngles angles_at(int32_t pos, const RopeParams& p) {
    RopeAngles a;
    rope_angles(&pos, 1, p, a);
    return a;
}

}  // namespace

class TestRopeScaling : public QObject {
    Q_OBJECT

private slots:
    void yarnScalesCosAndSinAsLlamaCppDoes() {
        for (const auto& [factor, log_mul, magnitude] : {std::tuple{32.0f, 0.0f, 1.0 + 0.1 * std::log(32.0)}, {40.0f, 0.707f, 1.0}}) {
            const RopeParams p = model_rope(yarn_model(factor, log_mul), false, nullptr);
            const RopeAngles a = angles_at(1234, p);
            for (int64_t i = 0; i < a.half; ++i) {
                const double m = std::hypot(static_cast<double>(a.cos[static_cast<size_t>(i)]), static_cast<double>(a.sin[static_cast<size_t>(i)]));
                QVERIFY2(std::abs(m - magnitude) < 1e-5, qPrintable(QString("factor %1, pair %2: %3").arg(factor).arg(i).arg(m)));
            }
        }
    }

    void theRampRunsFromOriginalToInterpolatedFrequencies() {
        const ModelHparams hp = yarn_model(32.0f);
        const RopeParams p = model_rope(hp, false, nullptr);
        // ggml_rope_yarn_corr_dims for 64 rotated dims over 4096 tokens at base 10k.
        const auto dim = [](double turns) { return 64.0 * std::log(4096.0 / (turns * 2.0 * M_PI)) / (2.0 * std::log(10000.0)); };
        QCOMPARE(p.corr_low, static_cast<float>(std::floor(dim(32.0))));
        QCOMPARE(p.corr_high, static_cast<float>(std::ceil(dim(1.0))));
        QVERIFY(p.corr_low < p.corr_high && p.corr_high < 31);
        const int32_t pos = 7;
        const RopeAngles a = angles_at(pos, p);
        const double mscale = 1.0 + 0.1 * std::log(32.0);
        for (int64_t i = 0; i < a.half; ++i) {
            const double freq = std::pow(10000.0, -2.0 * static_cast<double>(i) / 64.0);
            const double angle = std::atan2(a.sin[static_cast<size_t>(i)] / mscale, a.cos[static_cast<size_t>(i)] / mscale);
            if (i <= p.corr_low) QVERIFY(std::abs(angle - std::remainder(pos * freq, 2 * M_PI)) < 1e-4);              // original
            if (i >= p.corr_high) QVERIFY(std::abs(angle - std::remainder(pos * freq / 32.0, 2 * M_PI)) < 1e-4);      // interpolated
        }
    }

    void reRotationTurnsWithoutScalingAgain() {
        const RopeParams p = model_rope(yarn_model(32.0f), false, nullptr);
        std::vector<float> key(64), once(64);
        for (size_t i = 0; i < key.size(); ++i) key[i] = std::sin(0.37f * static_cast<float>(i) + 0.1f);
        // Rotated at position 5 as stored, then moved by 11: as if rotated at 16 in the first place.
        std::vector<float> direct = key;
        once = key;
        int32_t at = 5, shift = 11, target = 16;
        rope(once.data(), &at, 1, 1, 64, p);
        rope(once.data(), &shift, 1, 1, 64, p.rotation_only());
        rope(direct.data(), &target, 1, 1, 64, p);
        for (size_t i = 0; i < key.size(); ++i) QVERIFY2(std::abs(once[i] - direct[i]) < 1e-4, qPrintable(QString::number(i)));
    }

    void withoutScalingTheAnglesAreUnchanged() {
        ModelHparams hp = yarn_model(1.0f);
        hp.rope_yarn = false;
        const RopeParams p = model_rope(hp, false, nullptr);
        QVERIFY(!p.yarn());
        const RopeAngles a = angles_at(9, p);
        for (int64_t i = 0; i < a.half; ++i)
            QVERIFY(std::abs(a.cos[static_cast<size_t>(i)] - std::cos(9.0 * std::pow(10000.0, -2.0 * static_cast<double>(i) / 64.0))) < 1e-5);
    }
};

QTEST_GUILESS_MAIN(TestRopeScaling)
#include "test_rope_scaling.moc"
