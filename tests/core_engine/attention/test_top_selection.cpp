// The indexers' shared selection: each (query, KV head) pair keeps its `keep` best candidates
// (ties to the earlier one) in position order, the same on one thread or several, and a pair with
// no more candidates than `keep` keeps them all unscored; kept runs become single spans.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "attention/top_selection.h"

using namespace workbench;

class TestTopSelection : public QObject {
    Q_OBJECT

private slots:
    void keepsTheBestInOrderOnAnyThreadCount() {
        std::mt19937 rng(11);
        const int64_t n_pairs = 7;
        const int32_t keep = 5;
        std::vector<std::vector<float>> scores(static_cast<size_t>(n_pairs));
        for (int64_t p = 0; p < n_pairs; ++p) {
            scores[static_cast<size_t>(p)].resize(static_cast<size_t>(p * 40));   // 0, 40, … 240 candidates: several chunks
            for (float& s : scores[static_cast<size_t>(p)]) s = static_cast<float>(rng() % 17);   // many ties
        }
        scores[1].resize(3);   // fewer than keep: all kept
        auto n_cand = [&](int64_t p) { return static_cast<int32_t>(scores[static_cast<size_t>(p)].size()); };
        int calls_small = 0;
        auto score = [&](int64_t p, int32_t c) {
            if (p == 1) ++calls_small;
            return scores[static_cast<size_t>(p)][static_cast<size_t>(c)];
        };
        TopSelection one, two;
        ThreadPool pool1(1), pool2(2);
        select_top(n_pairs, keep, n_cand, score, pool1, one);
        select_top(n_pairs, keep, n_cand, score, pool2, two);
        QCOMPARE(calls_small, 0);
        QCOMPARE(one.kept, two.kept);
        QCOMPARE(one.offsets, two.offsets);
        for (int64_t p = 0; p < n_pairs; ++p) {
            const std::vector<float>& s = scores[static_cast<size_t>(p)];
            std::vector<int32_t> want(s.size());
            std::iota(want.begin(), want.end(), 0);
            std::stable_sort(want.begin(), want.end(), [&](int32_t a, int32_t b) { return s[static_cast<size_t>(a)] > s[static_cast<size_t>(b)]; });
            want.resize(std::min<size_t>(want.size(), keep));
            std::sort(want.begin(), want.end());
            const std::span<const int32_t> got = one.of(p);
            QCOMPARE(std::vector<int32_t>(got.begin(), got.end()), want);
        }
    }

    // keep_best against a stable sort, over many candidates with signs, −0 and +0 (one value),
    // infinities and runs of equal scores; and a scorer of ranges selects as one of single ones.
    void keepBestMatchesAStableSort() {
        std::mt19937 rng(23);
        std::normal_distribution<float> nd;
        for (int round = 0; round < 20; ++round) {
            std::vector<float> s(4000);
            for (float& x : s) x = round % 2 ? nd(rng) : static_cast<float>(static_cast<int>(rng() % 41) - 20) * 0.25f;
            s[17] = -0.0f, s[18] = 0.0f, s[19] = INFINITY, s[20] = -INFINITY;
            for (int32_t keep : {1, 16, 512, 3999}) {
                std::vector<int32_t> want(s.size()), got;
                std::iota(want.begin(), want.end(), 0);
                std::stable_sort(want.begin(), want.end(), [&](int32_t a, int32_t b) { return s[static_cast<size_t>(a)] > s[static_cast<size_t>(b)]; });
                want.resize(static_cast<size_t>(keep));
                std::sort(want.begin(), want.end());
                keep_best(s, keep, got);
                QCOMPARE(got, want);
            }
        }
        std::vector<float> s(300);
        for (float& x : s) x = nd(rng);
        auto n_cand = [](int64_t) { return 300; };
        TopSelection single, ranged;
        ThreadPool pool(2);
        select_top(2, 40, n_cand, [&](int64_t, int32_t c) { return s[static_cast<size_t>(c)]; }, pool, single);
        select_top(2, 40, n_cand, [&](int64_t, int32_t c0, int32_t c1, float* out) { std::copy(s.begin() + c0, s.begin() + c1, out); }, pool, ranged);
        QCOMPARE(ranged.kept, single.kept);
    }

    void keptRunsBecomeSpans() {
        AttendPlan plan;
        const std::vector<int32_t> kept = {0, 1, 2, 5, 7, 8};
        add_kept_spans(kept, 16, 0, plan);
        plan.close_list();
        const std::span<const KvSpan> list = plan.list(0);
        QCOMPARE(list.size(), size_t{3});
        QCOMPARE(list[0].begin, 0);
        QCOMPARE(list[0].end, 48);
        QCOMPARE(list[1].begin, 80);
        QCOMPARE(list[1].end, 96);
        QCOMPARE(list[2].begin, 112);
        QCOMPARE(list[2].end, 144);
    }
};

QTEST_APPLESS_MAIN(TestTopSelection)
#include "test_top_selection.moc"
