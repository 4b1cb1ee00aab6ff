// The speed measurement after a quality evaluation, on the real default model: the evaluation
// leaves the window's blocks in the prefix cache, and run_after_window must not time a one-token
// step on top of them; it prefills the whole window from an empty cache.
#include <QFile>
#include <QTest>

#include "tests/skip_missing.h"
#include "workbench/measure.h"

using namespace workbench;

class TestMeasureWindow : public QObject {
    Q_OBJECT
    std::unique_ptr<Engine> engine_;
    std::vector<TokenId> text_;
    static constexpr int32_t kCtx = 256;

    void evaluate() {
        QualityOptions q;
        q.n_ctx = kCtx;
        q.max_windows = 1;
        auto r = evaluate_quality(*engine_, *engine_, text_, q);
        QVERIFY2(r.ok(), r.ok() ? "" : r.status().message().c_str());
    }

private slots:
    void initTestCase() {
        if (find_default_model().empty()) WB_SKIP_MISSING("the default model is not installed (installer/bootstrap.sh)");
        EngineConfig c;
        c.model_path = find_default_model();
        c.n_ctx = 2 * kCtx;
        c.n_threads = 2;
        auto e = Engine::load(c);
        QVERIFY2(e.ok(), e.ok() ? "" : e.status().message().c_str());
        engine_ = std::move(e).value();
        QFile f(QString::fromStdString(default_eval_text_path()));
        QVERIFY(f.open(QIODevice::ReadOnly));
        text_ = engine_->tokenize(f.read(8000).toStdString(), false, false);
        QVERIFY(text_.size() > static_cast<size_t>(kCtx) + 1);
    }

    void theEvaluatedWindowIsCachedForAChat() {
        // What makes the test meaningful: after the evaluation, the same prompt finds its blocks.
        evaluate();
        engine_->reset();
        GenerationRequest req;
        req.max_tokens = 1;
        req.sampling.temperature = 0;
        const std::vector<TokenId> window(text_.begin(), text_.begin() + kCtx + 1);
        auto out = engine_->generate_tokens(window, req);
        QVERIFY(out.ok());
        QVERIFY(out->metrics.n_prompt_reused >= kCtx - 16);
    }

    void theTimedWindowRunsWhole() {
        evaluate();
        auto m = run_after_window(*engine_, text_, 1, kCtx, 4);
        QVERIFY2(m.ok(), m.ok() ? "" : m.status().message().c_str());
        QCOMPARE(m->n_prompt_reused, 0);
        QCOMPARE(m->n_prompt_tokens, kCtx + 1);
        QCOMPARE(m->n_generated, 4);
    }
};

QTEST_GUILESS_MAIN(TestMeasureWindow)
#include "test_measure_window.moc"
