// weighted_row_sums against a scalar fused multiply-add loop, bit for bit, for row counts that
// split into register blocks differently, key counts that differ per row, and widths that are
// and are not multiples of the vector block: a row's sum never depends on the rows beside it.
#include <QTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/weighted_row_sums.h"

using namespace workbench;

class TestWeightedRowSums : public QObject {
    Q_OBJECT

private slots:
    void matchesTheScalarLoopBitForBit() {
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (int64_t dim : {8, 40, 64, 256}) {
            const int32_t n_all = 97;
            std::vector<float> c(static_cast<size_t>(n_all * dim));
            for (float& x : c) x = u(rng);
            for (int64_t rows : {1, 5, 6, 7, 13}) {
                std::vector<int32_t> n_keys(static_cast<size_t>(rows));
                for (int64_t i = 0; i < rows; ++i) n_keys[static_cast<size_t>(i)] = n_all - static_cast<int32_t>(rows - 1 - i) * 3;
                n_keys[0] = 1;   // a first row with a single key: the common keys shrink to one
                std::vector<float> p(static_cast<size_t>(rows * n_all));
                for (float& x : p) x = u(rng);
                std::vector<float> z(static_cast<size_t>(rows * dim), NAN);
                weighted_row_sums(p.data(), n_all, n_keys.data(), rows, c.data(), dim, z.data());
                for (int64_t i = 0; i < rows; ++i) {
                    std::vector<float> ref(static_cast<size_t>(dim), 0.0f), alone(static_cast<size_t>(dim));
                    for (int32_t j = 0; j < n_keys[static_cast<size_t>(i)]; ++j)
                        for (int64_t r = 0; r < dim; ++r)
                            ref[static_cast<size_t>(r)] = std::fma(p[static_cast<size_t>(i * n_all + j)], c[static_cast<size_t>(j * dim + r)], ref[static_cast<size_t>(r)]);
                    weighted_row_sums(p.data() + i * n_all, n_all, n_keys.data() + i, 1, c.data(), dim, alone.data());
                    QVERIFY2(std::memcmp(ref.data(), z.data() + i * dim, static_cast<size_t>(dim) * sizeof(float)) == 0,
                             qPrintable(QString("dim %1, rows %2, row %3").arg(dim).arg(rows).arg(i)));
                    QVERIFY(std::memcmp(alone.data(), z.data() + i * dim, static_cast<size_t>(dim) * sizeof(float)) == 0);
                }
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestWeightedRowSums)
#include "test_weighted_row_sums.moc"
