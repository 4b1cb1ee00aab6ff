// Intervals and paired tests against published and hand-computed cases.
#include <QTest>

#include <cmath>
#include <vector>

#include "workbench/paired_stats.h"

using namespace workbench;

namespace {

bool near(double a, double b, double tol) { return std::abs(a - b) <= tol; }

}  // namespace

class TestPairedStats : public QObject {
    Q_OBJECT

private slots:
    void normal_quantile_known_points() {
        QVERIFY(near(normal_quantile(0.975), 1.959963984540054, 1e-12));
        QVERIFY(near(normal_quantile(0.5), 0.0, 1e-15));
        QVERIFY(near(normal_quantile(0.005), -2.575829303548901, 1e-12));
        QVERIFY(std::isinf(normal_quantile(0.0)) && normal_quantile(0.0) < 0);
        QVERIFY(std::isinf(normal_quantile(1.0)) && normal_quantile(1.0) > 0);
    }

    void wilson_matches_newcombe() {
        // Newcombe (1998), Statistics in Medicine 17:857, table I, method 3 (score, no
        // continuity correction), 95 %.
        struct Case {
            int64_t k, n;
            double low, high;
        };
        for (const Case& c : {Case{81, 263, 0.2553, 0.3662}, Case{15, 148, 0.0624, 0.1605}, Case{0, 20, 0.0, 0.1611},
                              Case{1, 29, 0.0061, 0.1718}}) {
            const Interval w = wilson_interval(c.k, c.n);
            QVERIFY2(near(w.low, c.low, 5e-5) && near(w.high, c.high, 5e-5),
                     qPrintable(QString("%1/%2: %3 %4").arg(c.k).arg(c.n).arg(w.low).arg(w.high)));
        }
        // All right: the interval reaches 1 exactly and mirrors 0 of n.
        const Interval all = wilson_interval(20, 20), none = wilson_interval(0, 20);
        QCOMPARE(all.high, 1.0);
        QVERIFY(near(all.low, 1 - none.high, 1e-12));
        // Nothing measured: nothing known.
        QCOMPARE(wilson_interval(0, 0).low, 0.0);
        QCOMPARE(wilson_interval(0, 0).high, 1.0);
        // Wider at 99 % than at 95 %.
        QVERIFY(wilson_interval(40, 80, 0.01).low < wilson_interval(40, 80).low);
    }

    void mcnemar_exact_by_hand() {
        QCOMPARE(mcnemar_exact_p(0, 0), 1.0);
        QCOMPARE(mcnemar_exact_p(5, 5), 1.0);
        // 1 against 9: 2 · (C(10,0) + C(10,1)) / 2^10 = 22 / 1024.
        QVERIFY(near(mcnemar_exact_p(1, 9), 22.0 / 1024.0, 1e-12));
        QVERIFY(near(mcnemar_exact_p(9, 1), 22.0 / 1024.0, 1e-12));
        // 6 one way and none the other: 2 / 64 < 0.05; 5: 2 / 32 > 0.05.
        QVERIFY(near(mcnemar_exact_p(6, 0), 2.0 / 64.0, 1e-12));
        QVERIFY(mcnemar_exact_p(5, 0) > 0.05);
        QCOMPARE(mcnemar_exact_p(-1, 3), 1.0);
    }

    void paired_counts_and_bootstrap() {
        const std::vector<uint8_t> a = {1, 1, 0, 0, 1, 1, 1, 0}, b = {1, 0, 1, 0, 0, 0, 1, 0};
        const PairedCounts c = paired_counts(a, b);
        QCOMPARE(c.both, int64_t{2});
        QCOMPARE(c.a_only, int64_t{3});
        QCOMPARE(c.b_only, int64_t{1});
        QCOMPARE(c.neither, int64_t{2});
        // The same outcomes: a difference of exactly 0; one row always right and the other
        // never: exactly 1.
        const Interval same = paired_bootstrap_difference(a, a);
        QCOMPARE(same.low, 0.0);
        QCOMPARE(same.high, 0.0);
        const std::vector<uint8_t> ones(30, 1), zeros(30, 0);
        const Interval all = paired_bootstrap_difference(ones, zeros);
        QCOMPARE(all.low, 1.0);
        QCOMPARE(all.high, 1.0);
        // Seeded: the same interval again; it holds the observed difference (2 / 8).
        const Interval d1 = paired_bootstrap_difference(a, b, 4000, 7), d2 = paired_bootstrap_difference(a, b, 4000, 7);
        QCOMPARE(d1.low, d2.low);
        QCOMPARE(d1.high, d2.high);
        QVERIFY(d1.low <= 0.25 && 0.25 <= d1.high && d1.low < d1.high);
        QCOMPARE(paired_bootstrap_difference({}, {}).high, 0.0);
    }

    void resolvable_difference() {
        // Six prompts all one way are the fewest McNemar can call at 0.05.
        QVERIFY(near(smallest_resolvable_difference(80), 6.0 / 80.0, 1e-12));
        QVERIFY(near(smallest_resolvable_difference(400), 6.0 / 400.0, 1e-12));
        QCOMPARE(smallest_resolvable_difference(5), 1.0);
        // Stricter levels need more: 2 / 2^m < 0.01 from m = 8.
        QVERIFY(near(smallest_resolvable_difference(80, 0.01), 8.0 / 80.0, 1e-12));
    }
};

QTEST_APPLESS_MAIN(TestPairedStats)
#include "test_paired_stats.moc"
