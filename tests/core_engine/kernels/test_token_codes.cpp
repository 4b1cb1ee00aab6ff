// Token codes (the index of topk:select=token): a group's scores are the dot products of the
// rotated query sum with the coded keys' levels, within the bound the int8 table's rounding
// allows, for every head size the codes take; the coded score ranks keys as their true q·k does,
// also for keys with an outlier channel (which the rotation spreads); a zero key scores zero.
#include <QTest>

#include <algorithm>
#include <cstring>
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

    // Scores n keys (n a multiple of 16) against the table of q's rows.
    static std::vector<float> coded_scores(const std::vector<std::vector<float>>& keys, const std::vector<float>& q, int64_t rows, int64_t hd) {
        std::vector<uint8_t> table(static_cast<size_t>(token_code_table_bytes(hd)));
        token_code_table(q.data(), rows, hd, table.data());
        std::vector<uint8_t> group(static_cast<size_t>(token_code_group_bytes(hd)));
        std::vector<float> out(keys.size());
        for (size_t g = 0; g < keys.size(); g += kTokenCodeGroup) {
            for (int32_t s = 0; s < kTokenCodeGroup; ++s) encode_token_code(keys[g + static_cast<size_t>(s)].data(), hd, group.data(), s);
            token_code_scores(table.data(), group.data(), hd, out.data() + g);
        }
        return out;
    }

private slots:
    void scoreIsTheCodedDotProduct() {
        std::mt19937 rng(5);
        std::normal_distribution<float> nd;
        for (int64_t hd : {4, 16, 64, 256, 512}) {
            for (int64_t rows : {1, 3, 8}) {
                std::vector<float> q(static_cast<size_t>(rows * hd));
                for (float& x : q) x = nd(rng);
                std::vector<std::vector<float>> keys(kTokenCodeGroup, std::vector<float>(static_cast<size_t>(hd)));
                for (auto& k : keys)
                    for (float& x : k) x = 3.0f * nd(rng);
                std::vector<uint8_t> group(static_cast<size_t>(token_code_group_bytes(hd)));
                for (int32_t s = 0; s < kTokenCodeGroup; ++s) encode_token_code(keys[static_cast<size_t>(s)].data(), hd, group.data(), s);
                std::vector<uint8_t> table(static_cast<size_t>(token_code_table_bytes(hd)));
                token_code_table(q.data(), rows, hd, table.data());
                float scale;
                std::memcpy(&scale, table.data() + hd / 2 * 16, 4);
                float got[kTokenCodeGroup];
                token_code_scores(table.data(), group.data(), hd, got);
                // What the codes say: level (c − 1.5)·step per rotated dimension.
                std::vector<float> qsum(static_cast<size_t>(hd), 0.0f);
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t d = 0; d < hd; ++d) qsum[static_cast<size_t>(d)] += q[static_cast<size_t>(r * hd + d)];
                hadamard_rotate(qsum.data(), hd);
                for (int32_t s = 0; s < kTokenCodeGroup; ++s) {
                    uint16_t step_bits;
                    std::memcpy(&step_bits, group.data() + hd / 4 * kTokenCodeGroup + s * 2, 2);
                    const float step = half_to_float(step_bits);
                    QVERIFY(step > 0);
                    double want = 0;
                    for (int64_t d = 0; d < hd; ++d) {
                        const int c = (group[static_cast<size_t>(d / 4 * kTokenCodeGroup + s)] >> (2 * (d % 4))) & 3;
                        want += static_cast<double>(qsum[static_cast<size_t>(d)]) * (c - 1.5) * step;
                    }
                    // Each of the head_dim / 2 table entries is off by at most half its scale.
                    const double bound = static_cast<double>(hd) / 2 * scale / 2 * step * 1.001 + 1e-4 * std::abs(want);
                    QVERIFY2(std::abs(got[s] - want) <= bound,
                             qPrintable(QStringLiteral("hd %1 rows %2 slot %3: %4 vs %5 (bound %6)").arg(hd).arg(rows).arg(s).arg(got[s]).arg(want).arg(bound)));
                }
            }
        }
    }

    // The coded score follows the true one: Pearson's r over many keys, for plain Gaussian keys
    // and for keys whose one channel is ten times the others (as real keys' outlier channels are),
    // where codes without the rotation follow it worse.
    void codedScoreFollowsTheTrueScore() {
        std::mt19937 rng(9);
        std::normal_distribution<float> nd;
        const int64_t hd = 64, rows = 3;
        for (float outlier : {1.0f, 10.0f}) {
            std::vector<float> q(static_cast<size_t>(rows * hd));
            for (float& x : q) x = nd(rng);
            q[5] += 2.0f;   // the queries lean on the outlier channel too
            std::vector<std::vector<float>> keys(2000, std::vector<float>(static_cast<size_t>(hd)));
            std::vector<double> truth, plain;
            for (auto& key : keys) {
                for (float& x : key) x = nd(rng);
                key[5] *= outlier;
                double t = 0, u = 0;
                const std::vector<float> levels = unrotated_levels(key);
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t d = 0; d < hd; ++d) {
                        t += static_cast<double>(q[static_cast<size_t>(r * hd + d)]) * key[static_cast<size_t>(d)];
                        u += static_cast<double>(q[static_cast<size_t>(r * hd + d)]) * levels[static_cast<size_t>(d)];
                    }
                truth.push_back(t);
                plain.push_back(u);
            }
            const std::vector<float> scores = coded_scores(keys, q, rows, hd);
            const std::vector<double> coded(scores.begin(), scores.end());
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

    void zeroKeysScoreZero() {
        const int64_t hd = 64;
        std::vector<std::vector<float>> keys(kTokenCodeGroup, std::vector<float>(hd, 0.0f));
        const std::vector<float> scores = coded_scores(keys, std::vector<float>(hd, 1.0f), 1, hd);
        for (float s : scores) QCOMPARE(s, 0.0f);
        // And a zero query scores every key zero.
        keys[3][7] = 5.0f;
        for (float s : coded_scores(keys, std::vector<float>(hd, 0.0f), 1, hd)) QCOMPARE(s, 0.0f);
    }
};

QTEST_APPLESS_MAIN(TestTokenCodes)
#include "test_token_codes.moc"
