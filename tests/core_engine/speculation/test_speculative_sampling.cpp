// Speculative sampling's verification rule is exact: over many seeded trials, the token it emits
// (a draft drawn from q, kept or redrawn) is distributed as the target's p — checked with a χ²
// test for drafts from a model (q), from prompt lookup (certain drafts) and for a greedy target,
// and through the Sampler's own distributions with its filters. Prompt lookup's matching rules.
#include <QTest>

#include <cmath>
#include <map>
#include <random>

#include "sampling/sampler.h"
#include "speculation/ngram_lookup.h"
#include "speculation/speculative_sampling.h"

using namespace workbench;

namespace {

// The token drawn from `d` for a uniform u in [0, 1).
TokenId draw(std::span<const TokenProbability> d, double u) {
    double c = 0;
    for (const auto& e : d) {
        c += e.p;
        if (u < c) return e.token;
    }
    return d.back().token;
}

// χ² of observed counts against the expected probabilities (categories with p > 0; a token
// seen with p == 0 makes it infinite).
double chi_square(const std::map<TokenId, int>& counts, std::span<const TokenProbability> p, int n) {
    double chi = 0;
    int seen = 0;
    for (const auto& e : p) {
        const auto it = counts.find(e.token);
        const double observed = it == counts.end() ? 0 : it->second;
        const double expected = e.p * n;
        chi += (observed - expected) * (observed - expected) / expected;
        seen += static_cast<int>(observed);
    }
    return seen == n ? chi : INFINITY;
}

// The emitted token's distribution over `n` trials: the draft comes from q (or is `fixed`).
std::map<TokenId, int> emitted(std::span<const TokenProbability> p, std::span<const TokenProbability> q, TokenId fixed, int n,
                               uint64_t seed, int* n_accepted = nullptr) {
    std::mt19937_64 rng(seed);
    auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
    std::map<TokenId, int> counts;
    for (int i = 0; i < n; ++i) {
        const TokenId d = q.empty() ? fixed : draw(q, unit());
        const double u1 = unit(), u2 = unit();
        const SpeculativeDecision v = verify_draft(p, q, d, u1, u2);
        ++counts[v.token];
        if (n_accepted) *n_accepted += v.accepted;
    }
    return counts;
}

// χ² critical values at p = 0.001 for df = 1..7.
constexpr double kChi2Critical[] = {0, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32};

}  // namespace

class TestSpeculativeSampling : public QObject {
    Q_OBJECT
private slots:
    void draftModelDrawsAreExact() {
        // q puts mass where p has none (token 9) and too little on p's favourite.
        const std::vector<TokenProbability> p{{3, 0.40}, {1, 0.25}, {7, 0.20}, {2, 0.10}, {5, 0.05}};
        const std::vector<TokenProbability> q{{1, 0.45}, {9, 0.25}, {3, 0.15}, {2, 0.10}, {7, 0.05}};
        const int n = 200000;
        int accepted = 0;
        const auto counts = emitted(p, q, -1, n, 11, &accepted);
        const double chi = chi_square(counts, p, n);
        QVERIFY2(chi < kChi2Critical[4], qPrintable(QString("chi2 %1").arg(chi)));
        // The acceptance rate is Σ min(p, q) = 0.15 + 0.25 + 0.05 + 0.10 = 0.55.
        QVERIFY(std::abs(accepted / double(n) - 0.55) < 0.01);
    }

    void certainDraftsAreExact() {
        // Prompt lookup proposes one token with certainty: kept with probability p(draft).
        const std::vector<TokenProbability> p{{4, 0.5}, {8, 0.3}, {6, 0.15}, {0, 0.05}};
        for (TokenId d : {8, 4, 42}) {
            const int n = 100000;
            int accepted = 0;
            const auto counts = emitted(p, {}, d, n, 5 + static_cast<uint64_t>(d), &accepted);
            const double chi = chi_square(counts, p, n);
            QVERIFY2(chi < kChi2Critical[3], qPrintable(QString("draft %1: chi2 %2").arg(d).arg(chi)));
            const double expected = d == 42 ? 0.0 : (d == 4 ? 0.5 : 0.3);
            QVERIFY(std::abs(accepted / double(n) - expected) < 0.01);
        }
    }

    void greedyTargetKeepsOnlyItsArgmax() {
        const std::vector<TokenProbability> p{{12, 1.0}};
        QCOMPARE(verify_draft(p, {}, 12, 0.999, 0.5).accepted, true);
        const SpeculativeDecision wrong = verify_draft(p, {}, 13, 0.0, 0.5);
        QCOMPARE(wrong.accepted, false);
        QCOMPARE(wrong.token, 12);
        const std::vector<TokenProbability> q{{13, 1.0}};
        QCOMPARE(verify_draft(p, q, 13, 0.0, 0.99).token, 12);
    }

    void throughTheSamplersFilters() {
        // Target and draft logits differ; both go through top-k, top-p, min-p and temperature.
        std::mt19937 rng(7);
        std::normal_distribution<float> normal(0.0f, 2.0f);
        std::vector<float> target(64), draft(64);
        for (size_t i = 0; i < target.size(); ++i) target[i] = normal(rng), draft[i] = target[i] + normal(rng) * 0.7f;
        SamplingParams params;
        params.temperature = 0.9f;
        params.top_k = 12;
        params.top_p = 0.97f;
        params.min_p = 0.01f;
        Sampler target_sampler(params), draft_sampler(params);
        std::vector<TokenProbability> p, q;
        target_sampler.distribution(target, p);
        draft_sampler.distribution(draft, q);
        QVERIFY(p.size() > 3 && p.size() <= 12);
        double total = 0;
        for (const auto& e : p) total += e.p;
        QVERIFY(std::abs(total - 1.0) < 1e-12);
        // sample() draws from distribution(): its frequencies match p.
        std::map<TokenId, int> sampled, speculated;
        const int n = 60000;
        for (int i = 0; i < n; ++i) ++sampled[target_sampler.sample(target)];
        for (int i = 0; i < n; ++i) {
            const TokenId d = draft_sampler.sample(draft);
            ++speculated[verify_draft(p, q, d, target_sampler.draw_unit(), target_sampler.draw_unit()).token];
        }
        // Categories with expected counts ≥ 5 only; pool the tail into one.
        std::vector<TokenProbability> big;
        double tail = 0;
        for (const auto& e : p) (e.p * n >= 50 ? big.push_back(e) : void(tail += e.p));
        auto pooled = [&](const std::map<TokenId, int>& c) {
            std::map<TokenId, int> out;
            for (const auto& [t, k] : c) {
                const bool is_big = std::any_of(big.begin(), big.end(), [&](const auto& e) { return e.token == t; });
                out[is_big ? t : -1] += k;
            }
            return out;
        };
        std::vector<TokenProbability> expected = big;
        if (tail > 0) expected.push_back({-1, tail});
        const int df = static_cast<int>(expected.size()) - 1;
        QVERIFY(df >= 3 && df <= 7);
        const double chi_sampled = chi_square(pooled(sampled), expected, n), chi_spec = chi_square(pooled(speculated), expected, n);
        QVERIFY2(chi_sampled < kChi2Critical[df], qPrintable(QString("sampler chi2 %1 (df %2)").arg(chi_sampled).arg(df)));
        QVERIFY2(chi_spec < kChi2Critical[df], qPrintable(QString("speculation chi2 %1 (df %2)").arg(chi_spec).arg(df)));
    }

    void brokenRuleIsCaught() {
        // The test has teeth: accepting every draft gives q, not p, and fails the same bound.
        const std::vector<TokenProbability> p{{3, 0.40}, {1, 0.25}, {7, 0.20}, {2, 0.10}, {5, 0.05}};
        const std::vector<TokenProbability> q{{3, 0.20}, {1, 0.45}, {7, 0.20}, {2, 0.10}, {5, 0.05}};
        std::mt19937_64 rng(3);
        std::map<TokenId, int> counts;
        const int n = 100000;
        for (int i = 0; i < n; ++i) ++counts[draw(q, static_cast<double>(rng() >> 11) * 0x1.0p-53)];
        QVERIFY(chi_square(counts, p, n) > kChi2Critical[4]);
    }

    void lookupFindsTheLatestLongestMatch() {
        //                           0  1  2  3  4  5  6  7  8  9 10
        const std::vector<TokenId> t{5, 6, 7, 8, 1, 5, 6, 9, 2, 5, 6};
        // "5 6" last occurred at 5..6 (followed by 9 2 5 6), before that at 0..1.
        QCOMPARE(lookup_draft(t, 2, 3), (std::vector<TokenId>{9, 2, 5}));
        QCOMPARE(lookup_draft(t, 2, 10), (std::vector<TokenId>{9, 2, 5, 6}));
        // A 3-gram "2 5 6" has no earlier match: the 2-gram is used.
        QCOMPARE(lookup_draft(t, 3, 2), (std::vector<TokenId>{9, 2}));
        QCOMPARE(lookup_draft(t, 3, 2, 3), (std::vector<TokenId>{}));
        const std::vector<TokenId> none{1, 2, 3, 4};
        QVERIFY(lookup_draft(none, 3, 8).empty());
        QVERIFY(lookup_draft(t, 2, 0).empty());
        QVERIFY(lookup_draft(std::vector<TokenId>{7}, 3, 4).empty());
    }
};

QTEST_APPLESS_MAIN(TestSpeculativeSampling)
#include "test_speculative_sampling.moc"
