// Sampler tests: greedy and its tie rule, seed reproducibility, each filter (top-k, top-p, min-p)
// against its definition, the three penalties and their window, the draw's distribution against
// softmax, and hostile logits (-inf, NaN, all equal) never yielding an out-of-range id. The
// best-logits path (what a backend hands back instead of the row): its selection against a full
// sort, and sample_top drawing what sample draws, token for token, from the same seed.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "sampling/sampler.h"
#include "sampling/top_logits.h"

using namespace workbench;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Parameters with every filter and penalty off, at the given temperature.
SamplingParams plain(float temperature, uint64_t seed = 1) {
    SamplingParams p;
    p.temperature = temperature;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = seed;
    return p;
}

// Deterministic pseudo-random logits (a small LCG), so tests need no fixtures.
std::vector<float> make_logits(size_t n, uint32_t salt) {
    std::vector<float> logits(n);
    uint32_t state = 2463534242u ^ salt;
    for (float& l : logits) {
        state = state * 1664525u + 1013904223u;
        l = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 8.0f - 4.0f;
    }
    return logits;
}

TokenId argmax(const std::vector<float>& logits) {
    TokenId best = 0;
    for (size_t i = 1; i < logits.size(); ++i)
        if (logits[i] > logits[static_cast<size_t>(best)]) best = static_cast<TokenId>(i);
    return best;
}

std::vector<TokenId> draw(Sampler& sampler, const std::vector<float>& logits, int n) {
    std::vector<TokenId> out;
    for (int i = 0; i < n; ++i) out.push_back(sampler.sample(logits));
    return out;
}

std::set<TokenId> distinct_draws(const SamplingParams& params, const std::vector<float>& logits, int n) {
    Sampler sampler(params);
    const std::vector<TokenId> ids = draw(sampler, logits, n);
    return {ids.begin(), ids.end()};
}

TokenId greedy_after(const SamplingParams& params, const std::vector<TokenId>& history, const std::vector<float>& logits) {
    Sampler sampler(params);
    for (TokenId t : history) sampler.accept(t);
    return sampler.sample(logits);
}

}  // namespace

class TestSampler : public QObject {
    Q_OBJECT

private slots:
    void greedy_is_argmax();
    void greedy_ties_go_to_lowest_id();
    void same_seed_same_sequence();
    void different_seed_differs();
    void reset_replays_the_sequence();
    void top_k_one_is_greedy();
    void top_k_limits_choices();
    void tiny_top_p_is_greedy();
    void top_p_keeps_smallest_covering_set();
    void min_p_filters();
    void repeat_penalty_llama_cpp_semantics();
    void frequency_and_presence_penalties();
    void penalties_only_look_at_window();
    void distribution_matches_softmax();
    void low_temperature_sharpens();
    void never_out_of_range();
    void handles_negative_infinity();
    void handles_all_equal_logits();
    void does_not_modify_logits();
    void top_logits_selects_in_sampler_order();
    void top_logits_needed_by_params();
    void sample_top_equals_sample();
};

void TestSampler::greedy_is_argmax() {
    for (uint32_t salt = 0; salt < 20; ++salt) {
        const std::vector<float> logits = make_logits(1000, salt);
        Sampler sampler(plain(0.0f));
        QCOMPARE(sampler.sample(logits), argmax(logits));
    }
    // Greedy ignores the filters entirely.
    SamplingParams p;
    p.temperature = 0.0f;
    const std::vector<float> logits = make_logits(500, 99);
    QCOMPARE(Sampler(p).sample(logits), argmax(logits));
}

void TestSampler::greedy_ties_go_to_lowest_id() {
    Sampler sampler(plain(0.0f));
    QCOMPARE(sampler.sample(std::vector<float>{1.0f, 3.0f, 2.0f, 3.0f, 3.0f}), 1);
}

void TestSampler::same_seed_same_sequence() {
    const std::vector<float> logits = make_logits(2000, 7);
    SamplingParams p;  // defaults: top-k 40, top-p 0.95, min-p 0.05, temperature 0.7
    p.temperature = 1.5f;
    p.seed = 1234;
    Sampler a(p), b(p);
    QCOMPARE(draw(a, logits, 200), draw(b, logits, 200));
}

void TestSampler::different_seed_differs() {
    const std::vector<float> logits = make_logits(2000, 7);
    Sampler a(plain(1.0f, 1)), b(plain(1.0f, 2));
    QVERIFY(draw(a, logits, 100) != draw(b, logits, 100));
}

void TestSampler::reset_replays_the_sequence() {
    const std::vector<float> logits = make_logits(300, 3);
    Sampler sampler(plain(1.0f, 42));
    const std::vector<TokenId> first = draw(sampler, logits, 50);
    sampler.reset();
    QCOMPARE(draw(sampler, logits, 50), first);
}

void TestSampler::top_k_one_is_greedy() {
    for (uint32_t salt = 0; salt < 10; ++salt) {
        const std::vector<float> logits = make_logits(800, salt);
        SamplingParams p = plain(5.0f, salt);
        p.top_k = 1;
        QCOMPARE(distinct_draws(p, logits, 50), std::set<TokenId>{argmax(logits)});
    }
}

void TestSampler::top_k_limits_choices() {
    const std::vector<float> logits = {0.0f, 5.0f, 1.0f, 4.0f, 2.0f, 3.0f};
    SamplingParams p = plain(100.0f);  // near-uniform, so every survivor shows up
    p.top_k = 3;
    QCOMPARE(distinct_draws(p, logits, 2000), (std::set<TokenId>{1, 3, 5}));
}

void TestSampler::tiny_top_p_is_greedy() {
    const std::vector<float> logits = make_logits(800, 11);
    SamplingParams p = plain(5.0f);
    p.top_p = 1e-6f;
    QCOMPARE(distinct_draws(p, logits, 100), std::set<TokenId>{argmax(logits)});
}

void TestSampler::top_p_keeps_smallest_covering_set() {
    // Probabilities 0.5, 0.25, 0.125, 0.125: top-p 0.7 needs the first two (0.75 >= 0.7).
    const float l = std::log(2.0f);
    const std::vector<float> logits = {3 * l, 2 * l, l, l};
    SamplingParams p = plain(1.0f);
    p.top_p = 0.7f;
    QCOMPARE(distinct_draws(p, logits, 2000), (std::set<TokenId>{0, 1}));
    p.top_p = 0.8f;  // now the third is needed too; the tie goes to the lower id
    QCOMPARE(distinct_draws(p, logits, 2000), (std::set<TokenId>{0, 1, 2}));
}

void TestSampler::min_p_filters() {
    // Relative probabilities 1, 0.5, 0.2, 0.05: min-p 0.3 keeps the first two.
    const std::vector<float> logits = {0.0f, std::log(0.5f), std::log(0.2f), std::log(0.05f)};
    SamplingParams p = plain(1.0f);
    p.min_p = 0.3f;
    QCOMPARE(distinct_draws(p, logits, 3000), (std::set<TokenId>{0, 1}));
    p.min_p = 0.1f;
    QCOMPARE(distinct_draws(p, logits, 3000), (std::set<TokenId>{0, 1, 2}));
}

void TestSampler::repeat_penalty_llama_cpp_semantics() {
    SamplingParams p = plain(0.0f);
    p.repeat_penalty = 1.2f;
    // Positive logit divided: 1.0 / 1.2 = 0.83 < 0.9.
    QCOMPARE(greedy_after(p, {0}, {1.0f, 0.9f}), 1);
    // Negative logit multiplied: -1.0 * 1.2 = -1.2 < -1.1.
    QCOMPARE(greedy_after(p, {0}, {-1.0f, -1.1f}), 1);
    // Counted once however often the token repeats: 1.0 / 1.2 still beats 0.8.
    QCOMPARE(greedy_after(p, {0, 0, 0, 0}, {1.0f, 0.8f}), 0);
    p.repeat_penalty = 1.0f;
    QCOMPARE(greedy_after(p, {0}, {1.0f, 0.9f}), 0);
}

void TestSampler::frequency_and_presence_penalties() {
    SamplingParams p = plain(0.0f);
    p.frequency_penalty = 0.3f;  // twice seen: 1.0 - 0.6 = 0.4 < 0.5
    QCOMPARE(greedy_after(p, {0, 0}, {1.0f, 0.5f}), 1);
    p.frequency_penalty = 0.2f;  // 1.0 - 0.4 = 0.6 > 0.5
    QCOMPARE(greedy_after(p, {0, 0}, {1.0f, 0.5f}), 0);

    p = plain(0.0f);
    p.presence_penalty = 0.6f;   // 1.0 - 0.6 = 0.4 < 0.5
    QCOMPARE(greedy_after(p, {0, 0}, {1.0f, 0.5f}), 1);
    p.presence_penalty = 0.4f;   // independent of the count: 0.6 > 0.5
    QCOMPARE(greedy_after(p, {0, 0, 0, 0}, {1.0f, 0.5f}), 0);
    // Ids outside the vocabulary in the history are ignored, not a crash.
    QCOMPARE(greedy_after(p, {-5, 1000000}, {1.0f, 0.5f}), 0);
}

void TestSampler::penalties_only_look_at_window() {
    SamplingParams p = plain(0.0f);
    p.presence_penalty = 1.0f;
    p.penalty_last_n = 2;
    QCOMPARE(greedy_after(p, {0, 2, 3}, {1.0f, 0.5f, -9.0f, -9.0f}), 0);  // token 0 left the window
    QCOMPARE(greedy_after(p, {2, 0, 3}, {1.0f, 0.5f, -9.0f, -9.0f}), 1);
    p.penalty_last_n = 0;  // off
    QCOMPARE(greedy_after(p, {0}, {1.0f, 0.5f}), 0);
    // A long history stays bounded internally but keeps the window right.
    p.penalty_last_n = 4;
    std::vector<TokenId> history(5000, 3);
    history.push_back(0);
    QCOMPARE(greedy_after(p, history, {1.0f, 0.5f, -9.0f, -9.0f}), 1);
}

void TestSampler::distribution_matches_softmax() {
    const std::vector<float> logits = {1.0f, 0.0f, 2.0f, -1.0f, 0.5f, 1.5f, -2.0f, 0.25f};
    std::vector<double> expected(logits.size());
    double z = 0.0;
    for (float l : logits) z += std::exp(static_cast<double>(l));
    for (size_t i = 0; i < logits.size(); ++i) expected[i] = std::exp(static_cast<double>(logits[i])) / z;

    constexpr int kDraws = 200000;
    std::vector<int> counts(logits.size(), 0);
    Sampler sampler(plain(1.0f, 2024));
    for (int i = 0; i < kDraws; ++i) ++counts[static_cast<size_t>(sampler.sample(logits))];
    double chi2 = 0.0;
    for (size_t i = 0; i < logits.size(); ++i) {
        const double e = expected[i] * kDraws;
        chi2 += (counts[i] - e) * (counts[i] - e) / e;
    }
    // 7 degrees of freedom: P(chi2 > 24.3) = 0.001; 40 is loose, yet any systematic bias (a wrong
    // temperature, an off-by-one in the CDF) at this sample size gives chi2 in the thousands.
    QVERIFY2(chi2 < 40.0, qPrintable(QString("chi-square %1").arg(chi2)));
}

void TestSampler::low_temperature_sharpens() {
    const std::vector<float> logits = {1.0f, 0.9f, 0.0f};
    Sampler cold(plain(0.002f, 5));  // odds of id 1: e^-50 per draw
    const std::vector<TokenId> ids = draw(cold, logits, 500);
    QCOMPARE(std::set<TokenId>(ids.begin(), ids.end()), std::set<TokenId>{0});
}

void TestSampler::never_out_of_range() {
    for (uint32_t salt = 0; salt < 30; ++salt) {
        std::vector<float> logits = make_logits(1 + salt * 37, salt);
        SamplingParams p;
        p.temperature = 0.2f + 0.1f * static_cast<float>(salt);
        p.top_k = static_cast<int32_t>(salt % 5) * 10;
        p.top_p = salt % 3 == 0 ? 1.0f : 0.5f;
        p.repeat_penalty = 1.3f;
        p.frequency_penalty = 0.1f;
        p.seed = salt;
        Sampler sampler(p);
        for (int i = 0; i < 50; ++i) {
            const TokenId id = sampler.sample(logits);
            QVERIFY(id >= 0 && static_cast<size_t>(id) < logits.size());
            sampler.accept(id);
        }
    }
}

void TestSampler::handles_negative_infinity() {
    // Only the finite entries can be drawn, at any temperature, with or without filters.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> logits = {kNegInf, 0.0f, kNegInf, nan, 0.5f, kNegInf};
    QCOMPARE(distinct_draws(plain(1.0f), logits, 2000), (std::set<TokenId>{1, 4}));
    QCOMPARE(Sampler(plain(0.0f)).sample(logits), 4);
    SamplingParams p;  // defaults with filters on
    QVERIFY(distinct_draws(p, logits, 500).size() <= 2);
    // Everything -inf: still a valid id.
    const std::vector<float> dead(10, kNegInf);
    QCOMPARE(Sampler(plain(1.0f)).sample(dead), 0);
    QCOMPARE(Sampler(plain(0.0f)).sample(dead), 0);
    // A repetition penalty on a -inf logit keeps it impossible.
    SamplingParams penalised = plain(1.0f);
    penalised.repeat_penalty = 1.5f;
    penalised.frequency_penalty = 1.0f;
    Sampler s(penalised);
    s.accept(0);
    const std::vector<TokenId> ids = draw(s, logits, 500);
    QCOMPARE(std::set<TokenId>(ids.begin(), ids.end()), (std::set<TokenId>{1, 4}));
}

void TestSampler::handles_all_equal_logits() {
    const std::vector<float> logits(16, 0.25f);
    QCOMPARE(Sampler(plain(0.0f)).sample(logits), 0);
    // Uniform draw: every id appears, each roughly 1/16 of the time.
    std::vector<int> counts(16, 0);
    Sampler sampler(plain(1.0f, 9));
    for (int i = 0; i < 16000; ++i) ++counts[static_cast<size_t>(sampler.sample(logits))];
    for (int c : counts) QVERIFY2(c > 800 && c < 1200, qPrintable(QString::number(c)));
    // top-k on ties keeps the lowest ids.
    SamplingParams p = plain(1.0f);
    p.top_k = 3;
    QCOMPARE(distinct_draws(p, logits, 1000), (std::set<TokenId>{0, 1, 2}));
}

void TestSampler::does_not_modify_logits() {
    const std::vector<float> logits = make_logits(100, 5);
    std::vector<float> copy = logits;
    SamplingParams p;
    p.repeat_penalty = 2.0f;
    Sampler sampler(p);
    sampler.accept(argmax(logits));
    sampler.sample(copy);
    QCOMPARE(copy, logits);
}

// Rows with ties, NaN, ±inf: the selection is the first k of a full sort in the sampler's order.
void TestSampler::top_logits_selects_in_sampler_order() {
    const float kInf = std::numeric_limits<float>::infinity(), kNaN = std::numeric_limits<float>::quiet_NaN();
    for (uint32_t salt = 0; salt < 6; ++salt) {
        std::vector<float> row = make_logits(300, salt);
        for (size_t i = 0; i < row.size(); i += 7) row[i] = std::round(row[i]);   // ties
        row[salt * 13] = kNaN;
        row[salt * 17 + 1] = kNegInf;
        if (salt % 2) row[salt * 19 + 2] = kInf;
        if (salt == 5) std::fill(row.begin(), row.end(), kNegInf);   // nothing finite
        std::vector<TopLogit> sorted;
        for (size_t i = 0; i < row.size(); ++i) sorted.push_back({std::isnan(row[i]) ? kNegInf : row[i], static_cast<TokenId>(i)});
        std::stable_sort(sorted.begin(), sorted.end(), [](const TopLogit& a, const TopLogit& b) { return a.logit > b.logit; });
        for (size_t k : {size_t{1}, size_t{2}, size_t{40}, size_t{64}, size_t{300}}) {
            std::vector<TopLogit> top(k);
            select_top_logits(row.data(), row.size(), top.data(), k);
            for (size_t i = 0; i < k; ++i) {
                QCOMPARE(top[i].token, sorted[i].token);
                QCOMPARE(top[i].logit, sorted[i].logit);
            }
        }
    }
}

void TestSampler::top_logits_needed_by_params() {
    QCOMPARE(Sampler(plain(0.0f)).top_logits_needed(1000), 1);
    QCOMPARE(Sampler(plain(0.8f)).top_logits_needed(1000), 0);   // no top-k: the whole row
    SamplingParams p = plain(0.8f);
    p.top_k = 40;
    QCOMPARE(Sampler(p).top_logits_needed(1000), 40);
    QCOMPARE(Sampler(p).top_logits_needed(10), 10);
    p.top_k = kMaxTopLogits + 1;
    QCOMPARE(Sampler(p).top_logits_needed(1000), 0);
    SamplingParams pen = plain(0.0f);
    pen.repeat_penalty = 1.1f;
    QCOMPARE(Sampler(pen).top_logits_needed(1000), 0);   // a penalty can lift any token
    pen.penalty_last_n = 0;
    QCOMPARE(Sampler(pen).top_logits_needed(1000), 1);
    pen = plain(0.0f);
    pen.presence_penalty = 0.5f;
    QCOMPARE(Sampler(pen).top_logits_needed(1000), 0);
}

// Two samplers of one seed, one reading whole rows and one their best: the same tokens, over
// many rows, with the defaults' top-p and min-p on top of top-k, and through -inf and NaN.
void TestSampler::sample_top_equals_sample() {
    for (size_t n_vocab : {size_t{500}, size_t{30}})   // 30: fewer than top_k 40 and 64
    for (float temperature : {0.0f, 0.3f, 1.0f, 2.5f})
        for (int32_t top_k : {1, 5, 40, 64}) {
            SamplingParams p;   // the defaults: top-p 0.95, min-p 0.05
            p.temperature = temperature;
            p.top_k = top_k;
            p.seed = 7 + static_cast<uint64_t>(top_k);
            Sampler full(p), best(p);
            const int32_t k = full.top_logits_needed(static_cast<int32_t>(n_vocab));
            QVERIFY(k > 0 && static_cast<size_t>(k) <= n_vocab);
            for (uint32_t row_i = 0; row_i < 200; ++row_i) {
                std::vector<float> row = make_logits(n_vocab, row_i);
                if (row_i % 9 == 0) std::fill(row.begin() + 10, row.end(), kNegInf);   // fewer finite than k
                if (row_i % 11 == 0) row[row_i % n_vocab] = std::numeric_limits<float>::quiet_NaN();
                if (row_i % 50 == 7) std::fill(row.begin(), row.end(), kNegInf);       // nothing finite
                std::vector<TopLogit> top(static_cast<size_t>(k));
                select_top_logits(row.data(), row.size(), top.data(), top.size());
                const TokenId a = full.sample(row), b = best.sample_top(top);
                QCOMPARE(b, a);
                full.accept(a);
                best.accept(b);
            }
        }
}

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"
