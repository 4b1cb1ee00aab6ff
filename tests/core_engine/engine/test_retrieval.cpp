// Retrieval on the real default model: prompts are exact to the token, deterministic per seed and
// trial, and put the fact where the depth says; full attention finds the fact where a 64-token
// sliding window, which keeps only the last 64 tokens and 4 sinks, has forgotten it.
#include <QTest>

#include <algorithm>

#include "tests/skip_missing.h"
#include "workbench/retrieval.h"

using namespace workbench;

namespace {

std::unique_ptr<Engine> load(const std::string& attention) {
    EngineConfig c;
    c.model_path = find_default_model();
    c.attention = attention;
    c.n_ctx = 1100;
    auto e = Engine::load(c);
    if (!e.ok()) qFatal("%s", e.status().message().c_str());
    return std::move(e).value();
}

// Where `needle` starts in `text`, as a fraction of the text's length (-1 when absent).
double where(const std::string& text, const std::string& needle) {
    const size_t at = text.find(needle);
    return at == std::string::npos ? -1.0 : static_cast<double>(at) / static_cast<double>(text.size());
}

}  // namespace

class TestRetrieval : public QObject {
    Q_OBJECT
    std::unique_ptr<Engine> full_;

private slots:
    void initTestCase() {
        if (find_default_model().empty()) WB_SKIP_MISSING("the default model is not installed (installer/bootstrap.sh)");
        full_ = load("full");
    }

    void promptsAreExactAndPlaceTheFact() {
        for (RetrievalKind kind : {RetrievalKind::passkey, RetrievalKind::multi_key})
            for (int32_t length : {512, 1024}) {
                const RetrievalPrompt shallow = make_retrieval_prompt(*full_, kind, length, 0, 0, 1234);
                const RetrievalPrompt deep = make_retrieval_prompt(*full_, kind, length, 100, 0, 1234);
                const RetrievalPrompt again = make_retrieval_prompt(*full_, kind, length, 100, 0, 1234);
                const RetrievalPrompt other = make_retrieval_prompt(*full_, kind, length, 100, 1, 1234);
                QVERIFY(shallow.tokens.size() <= static_cast<size_t>(length) && shallow.tokens.size() + 12 >= static_cast<size_t>(length));
                QCOMPARE(shallow.tokens.size(), deep.tokens.size());
                QCOMPARE(again.tokens, deep.tokens);        // deterministic
                QVERIFY(other.answer != deep.answer);       // each trial its own number
                QCOMPARE(shallow.answer.size(), size_t(5));
                const std::string a = full_->detokenize(shallow.tokens), b = full_->detokenize(deep.tokens);
                const std::string fact = kind == RetrievalKind::passkey ? "pass key is " + shallow.answer : " is " + shallow.answer;
                QVERIFY2(where(a, fact) > 0 && where(a, fact) < 0.2, a.c_str());
                QVERIFY2(where(b, fact) > 0.8, b.c_str());
                // Prompts of one trial share everything before the shallower fact (the cache reuses it).
                const RetrievalPrompt middle = make_retrieval_prompt(*full_, kind, length, 50, 0, 1234);
                size_t common = 0;
                while (common < middle.tokens.size() && middle.tokens[common] == deep.tokens[common]) ++common;
                QVERIFY2(common > middle.tokens.size() * 4 / 10, qPrintable(QString("%1 of %2").arg(common).arg(middle.tokens.size())));
            }
    }

    void aSmallSlidingWindowForgetsWhatFullAttentionFinds() {
        RetrievalOptions options;
        options.lengths = {512, 1024};
        options.depths_pct = {0, 50};
        options.trials = 2;
        auto full = evaluate_retrieval(*full_, options);
        QVERIFY2(full.ok(), full.status().message().c_str());
        QCOMPARE(full->cells.size(), size_t(8));
        auto sliding_engine = load("sliding:window=64,sinks=4");
        auto sliding = evaluate_retrieval(*sliding_engine, options);
        QVERIFY2(sliding.ok(), sliding.status().message().c_str());
        qInfo("full attention %.3f, sliding window 64: %.3f", full->accuracy, sliding->accuracy);
        QVERIFY(full->accuracy >= 0.6);
        // Every fact sits hundreds of tokens before the question: the window has let it go (a
        // lucky guess of a 5-digit number aside, none is found).
        QVERIFY(sliding->accuracy <= 0.125);
        // Counting adds up, and each trial's outcome is kept in order for pairing.
        int trials = 0;
        for (const RetrievalCell& c : full->cells) {
            trials += c.n_trials;
            QCOMPARE(c.outcomes.size(), size_t(c.n_trials));
            QCOMPARE(static_cast<int>(std::count(c.outcomes.begin(), c.outcomes.end(), uint8_t{1})), c.n_correct);
        }
        QCOMPARE(trials, 16);
        QCOMPARE(full->outcomes().size(), size_t(16));
        QCOMPARE(sliding->outcomes().size(), size_t(16));
        // The JSON states n and the Wilson interval around the accuracy.
        const Json j = retrieval_report_json(*full);
        QCOMPARE(j["retrieval_trials"].get<int64_t>(), int64_t{16});
        const double low = j["retrieval_interval"][0].get<double>(), high = j["retrieval_interval"][1].get<double>();
        QVERIFY(low <= full->accuracy && full->accuracy <= high && high - low > 0.2);
        QCOMPARE(j["cells"][0]["outcomes"].get<std::string>().size(), size_t(2));
    }

    void aLengthPastTheContextIsNamed() {
        RetrievalOptions options;
        options.lengths = {4096};
        auto out = evaluate_retrieval(*full_, options);
        QVERIFY(!out.ok());
        QVERIFY2(out.status().message().find("4096") != std::string::npos && out.status().message().find("1100") != std::string::npos,
                 out.status().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestRetrieval)
#include "test_retrieval.moc"
