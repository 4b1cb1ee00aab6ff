// QualityBaseline on the real default model: scoring configurations against full attention's
// kept logits gives the very figures of running full attention beside each one, and the kept
// logits are used only for the windows they were computed on.
#include <QFile>
#include <QTest>

#include "tests/skip_missing.h"
#include "workbench/measure.h"

using namespace workbench;

namespace {

constexpr int32_t kCtx = 96;

std::unique_ptr<Engine> load(const std::string& attention, const std::string& kv_types) {
    EngineConfig c;
    c.model_path = find_default_model();
    c.n_ctx = 2 * kCtx;
    c.n_threads = 2;
    c.attention = attention;
    c.kv_types = kv_types;
    auto e = Engine::load(c);
    return e.ok() ? std::move(e).value() : nullptr;
}

}  // namespace

class TestQualityBaseline : public QObject {
    Q_OBJECT
    std::unique_ptr<Engine> full_, sliding_, q4_;
    std::vector<TokenId> text_;
    QualityOptions options_;

    static void same_figures(const Result<QualityReport>& a, const Result<QualityReport>& b) {
        QVERIFY2(a.ok(), a.ok() ? "" : a.status().message().c_str());
        QVERIFY2(b.ok(), b.ok() ? "" : b.status().message().c_str());
        QCOMPARE(a->n_tokens_scored, b->n_tokens_scored);
        QCOMPARE(a->perplexity, b->perplexity);
        QCOMPARE(a->perplexity_baseline, b->perplexity_baseline);
        QCOMPARE(a->kl_mean, b->kl_mean);
        QCOMPARE(a->top1_agreement, b->top1_agreement);
    }

private slots:
    void initTestCase() {
        if (find_default_model().empty()) WB_SKIP_MISSING("the default model is not installed (installer/bootstrap.sh)");
        full_ = load("full", "f16");
        sliding_ = load("sliding:window=24,sinks=4", "f16");
        q4_ = load("full", "q4_0");
        QVERIFY(full_ && sliding_ && q4_);
        QFile f(QString::fromStdString(default_eval_text_path()));
        QVERIFY(f.open(QIODevice::ReadOnly));
        text_ = full_->tokenize(f.read(6000).toStdString(), false, false);
        QVERIFY(text_.size() > 3 * static_cast<size_t>(kCtx));
        options_.n_ctx = kCtx;
        options_.max_windows = 2;
    }

    void keptLogitsGiveTheFiguresOfTheLiveBaseline() {
        const auto live_sliding = evaluate_quality(*sliding_, *full_, text_, options_);
        const auto live_q4 = evaluate_quality(*q4_, *full_, text_, options_);
        QVERIFY(full_->kv_usage().n_tokens > 0);   // running full attention leaves its window cached
        QualityBaseline baseline(*full_);
        QVERIFY(!baseline.holds_logits());
        same_figures(evaluate_quality(*sliding_, baseline, text_, options_), live_sliding);
        QVERIFY(baseline.holds_logits());
        QVERIFY(live_sliding->kl_mean > 0);   // a configuration that differs, so the comparison means something

        // The second configuration is scored without running full attention: its cache stays empty.
        full_->reset();
        same_figures(evaluate_quality(*q4_, baseline, text_, options_), live_q4);
        QCOMPARE(full_->kv_usage().n_tokens, 0);
        same_figures(evaluate_quality(*sliding_, baseline, text_, options_), live_sliding);
        QCOMPARE(full_->kv_usage().n_tokens, 0);
    }

    void anotherTextOrWindowRunsTheBaselineAgain() {
        QualityBaseline baseline(*full_);
        QVERIFY(evaluate_quality(*sliding_, baseline, text_, options_).ok());
        const std::vector<TokenId> shifted(text_.begin() + 1, text_.end());
        full_->reset();
        same_figures(evaluate_quality(*sliding_, baseline, shifted, options_), evaluate_quality(*sliding_, *full_, shifted, options_));
        QualityOptions longer = options_;
        longer.n_ctx = kCtx + 32;
        longer.max_windows = 1;
        same_figures(evaluate_quality(*sliding_, baseline, text_, longer), evaluate_quality(*sliding_, *full_, text_, longer));
    }

    void logitsOverTheBudgetAreNotKept() {
        QualityBaseline baseline(*full_, 1024);
        same_figures(evaluate_quality(*q4_, baseline, text_, options_), evaluate_quality(*q4_, *full_, text_, options_));
        QVERIFY(!baseline.holds_logits());
    }

    void theBaselineScoredAgainstItselfIsExact() {
        QualityBaseline baseline(*full_);
        const auto r = evaluate_quality(*full_, baseline, text_, options_);
        QVERIFY(r.ok());
        QCOMPARE(r->kl_mean, 0.0);
        QCOMPARE(r->top1_agreement, 1.0);
        QVERIFY(!baseline.holds_logits());
    }
};

QTEST_GUILESS_MAIN(TestQualityBaseline)
#include "test_quality_baseline.moc"
