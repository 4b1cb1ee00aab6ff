// Retrieval on the real default model: prompts of every task are exact to the token,
// deterministic per seed and trial, put the fact where the depth says and hold the answers the
// task asks for (word counts checked by counting); scoring matches answers as RULER does; full
// attention finds the fact where a 64-token sliding window, which keeps only the last 64 tokens
// and 4 sinks, has forgotten it.
#include <QTest>

#include <algorithm>
#include <map>
#include <sstream>

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

// Occurrences of each space-separated word (trailing '.' or ':' dropped) in `text`.
std::map<std::string, int> word_counts(const std::string& text) {
    std::map<std::string, int> counts;
    std::istringstream in(text);
    std::string w;
    while (in >> w) {
        while (!w.empty() && (w.back() == '.' || w.back() == ':' || w.back() == '?')) w.pop_back();
        ++counts[w];
    }
    return counts;
}

// A coined word of the word tasks: three consonant-vowel syllables.
bool coined(const std::string& w) {
    static const std::string consonants = "bdfgklmnprstvz", vowels = "aeiou";
    if (w.size() != 6) return false;
    for (size_t i = 0; i < 6; ++i)
        if ((i % 2 ? vowels : consonants).find(w[i]) == std::string::npos) return false;
    return true;
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
                QVERIFY(other.answers != deep.answers);     // each trial its own number
                QCOMPARE(shallow.answers.size(), size_t(1));
                QCOMPARE(shallow.answers[0].size(), size_t(5));
                const std::string a = full_->detokenize(shallow.tokens), b = full_->detokenize(deep.tokens);
                const std::string fact = kind == RetrievalKind::passkey ? "pass key is " + shallow.answers[0] : " is " + shallow.answers[0];
                QVERIFY2(where(a, fact) > 0 && where(a, fact) < 0.2, a.c_str());
                QVERIFY2(where(b, fact) > 0.8, b.c_str());
                // Prompts of one trial share everything before the shallower fact (the cache reuses it).
                const RetrievalPrompt middle = make_retrieval_prompt(*full_, kind, length, 50, 0, 1234);
                size_t common = 0;
                while (common < middle.tokens.size() && middle.tokens[common] == deep.tokens[common]) ++common;
                QVERIFY2(common > middle.tokens.size() * 4 / 10, qPrintable(QString("%1 of %2").arg(common).arg(middle.tokens.size())));
            }
    }

    void everyTaskHoldsItsAnswers() {
        for (RetrievalKind kind : all_retrieval_kinds())
            for (int32_t length : {512, 2048}) {
                const RetrievalPrompt p = make_retrieval_prompt(*full_, kind, length, 0, 3, 99);
                const RetrievalPrompt again = make_retrieval_prompt(*full_, kind, length, 0, 3, 99);
                const RetrievalPrompt other = make_retrieval_prompt(*full_, kind, length, 0, 4, 99);
                const QString what = QString("%1 at %2: %3 tokens").arg(retrieval_kind_name(kind)).arg(length).arg(p.tokens.size());
                // Within a rare word's entries of the length (word counts come in whole words).
                const size_t slack = kind == RetrievalKind::common_words ? 40 : 24;
                QVERIFY2(p.fits && p.tokens.size() <= size_t(length) && p.tokens.size() + slack >= size_t(length), qPrintable(what));
                QCOMPARE(again.tokens, p.tokens);
                QVERIFY(other.answers != p.answers);
                const std::string text = full_->detokenize(p.tokens);
                const std::map<std::string, int> counts = word_counts(text);
                auto count = [&](const std::string& w) { return counts.count(w) ? counts.at(w) : 0; };
                switch (kind) {
                case RetrievalKind::multi_value:
                case RetrievalKind::multi_query:
                    QCOMPARE(p.answers.size(), size_t(4));
                    for (const std::string& v : p.answers) QVERIFY2(count(v) == 1, qPrintable(what + " " + QString::fromStdString(v)));
                    break;
                case RetrievalKind::variable_tracking:
                    // Five names: the first assigned the number, each next one the one before it.
                    QCOMPARE(p.answers.size(), size_t(5));
                    for (size_t i = 1; i < p.answers.size(); ++i)
                        QVERIFY2(text.find("VAR " + p.answers[i] + " = VAR " + p.answers[i - 1] + ".") != std::string::npos, qPrintable(what));
                    break;
                case RetrievalKind::common_words: {
                    // The ten answers each appear more often than any other word of the list.
                    QCOMPARE(p.answers.size(), size_t(10));
                    int least_common = 1 << 30, most_rare = 0, rare_words = 0;
                    for (const std::string& w : p.answers) least_common = std::min(least_common, count(w));
                    for (const auto& [w, n] : counts)
                        if (coined(w) && std::find(p.answers.begin(), p.answers.end(), w) == p.answers.end())
                            most_rare = std::max(most_rare, n), ++rare_words;
                    QVERIFY2(least_common > most_rare && rare_words > 10,
                             qPrintable(what + QString(" common %1, rare %2 (%3 words)").arg(least_common).arg(most_rare).arg(rare_words)));
                    break;
                }
                case RetrievalKind::frequent_words: {
                    // The three answers are the three most frequent words, in order, apart.
                    QCOMPARE(p.answers.size(), size_t(3));
                    int fourth = 0;
                    for (const auto& [w, n] : counts)
                        if (coined(w) && std::find(p.answers.begin(), p.answers.end(), w) == p.answers.end()) fourth = std::max(fourth, n);
                    QVERIFY2(count(p.answers[0]) > count(p.answers[1]) && count(p.answers[1]) > count(p.answers[2]) &&
                                 count(p.answers[2]) > fourth,
                             qPrintable(what + QString(" %1 %2 %3 > %4").arg(count(p.answers[0])).arg(count(p.answers[1])).arg(count(p.answers[2])).arg(fourth)));
                    break;
                }
                default:
                    QCOMPARE(p.answers.size(), size_t(1));
                    QCOMPARE(count(p.answers[0]) >= 1, true);
                }
                if (retrieval_kind_has_depth(kind)) {
                    // The asked fact (the first answer) sits where the depth says.
                    const std::string deep = full_->detokenize(make_retrieval_prompt(*full_, kind, length, 100, 3, 99).tokens);
                    QVERIFY2(where(text, p.answers[0]) < 0.2 && where(deep, p.answers[0]) > 0.8, qPrintable(what));
                }
            }
    }

    void answersMatchAsRulerScoresThem() {
        QCOMPARE(answer_recall(" 12345 and 67890", {"12345"}), 1.0);
        QCOMPARE(answer_recall(" The values are 12345, 6789", {"12345", "67890"}), 0.5);   // a cut number is not found
        QCOMPARE(answer_recall(" QWERT, asdfg", {"qwert", "ASDFG", "ZXCVB", "POIUY"}), 0.5);   // case does not matter
        QCOMPARE(answer_recall("", {"1"}), 0.0);
        QCOMPARE(answer_recall("anything", {}), 0.0);
        auto all = parse_retrieval_kinds("all");
        QVERIFY(all.ok() && all->size() == 7);
        auto two = parse_retrieval_kinds("frequent_words,passkey,passkey");
        QVERIFY(two.ok() && two->size() == 2 && (*two)[0] == RetrievalKind::frequent_words);
        auto bad = parse_retrieval_kinds("passkey,needle");
        QVERIFY(!bad.ok() && bad.status().message().find("'needle'") != std::string::npos &&
                bad.status().message().find("variable_tracking") != std::string::npos);
        QCOMPARE(retrieval_answer_tokens({RetrievalKind::passkey, RetrievalKind::common_words}), retrieval_answer_tokens(RetrievalKind::common_words));
    }

    void tasksWithoutDepthTakeTheDepthsAsTrials() {
        RetrievalOptions options;
        options.lengths = {512};
        options.depths_pct = {0, 100};
        options.trials = 1;
        options.kinds = {RetrievalKind::frequent_words, RetrievalKind::multi_value};
        auto r = evaluate_retrieval(*full_, options);
        QVERIFY2(r.ok(), r.status().message().c_str());
        QCOMPARE(r->cells.size(), size_t(3));
        QCOMPARE(r->cells[0].depth_pct, -1);
        QCOMPARE(r->cells[0].n_trials, 2);
        QCOMPARE(r->cells[1].n_trials, 1);
        QCOMPARE(r->outcomes().size(), size_t(4));
        QVERIFY(r->score >= r->accuracy);   // partial answers count towards the score only
        const Json j = retrieval_report_json(*r);
        QVERIFY(j["cells"][0]["depth"].is_null());
        QVERIFY(j.contains("frequent_words_score") && j.contains("multi_value_accuracy") && !j.contains("passkey_accuracy"));
        qInfo("full attention at 512: frequent words %.2f (score %.2f), multi-value %.2f (score %.2f)",
              r->kind_accuracy(RetrievalKind::frequent_words), r->kind_score(RetrievalKind::frequent_words),
              r->kind_accuracy(RetrievalKind::multi_value), r->kind_score(RetrievalKind::multi_value));
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

    // Every prompt says where its question begins: after it, only the question and its lead-in.
    void theQuestionFollowsTheContext() {
        for (RetrievalKind kind : all_retrieval_kinds()) {
            const RetrievalPrompt p = make_retrieval_prompt(*full_, kind, 1024, 50, 1, 7);
            QVERIFY(p.question_at > 900 && p.question_at < static_cast<int32_t>(p.tokens.size()));
            const std::vector<TokenId> tail(p.tokens.begin() + p.question_at, p.tokens.end());
            const std::string question = full_->detokenize(tail);
            QVERIFY2(question.rfind("\nWhat", 0) == 0 || question.rfind("\nQuestion", 0) == 0, question.c_str());
            for (const std::string& a : p.answers) QVERIFY2(question.find(a) == std::string::npos || kind == RetrievalKind::variable_tracking, a.c_str());
        }
    }

    // Read context first, question after: full attention keeps everything either way, so every
    // prompt's outcome is the same; a press that cannot see the question keeps other tokens.
    void questionAgnosticReadsTheContextFirst() {
        RetrievalOptions options;
        options.lengths = {512};
        options.depths_pct = {0, 50};
        options.trials = 2;
        auto aware = evaluate_retrieval(*full_, options);
        options.question_agnostic = true;
        auto agnostic = evaluate_retrieval(*full_, options);
        QVERIFY(aware.ok() && agnostic.ok());
        QCOMPARE(agnostic->outcomes(), aware->outcomes());
        auto press = load("snapkv:keep=0.25,window=16");
        auto pressed = evaluate_retrieval(*press, options);
        QVERIFY2(pressed.ok(), pressed.status().message().c_str());
        QCOMPARE(pressed->outcomes().size(), aware->outcomes().size());
        // The context alone, as a request of its own, is pressed when it ends: a quarter kept.
        const RetrievalPrompt p = make_retrieval_prompt(*press, RetrievalKind::passkey, 512, 50, 0, 7);
        GenerationRequest read;
        read.max_tokens = 0;
        QVERIFY(press->generate_tokens(std::vector<TokenId>(p.tokens.begin(), p.tokens.begin() + p.question_at), read).ok());
        const KvUsageReport u = press->kv_usage();
        QVERIFY2(u.bytes_in_use * 3 < u.bytes_full, qPrintable(QString("%1 of %2 bytes").arg(u.bytes_in_use).arg(u.bytes_full)));
        qInfo("full attention %.2f; snapkv keep 0.25, question-agnostic %.2f", aware->accuracy, pressed->accuracy);
    }

    // The follow-up asks another key of the same context; full attention finds both. A press
    // that chose its tokens for the first question keeps fewer of the second key's.
    void aFollowUpAsksAnotherKeyOfTheSameContext() {
        const RetrievalPrompt p = make_retrieval_prompt(*full_, RetrievalKind::multi_key, 1024, 50, 0, 7);
        QCOMPARE(p.follow_up_answers.size(), size_t(1));
        QVERIFY(p.follow_up_answers != p.answers);
        QVERIFY(full_->detokenize(p.tokens).find(p.follow_up_answers[0]) != std::string::npos);
        QVERIFY(full_->detokenize(p.follow_up).find("What is the value of key") != std::string::npos);
        RetrievalOptions options;
        options.lengths = {512};
        options.depths_pct = {0, 50, 100};
        options.trials = 2;
        options.kinds = {RetrievalKind::multi_key};
        auto first = evaluate_retrieval(*full_, options);
        options.follow_up = true;
        auto second = evaluate_retrieval(*full_, options);
        QVERIFY2(first.ok() && second.ok(), second.ok() ? "" : second.status().message().c_str());
        qInfo("full attention, multi_key at 512: first question %.2f, follow-up %.2f", first->accuracy, second->accuracy);
        QVERIFY(second->accuracy > 0);   // a 135M model finds fewer second keys than first ones, but finds them
        options.kinds = {RetrievalKind::passkey};
        auto refused = evaluate_retrieval(*full_, options);
        QVERIFY(!refused.ok() && refused.status().message().find("passkey has none") != std::string::npos);
    }

    void aLengthTooShortForATaskIsNamed() {
        QVERIFY(!make_retrieval_prompt(*full_, RetrievalKind::variable_tracking, 64, 0, 0, 1234).fits);
        QVERIFY(!make_retrieval_prompt(*full_, RetrievalKind::common_words, 100, 0, 0, 1234).fits);
        RetrievalOptions options;
        options.lengths = {64, 512};
        options.kinds = {RetrievalKind::variable_tracking};
        auto out = evaluate_retrieval(*full_, options);
        QVERIFY(!out.ok());
        QVERIFY2(out.status().message().find("variable_tracking") != std::string::npos && out.status().message().find("64") != std::string::npos,
                 out.status().message().c_str());
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
