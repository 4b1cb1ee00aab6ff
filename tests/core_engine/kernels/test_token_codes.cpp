// Token codes (the index of topk:select=token): the score is exactly the dot product of the
// rotated query sum with the coded key's levels, for every head size the rotation allows; the
// coded score ranks keys as their true q·k does, also for keys with an outlier channel (which the
// rotation spreads); a zero key scores zero.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/token_codes.h"
#include "kv_blocks/kv_row_codec.h"
#include "tensor/half_convert.h"

using namespace workbench;

namespace {

// The same four levels and step search without the rotation: what the rotation is for.
std::vector<float> unrotated_levels(const std::vector<float>& key) {
    double sum_sq = 0;
    for (float x : key) sum_sq += static_cast<double>(x) * x;
    const float rms = static_cast<float>(std::sqrt(sum_sq / static_cast<double>(key.size())));
    std::vector<float> best, out(key.size());
    double best_err = INFINITY;
    for (float scale : {0.7f, 0.85f, 1.0f, 1.15f, 1.3f}) {
        const float step = scale * 0.9957f * rms;
        double err = 0;
        for (size_t d = 0; d < key.size(); ++d) {
            out[d] = (static_cast<float>(std::clamp(static_cast<int>(std::floor(key[d] / step)) + 2, 0, 3)) - 1.5f) * step;
            err += (key[d] - out[d]) * (key[d] - out[d]);
        }
        if (err < best_err) best_err = err, best = out;
    }
    return best;
}

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
    const double n = static_cast<double>(a.size());
    const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) ab += (a[i] - ma) * (b[i] - mb), aa += (a[i] - ma) * (a[i] - ma), bb += (b[i] - mb) * (b[i] - mb);
    return ab / std::sqrt(aa * bb);
}

}  // namespace

class TestTokenCodes : public QObject {
    Q_OBJECT

private slots:
    void scoreIsTheCodedDotProduct() {
        std::mt19937 rng(5);
        std::normal_distribution<float> nd;
        for (int64_t hd : {4, 16, 64, 256}) {
            for (int64_t rows : {1, 3, 8}) {
                std::vector<float> q(static_cast<size_t>(rows * hd)), key(static_cast<size_t>(hd));
                for (float& x : q) x = nd(rng);
                for (float& x : key) x = 3.0f * nd(rng);
                std::vector<uint8_t> code(static_cast<size_t>(token_code_bytes(hd)));
                encode_token_code(key.data(), hd, code.data());
                std::vector<float> table(static_cast<size_t>(token_code_table_floats(hd)));
                token_code_table(q.data(), rows, hd, table.data());
                // What the code says: level (c − 1.5)·step per rotated dimension.
                std::vector<float> qsum(static_cast<size_t>(hd), 0.0f);
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t d = 0; d < hd; ++d) qsum[static_cast<size_t>(d)] += q[static_cast<size_t>(r * hd + d)];
                hadamard_rotate(qsum.data(), hd);
                const float step = half_to_float(static_cast<uint16_t>(code[static_cast<size_t>(hd / 4)] | (code[static_cast<size_t>(hd / 4 + 1)] << 8)));
                QVERIFY(step > 0);
                double want = 0;
                for (int64_t d = 0; d < hd; ++d) {
                    const int c = (code[static_cast<size_t>(d / 4)] >> (2 * (d % 4))) & 3;
                    want += static_cast<double>(qsum[static_cast<size_t>(d)]) * (c - 1.5) * step;
                }
                const float got = token_code_score(table.data(), code.data(), hd);
                QVERIFY2(std::abs(got - want) < 1e-4 * (1 + std::abs(want)) * static_cast<double>(hd),
                         qPrintable(QStringLiteral("hd %1 rows %2: %3 vs %4").arg(hd).arg(rows).arg(got).arg(want)));
            }
        }
    }

    // The coded score follows the true one: Pearson's r over many keys, for plain Gaussian keys
    // and for keys whose one channel is ten times the others (as real keys' outlier channels are),
    // where codes without the rotation follow it clearly worse.
    void codedScoreFollowsTheTrueScore() {
        std::mt19937 rng(9);
        std::normal_distribution<float> nd;
        const int64_t hd = 64, rows = 3;
        for (float outlier : {1.0f, 10.0f}) {
            std::vector<float> q(static_cast<size_t>(rows * hd));
            for (float& x : q) x = nd(rng);
            q[5] += 2.0f;   // the queries lean on the outlier channel too
            std::vector<float> table(static_cast<size_t>(token_code_table_floats(hd)));
            token_code_table(q.data(), rows, hd, table.data());
            std::vector<double> truth, coded, plain;
            std::vector<float> key(static_cast<size_t>(hd));
            std::vector<uint8_t> code(static_cast<size_t>(token_code_bytes(hd)));
            for (int i = 0; i < 2000; ++i) {
                for (float& x : key) x = nd(rng);
                key[5] *= outlier;
                encode_token_code(key.data(), hd, code.data());
                double t = 0;
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t d = 0; d < hd; ++d) t += static_cast<double>(q[static_cast<size_t>(r * hd + d)]) * key[static_cast<size_t>(d)];
                truth.push_back(t);
                coded.push_back(token_code_score(table.data(), code.data(), hd));
                const std::vector<float> levels = unrotated_levels(key);
                double u = 0;
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t d = 0; d < hd; ++d) u += static_cast<double>(q[static_cast<size_t>(r * hd + d)]) * levels[static_cast<size_t>(d)];
                plain.push_back(u);
            }
            const double r = correlation(truth, coded), r_plain = correlation(truth, plain);
            QVERIFY2(r > (outlier > 1 ? 0.85 : 0.92), qPrintable(QStringLiteral("outlier %1: r = %2").arg(outlier).arg(r)));
            if (outlier > 1)
                QVERIFY2(r > r_plain + 0.01, qPrintable(QStringLiteral("rotated r = %1, unrotated %2").arg(r).arg(r_plain)));
            // The 16 best keys by truth are mostly among the coded 64 best (of 2,000).
            std::vector<int> by_truth(truth.size()), by_code(truth.size());
            std::iota(by_truth.begin(), by_truth.end(), 0);
            std::iota(by_code.begin(), by_code.end(), 0);
            std::sort(by_truth.begin(), by_truth.end(), [&](int a, int b) { return truth[a] > truth[b]; });
            std::sort(by_code.begin(), by_code.end(), [&](int a, int b) { return coded[a] > coded[b]; });
            int found = 0;
            for (int i = 0; i < 16; ++i) found += std::find(by_code.begin(), by_code.begin() + 64, by_truth[i]) != by_code.begin() + 64;
            QVERIFY2(found >= (outlier > 1 ? 9 : 12), qPrintable(QStringLiteral("outlier %1: %2 of the best 16 in the coded 64").arg(outlier).arg(found)));
        }
    }

    void zeroKeyScoresZero() {
        const int64_t hd = 64;
        std::vector<float> key(hd, 0.0f), q(hd, 1.0f);
        std::vector<uint8_t> code(static_cast<size_t>(token_code_bytes(hd)));
        encode_token_code(key.data(), hd, code.data());
        std::vector<float> table(static_cast<size_t>(token_code_table_floats(hd)));
        token_code_table(q.data(), 1, hd, table.data());
        const float s = token_code_score(table.data(), code.data(), hd);
        QVERIFY(std::isfinite(s));
        QCOMPARE(s, 0.0f);
    }
};

QTEST_APPLESS_MAIN(TestTokenCodes)
#include "test_token_codes.moc"
