// The presses' scorers on hand-built attention patterns: SnapKV's window attention (causal,
// averaged over queries and a KV head's query heads, pooled over five neighbours), TOVA's last
// query (the same for every KV head), KNorm's key norms; PyramidKV's per-layer counts and AdaKV's
// per-head split of a layer's budget.
#include <QTest>

#include <cmath>
#include <numeric>
#include <vector>

#include "attention/press_scores.h"
#include "kernels/cpu/thread_pool.h"

using namespace workbench;

namespace {

// Keys one-hot in head_dim 8 (key j of KV head h points along (j + h) % 8); queries a large
// multiple of one axis, so each query's softmax puts nearly all its weight on one key.
struct Pattern {
    static constexpr int64_t n_keys = 8, n_kv = 2, n_head = 4, hd = 8;
    std::vector<float> keys = std::vector<float>(n_keys * n_kv * hd, 0.0f);
    std::vector<float> queries;
    std::vector<int32_t> pos;
    Pattern() {
        for (int64_t j = 0; j < n_keys; ++j)
            for (int64_t h = 0; h < n_kv; ++h) keys[static_cast<size_t>((j * n_kv + h) * hd + (j + h) % hd)] = 1.0f;
    }
    // A query at `position` whose heads all look at key `target` of their KV head.
    void add_query(int32_t position, int64_t target) {
        const size_t at = queries.size();
        queries.resize(at + static_cast<size_t>(n_head * hd), 0.0f);
        for (int64_t g = 0; g < n_head; ++g) queries[at + static_cast<size_t>(g * hd + (target + g / 2) % hd)] = 60.0f;
        pos.push_back(position);
    }
    PressRows rows() const {
        PressRows r;
        r.keys = keys.data();
        r.n_keys = n_keys;
        r.queries = queries.data();
        r.query_pos = pos;
        r.n_head = n_head;
        r.n_kv_heads = n_kv;
        r.head_dim = hd;
        return r;
    }
};

}  // namespace

class TestPressScores : public QObject {
    Q_OBJECT

private slots:
    void windowAttentionFindsTheAttendedKeyAndPoolsItsNeighbours() {
        Pattern p;
        p.add_query(7, 2);
        p.add_query(7, 2);
        ThreadPool pool(2);
        std::vector<float> s;
        window_attention_scores(p.rows(), 5, s, pool);
        QCOMPARE(s.size(), static_cast<size_t>(Pattern::n_kv * Pattern::n_keys));
        for (int64_t h = 0; h < Pattern::n_kv; ++h) {
            // All the weight on key 2, spread evenly over keys 0..4 by the pooling (a fifth each).
            for (int64_t j = 0; j < Pattern::n_keys; ++j)
                QVERIFY2(std::abs(s[static_cast<size_t>(h * Pattern::n_keys + j)] - (j <= 4 ? 0.2f : 0.0f)) < 1e-4f, qPrintable(QString::number(j)));
        }
        // Without pooling the weights are a distribution over the keys: they sum to one.
        window_attention_scores(p.rows(), 1, s, pool);
        QVERIFY(std::abs(std::accumulate(s.begin(), s.begin() + Pattern::n_keys, 0.0f) - 1.0f) < 1e-5f);
        QVERIFY(s[2] > 0.99f);
    }

    void windowAttentionIsCausal() {
        // A query at position 3 looking along key 6's axis cannot see key 6: its weight stays on 0..3.
        Pattern p;
        p.add_query(3, 6);
        ThreadPool pool(1);
        std::vector<float> s;
        window_attention_scores(p.rows(), 1, s, pool);
        for (int64_t j = 4; j < Pattern::n_keys; ++j) QCOMPARE(s[static_cast<size_t>(j)], 0.0f);
        QVERIFY(std::abs(s[0] + s[1] + s[2] + s[3] - 1.0f) < 1e-5f);
    }

    void windowAttentionAveragesAKvHeadsQueryHeads() {
        // Query heads 0, 1 read KV head 0; heads 2, 3 KV head 1 (the pattern's g / 2 shift makes
        // heads 2, 3 look one axis on, which KV head 1's key j + 0 holds): key 5 everywhere.
        Pattern p;
        p.add_query(7, 5);
        ThreadPool pool(1);
        std::vector<float> s;
        window_attention_scores(p.rows(), 1, s, pool);
        QVERIFY(s[5] > 0.99f);
        QVERIFY(s[Pattern::n_keys + 5] > 0.99f);
    }

    void lastQueryScoresAreSharedByEveryHead() {
        Pattern p;
        p.add_query(7, 1);   // ignored: only the last query counts
        p.add_query(7, 6);
        ThreadPool pool(1);
        std::vector<float> s;
        last_query_scores(p.rows(), s, pool);
        for (int64_t j = 0; j < Pattern::n_keys; ++j) QCOMPARE(s[static_cast<size_t>(j)], s[static_cast<size_t>(Pattern::n_keys + j)]);
        QVERIFY(s[6] > 0.99f);
        QVERIFY(s[1] < 1e-3f);
    }

    void keyNormScoresAreMinusTheNorm() {
        Pattern p;
        p.keys[0] = 3.0f;   // key 0, head 0: (3, 4, 0, …) after the next line
        p.keys[1] = 4.0f;
        std::vector<float> s;
        key_norm_scores(p.rows(), s);
        QCOMPARE(s[0], -5.0f);
        QCOMPARE(s[1], -1.0f);
        QCOMPARE(s[static_cast<size_t>(Pattern::n_keys)], -1.0f);
    }

    void pyramidCountsFallLinearlyAroundTheMean() {
        const std::vector<int32_t> c = pyramid_layer_counts(30, 16384, 4096, 64);
        QCOMPARE(c.size(), size_t(30));
        for (size_t l = 1; l < c.size(); ++l) QVERIFY(c[l] <= c[l - 1]);
        QVERIFY(c.front() > 2 * 4096 - 300 && c.back() < 300 && c.back() >= 64);
        const double mean = std::accumulate(c.begin(), c.end(), 0.0) / 30.0;
        QVERIFY(std::abs(mean - 4096) <= 1.0);
        // The first layer cannot keep more than there are tokens outside the window: the pyramid flattens.
        const std::vector<int32_t> wide = pyramid_layer_counts(4, 1000, 900, 16);
        QCOMPARE(wide.front(), 1000 - 16);
        // Where the last layer would keep fewer than the window, every layer keeps the same.
        QCOMPARE(pyramid_layer_counts(30, 1040, 260, 64), std::vector<int32_t>(30, 260));
        QCOMPARE(pyramid_layer_counts(1, 1000, 100, 16), std::vector<int32_t>(1, 100));
    }

    void adaptiveHeadsShareTheBudgetByScore() {
        // Head 0's scores are all high, head 1's all low: head 1 keeps only its floor.
        const int64_t n = 20;
        std::vector<float> scores(static_cast<size_t>(2 * n));
        for (int64_t j = 0; j < n; ++j) {
            scores[static_cast<size_t>(j)] = 10.0f + static_cast<float>(j);
            scores[static_cast<size_t>(n + j)] = static_cast<float>(j) * 0.1f;
        }
        std::vector<std::vector<int32_t>> kept;
        adaptive_head_selection(scores, 2, n, 10, 0.2, kept);
        QCOMPARE(kept[0].size() + kept[1].size(), size_t(20));
        QCOMPARE(kept[1], (std::vector<int32_t>{18, 19}));   // its best ⌊0.2 · 10⌋
        QCOMPARE(kept[0].size(), size_t(18));
        QVERIFY(std::is_sorted(kept[0].begin(), kept[0].end()));
        QCOMPARE(kept[0].front(), 2);                          // the 18 best of head 0: 2..19
        // Even scores split evenly; a budget over everything keeps everything.
        std::vector<float> even(static_cast<size_t>(2 * n), 1.0f);
        adaptive_head_selection(even, 2, n, n, 0.2, kept);
        QCOMPARE(kept[0].size(), size_t(n));
        QCOMPARE(kept[1].size(), size_t(n));
    }
};

QTEST_APPLESS_MAIN(TestPressScores)
#include "test_press_scores.moc"
