// The forward pass on a real model against llama.cpp's (golden files written by
// tests/reference/make_logits_golden.py). The bound on |Δ logit| is explained at logit_bound().
// Built once per model: WB_ORACLE_MODEL names the GGUF in models/ and its golden file; the
// default model when unset. Gemma 3's golden has a prompt longer than its local layers' window.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>

#include "tests/skip_missing.h"
#include "tests/test_models.h"
#include "tests/test_models.h"
#include "workbench/engine.h"

using namespace workbench;

namespace {

// The bounds come from the reference's own noise, recorded in the golden file: on these prompts
// llama.cpp's logits move by up to 1.15 (mean of per-position maxima 0.21) between evaluating a
// prompt in one batch and token by token (both valid orders of the same float arithmetic). Both
// engines quantize activations to 8 bits per 32-value block before every matmul (we round them
// exactly as llama.cpp's x86 kernels do) and keep K/V in f16, but reduction orders differ; over
// 30 layers that moves logits (spread ~20) by tenths. The max bound asks us to be no further from
// llama.cpp than llama.cpp is from itself. The mean bound is twice its own mean: llama.cpp's two
// orders share its matmul rounding, while any change of matmul rounding moves this mean by about
// 0.36 — measured on these prompts: exact (double) accumulation vs llama.cpp 0.365, our 8-row
// group kernels (one rounding per block) vs llama.cpp 0.362, vs our previous llama.cpp-ordered
// kernels 0.37. A real bug (RoPE, norm, bias, GQA mapping) moves logits by whole units at most
// positions, which the mean bound catches even where single logits stay under the max bound.
// llama.cpp is no single reference either: its builds for other SIMD differ from each other more
// than one build's two orders do (on SmolLM2, an AVX2 and an AVX-512 build: max 1.44, mean 0.25,
// against 0.89 and 0.18 within the AVX-512 build), so the max bound allows a quarter more than
// the recorded spread. On Gemma 3 (spread 1.50; its flash-attention kernel differs by 1.37) our
// worst logit is 1.53 of 13,220; the mean bound is not widened.
constexpr double kOtherBuildAllowance = 1.25;
double logit_bound(const QJsonObject& golden) { return kOtherBuildAllowance * golden["reference_batch_vs_sequential_max_delta"].toDouble(); }
double mean_bound(const QJsonObject& golden) { return 2 * golden["reference_batch_vs_sequential_mean_position_max"].toDouble(); }

#ifndef WB_ORACLE_MODEL
#define WB_ORACLE_MODEL "SmolLM2-135M-Instruct.Q4_1"
#endif
constexpr const char* kGolden = WB_TEST_DATA_DIR "/oracle/" WB_ORACLE_MODEL ".json";

QJsonObject load_golden() {
    QFile f(QString::fromUtf8(kGolden));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

std::vector<TokenId> ids_of(const QJsonArray& a) {
    std::vector<TokenId> v;
    for (const auto& x : a) v.push_back(x.toInt());
    return v;
}

}  // namespace

class TestModelOracle : public QObject {
    Q_OBJECT
    std::unique_ptr<Engine> engine_;
    QJsonObject golden_;

private slots:
    void initTestCase() {
        golden_ = load_golden();
        QVERIFY2(!golden_.isEmpty(), qPrintable(QStringLiteral("golden file %1 is missing").arg(kGolden)));
        const std::string path = wbtest::find_model(WB_ORACLE_MODEL ".gguf");
        if (path.empty()) WB_SKIP_MISSING(WB_ORACLE_MODEL ".gguf not present: run installer/bootstrap.sh (WB_EXTRA_MODELS=gemma3 for Gemma 3)");
        QCOMPARE(QString::fromStdString(wbtest::sha256_file(path)), golden_["model_sha256"].toString());
        EngineConfig config;
        config.model_path = path;
        config.n_ctx = 1024;
        auto e = Engine::load(config);
        QVERIFY2(e.ok(), e.status().message().c_str());
        engine_ = std::move(e).value();
    }

    void prompt_tokens_match() {
        for (const auto& p : golden_["prompts"].toArray()) {
            const auto obj = p.toObject();
            auto ours = engine_->tokenize(obj["prompt"].toString().toStdString(), true, true);
            QCOMPARE(ours, ids_of(obj["tokens"].toArray()));
        }
    }

    void logits_within_bound() {
        const double bound = logit_bound(golden_), mean_limit = mean_bound(golden_);
        QVERIFY(bound > 0.1 && bound < 2.5);  // the reference's spread: ~1.2 on SmolLM2, ~1.5 on Gemma 3
        QVERIFY(mean_limit > 0.1 && mean_limit < 1.0);
        double worst = 0, sum_position_max = 0;
        int n_checked = 0, n_top1 = 0, n_positions = 0;
        for (const auto& p : golden_["prompts"].toArray()) {
            const auto obj = p.toObject();
            const auto tokens = ids_of(obj["tokens"].toArray());
            auto logits = engine_->logits_all(tokens);
            QVERIFY2(logits.ok(), logits.status().message().c_str());
            const int64_t n_vocab = engine_->model_info().n_vocab;
            for (const auto& pos_v : obj["positions"].toArray()) {
                const auto pos = pos_v.toObject();
                const float* row = logits->data() + pos["pos"].toInt() * n_vocab;
                const auto top = pos["top"].toArray();
                double position_max = 0;
                for (const auto& entry : top) {
                    const auto pair = entry.toArray();
                    const double delta = std::abs(row[pair[0].toInt()] - pair[1].toDouble());
                    worst = std::max(worst, delta);
                    position_max = std::max(position_max, delta);
                    ++n_checked;
                    if (delta > bound)
                        QFAIL(qPrintable(QString("prompt %1, position %2, token %3: logit %4 vs reference %5")
                                             .arg(obj["prompt"].toString().left(30)).arg(pos["pos"].toInt())
                                             .arg(pair[0].toInt()).arg(row[pair[0].toInt()]).arg(pair[1].toDouble())));
                }
                sum_position_max += position_max;
                ++n_positions;
                // Top-1 must agree wherever the reference's top-1/top-2 margin exceeds the bound.
                const double margin = top[0].toArray()[1].toDouble() - top[1].toArray()[1].toDouble();
                const int ours = static_cast<int>(std::max_element(row, row + n_vocab) - row);
                if (margin > bound) {
                    QCOMPARE(ours, top[0].toArray()[0].toInt());
                    ++n_top1;
                }
            }
        }
        const double mean = sum_position_max / n_positions;
        qInfo("checked %d logits at %d positions; max |delta| = %.3f (bound %.2f), mean per-position max %.3f (bound %.2f); "
              "%d clear top-1 agreements; reference's own batch-vs-sequential spread %.3f",
              n_checked, n_positions, worst, bound, mean, mean_limit, n_top1,
              golden_["reference_batch_vs_sequential_max_delta"].toDouble());
        QVERIFY(n_checked > 500);
        QVERIFY(mean < mean_limit);
    }

    void greedy_continuations_match() {
        const double bound = logit_bound(golden_);
        GenerationRequest req;
        req.max_tokens = 32;
        req.sampling.temperature = 0;
        req.ignore_eos = true;
        for (const auto& p : golden_["prompts"].toArray()) {
            const auto obj = p.toObject();
            engine_->reset();
            auto r = engine_->generate_tokens(ids_of(obj["tokens"].toArray()), req);
            QVERIFY2(r.ok(), r.status().message().c_str());
            const auto expected = ids_of(obj["greedy"].toArray());
            const auto margins = obj["greedy_margins"].toArray();
            QCOMPARE(r->tokens.size(), expected.size());
            for (size_t i = 0; i < expected.size(); ++i) {
                if (r->tokens[i] == expected[i]) continue;
                // Parting is allowed only at a near-tie in the reference; after that the texts differ.
                const double m = margins[static_cast<int>(i)].toDouble();
                qInfo("prompt '%s': greedy parts at token %zu (reference margin %.3f)",
                      qPrintable(obj["prompt"].toString().left(30)), i, m);
                QVERIFY2(m <= bound, "greedy output diverged where the reference was not a near-tie");
                break;
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestModelOracle)
#include "test_model_oracle.moc"
