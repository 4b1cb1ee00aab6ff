// The indexers' scores against scalar sums in double: Quest's bound and the group's q·k over f16
// and f32 keys, for head sizes that are and are not multiples of the vector width and query
// groups that fill the four accumulators unevenly. The bound must also bound: no key inside the
// range scores above it.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/index_scores.h"
#include "tensor/half_convert.h"

using namespace workbench;

class TestIndexScores : public QObject {
    Q_OBJECT

private slots:
    void matchScalarSumsAndBound() {
        std::mt19937 rng(3);
        std::normal_distribution<float> nd;
        for (int64_t hd : {8, 12, 64, 128, 256}) {
            for (int64_t rows : {1, 2, 3, 4, 5, 8, 9}) {
                std::vector<float> q(static_cast<size_t>(rows * hd));
                for (float& x : q) x = nd(rng);
                // A block of 16 keys and its elementwise range (f16, as topk keeps it).
                std::vector<std::vector<float>> keys(16, std::vector<float>(static_cast<size_t>(hd)));
                std::vector<uint16_t> range(static_cast<size_t>(2 * hd));
                for (auto& k : keys)
                    for (float& x : k) x = half_to_float(float_to_half(nd(rng)));
                for (int64_t d = 0; d < hd; ++d) {
                    float lo = INFINITY, hi = -INFINITY;
                    for (const auto& k : keys) lo = std::min(lo, k[static_cast<size_t>(d)]), hi = std::max(hi, k[static_cast<size_t>(d)]);
                    range[static_cast<size_t>(d)] = float_to_half(lo);
                    range[static_cast<size_t>(hd + d)] = float_to_half(hi);
                }
                double want_bound = 0;
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t d = 0; d < hd; ++d) {
                        const double qd = q[static_cast<size_t>(r * hd + d)];
                        want_bound += std::max(qd * half_to_float(range[static_cast<size_t>(d)]), qd * half_to_float(range[static_cast<size_t>(hd + d)]));
                    }
                const float bound = quest_bound(q.data(), rows, range.data(), hd);
                const double tol = 1e-4 * static_cast<double>(rows * hd);
                QVERIFY2(std::abs(bound - want_bound) < tol, qPrintable(QStringLiteral("bound hd %1 rows %2: %3 vs %4").arg(hd).arg(rows).arg(bound).arg(want_bound)));
                for (const auto& k : keys) {
                    std::vector<uint16_t> k16(static_cast<size_t>(hd));
                    for (int64_t d = 0; d < hd; ++d) k16[static_cast<size_t>(d)] = float_to_half(k[static_cast<size_t>(d)]);
                    double want = 0;
                    for (int64_t r = 0; r < rows; ++r)
                        for (int64_t d = 0; d < hd; ++d) want += static_cast<double>(q[static_cast<size_t>(r * hd + d)]) * k[static_cast<size_t>(d)];
                    const float dot16 = group_dot_f16(q.data(), rows, k16.data(), hd);
                    const float dot32 = group_dot_f32(q.data(), rows, k.data(), hd);
                    QVERIFY2(std::abs(dot16 - want) < tol && std::abs(dot32 - want) < tol,
                             qPrintable(QStringLiteral("dot hd %1 rows %2: %3 / %4 vs %5").arg(hd).arg(rows).arg(dot16).arg(dot32).arg(want)));
                    QVERIFY2(dot32 <= bound + tol, "a key inside the block's range scored above its bound");
                }
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestIndexScores)
#include "test_index_scores.moc"
