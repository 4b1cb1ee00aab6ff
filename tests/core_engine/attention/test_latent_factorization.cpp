// Latent factorization tests on seeded random weights and correlated activations (never zeros):
// full rank rebuilds W, the error never grows with rank, the kept error equals the dropped singular
// values (Eckart–Young, in the plain and the activation-weighted norm), activation-aware beats the
// plain SVD on the activations' output, a 2×2 case worked by hand, the argument errors, and which
// RoPE pairs rope=P keeps (query and key norms, summed over a KV head's query group).
#include <QTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "attention/latent_factorization.h"
#include "attention/latent_kv.h"

using namespace workbench;

namespace {

std::vector<float> gaussian(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

// Activations shaped like a normed hidden state: a few latent directions carry most of the energy
// (power-law scales over random directions), and a handful of channels are outliers.
std::vector<float> correlated_activations(int32_t n_samples, int32_t n_in, uint32_t seed) {
    const std::vector<float> directions = gaussian(static_cast<size_t>(n_in) * n_in, 7);
    const std::vector<float> z = gaussian(static_cast<size_t>(n_samples) * n_in, seed);
    std::vector<float> x(static_cast<size_t>(n_samples) * n_in, 0.0f);
    for (int32_t s = 0; s < n_samples; ++s) {
        for (int32_t k = 0; k < n_in; ++k) {
            const float a = z[s * n_in + k] / static_cast<float>(1 + k) / std::sqrt(float(n_in));
            for (int32_t j = 0; j < n_in; ++j) x[s * n_in + j] += a * directions[k * n_in + j];
        }
        for (int32_t j = 0; j < n_in; j += 17) x[s * n_in + j] *= 8.0f;
    }
    return x;
}

double frobenius(const std::vector<double>& m) {
    double s = 0.0;
    for (double v : m) s += v * v;
    return std::sqrt(s);
}

std::vector<double> residual(const std::vector<float>& w, const LatentFactors& f) {
    const std::vector<float> ua = latent_reconstruct(f);
    std::vector<double> e(w.size());
    for (size_t i = 0; i < w.size(); ++i) e[i] = double(w[i]) - double(ua[i]);
    return e;
}

LatentFactors factor(const std::vector<float>& w, int32_t n_out, int32_t n_in,
                     const std::vector<float>& x, int32_t n_samples, int32_t rank) {
    Result<LatentFactors> r = factorize_low_rank(w, n_out, n_in, x, n_samples, rank);
    if (!r.ok()) qFatal("factorize_low_rank failed: %s", r.status().message().c_str());
    return std::move(r).value();
}

double output_error(const std::vector<float>& w, const LatentFactors& f,
                    const std::vector<float>& x, int32_t n_samples) {
    const Result<double> r = low_rank_output_error(w, f, x, n_samples);
    if (!r.ok()) qFatal("low_rank_output_error failed: %s", r.status().message().c_str());
    return r.value();
}

bool names(const Status& s, const char* field) {
    return s.code() == StatusCode::invalid_argument && s.message().find(field) != std::string::npos;
}

}  // namespace

class TestLatentFactorization : public QObject {
    Q_OBJECT

private slots:
    void full_rank_reproduces_weights_data();
    void full_rank_reproduces_weights();
    void default_model_shape();
    void up_has_orthonormal_columns();
    void error_never_grows_with_rank();
    void kept_error_equals_dropped_singular_values();
    void activation_aware_beats_plain_on_correlated_activations();
    void two_by_two_by_hand();
    void same_input_same_bits();
    void rejects_bad_arguments();
    void rope_pairs_by_query_and_key_norms();
    void kv_balance_scale_gives_k_the_energy_of_v();
    void ranks_go_where_the_measured_loss_is();
    void truncation_keeps_the_leading_directions();
    void output_error_rejects_bad_arguments();
};

void TestLatentFactorization::full_rank_reproduces_weights_data() {
    QTest::addColumn<int>("n_out");
    QTest::addColumn<int>("n_in");
    QTest::addColumn<bool>("aware");
    QTest::newRow("wide plain") << 24 << 40 << false;
    QTest::newRow("wide aware") << 24 << 40 << true;
    QTest::newRow("tall plain") << 48 << 32 << false;
    QTest::newRow("tall aware") << 48 << 32 << true;
    QTest::newRow("square aware") << 32 << 32 << true;
}

void TestLatentFactorization::full_rank_reproduces_weights() {
    QFETCH(int, n_out);
    QFETCH(int, n_in);
    QFETCH(bool, aware);
    const std::vector<float> w = gaussian(size_t(n_out) * n_in, 1, 0.05f);
    // Fewer samples than n_in on purpose: the covariance is singular and only the damping keeps
    // the Cholesky going.
    const int32_t n_samples = aware ? n_in / 2 : 0;
    const std::vector<float> x = aware ? correlated_activations(n_samples, n_in, 2) : std::vector<float>{};
    const int32_t rank = std::min(n_out, n_in);
    const LatentFactors f = factor(w, n_out, n_in, x, n_samples, rank);
    QCOMPARE(f.rank, rank);
    QCOMPARE(f.up.size(), size_t(n_out) * rank);
    QCOMPARE(f.down.size(), size_t(rank) * n_in);
    std::vector<double> wd(w.begin(), w.end());
    const double rel = frobenius(residual(w, f)) / frobenius(wd);
    QVERIFY2(rel < 1e-5, std::to_string(rel).c_str());
}

void TestLatentFactorization::default_model_shape() {
    // SmolLM2-135M: n_kv = 192 → W is [384, 576]; 512 calibration tokens.
    const int32_t n_out = 384, n_in = 576, n_samples = 512;
    const std::vector<float> w = gaussian(size_t(n_out) * n_in, 3, 0.05f);
    const std::vector<float> x = correlated_activations(n_samples, n_in, 4);
    const auto t0 = std::chrono::steady_clock::now();
    const LatentFactors full = factor(w, n_out, n_in, x, n_samples, n_out);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    qInfo("factorize [384, 576] with 512 samples: %.0f ms", ms);
    QVERIFY2(output_error(w, full, x, n_samples) < 1e-5, "full rank must rebuild K/V");
    const LatentFactors aware = factor(w, n_out, n_in, x, n_samples, 96);
    const LatentFactors plain = factor(w, n_out, n_in, {}, 0, 96);
    const double e_aware = output_error(w, aware, x, n_samples);
    const double e_plain = output_error(w, plain, x, n_samples);
    qInfo("rank 96 relative output error: activation-aware %.4f, plain %.4f", e_aware, e_plain);
    QVERIFY(e_aware < 0.5 * e_plain);
}

void TestLatentFactorization::up_has_orthonormal_columns() {
    const int32_t n_out = 40, n_in = 56, n_samples = 128, rank = 12;
    const std::vector<float> w = gaussian(size_t(n_out) * n_in, 5);
    const std::vector<float> x = correlated_activations(n_samples, n_in, 6);
    const LatentFactors f = factor(w, n_out, n_in, x, n_samples, rank);
    for (int32_t a = 0; a < rank; ++a) {
        for (int32_t b = 0; b < rank; ++b) {
            double dot = 0.0;
            for (int32_t i = 0; i < n_out; ++i) dot += double(f.up[i * rank + a]) * f.up[i * rank + b];
            QVERIFY2(std::abs(dot - (a == b ? 1.0 : 0.0)) < 1e-5, std::to_string(dot).c_str());
        }
    }
}

void TestLatentFactorization::error_never_grows_with_rank() {
    // U·A projects W onto nested subspaces, so the error on any activations, calibration or not,
    // can only fall as rank grows.
    const int32_t n_out = 24, n_in = 40, n_samples = 96;
    const std::vector<float> w = gaussian(size_t(n_out) * n_in, 8, 0.1f);
    const std::vector<float> x = correlated_activations(n_samples, n_in, 9);
    const std::vector<float> held_out = correlated_activations(n_samples, n_in, 10);
    for (bool aware : {false, true}) {
        double prev_calib = 2.0, prev_held = 2.0;
        for (int32_t rank = 1; rank <= n_out; ++rank) {
            const LatentFactors f = aware ? factor(w, n_out, n_in, x, n_samples, rank)
                                          : factor(w, n_out, n_in, {}, 0, rank);
            const double calib = output_error(w, f, x, n_samples);
            const double held = output_error(w, f, held_out, n_samples);
            const std::string where = (aware ? "aware rank " : "plain rank ") + std::to_string(rank);
            QVERIFY2(calib <= prev_calib + 1e-6, where.c_str());
            QVERIFY2(held <= prev_held + 1e-6, where.c_str());
            prev_calib = calib;
            prev_held = held;
        }
        QVERIFY(prev_calib < 1e-5);
    }
}

void TestLatentFactorization::kept_error_equals_dropped_singular_values() {
    const int32_t n_out = 32, n_in = 48, n_samples = 200, rank = 10;
    const std::vector<float> w = gaussian(size_t(n_out) * n_in, 11, 0.1f);
    const std::vector<float> x = correlated_activations(n_samples, n_in, 12);

    // Plain: ||W − U A||_F² = Σ_{i>R} σ_i(W)².
    const LatentFactors plain = factor(w, n_out, n_in, {}, 0, rank);
    QCOMPARE(plain.singular_values.size(), size_t(n_out));
    for (size_t i = 1; i < plain.singular_values.size(); ++i)
        QVERIFY(plain.singular_values[i] <= plain.singular_values[i - 1]);
    double dropped = 0.0, total = 0.0;
    for (size_t i = 0; i < plain.singular_values.size(); ++i) {
        const double s2 = plain.singular_values[i] * plain.singular_values[i];
        total += s2;
        if (i >= size_t(rank)) dropped += s2;
    }
    const double e = frobenius(residual(w, plain));
    QVERIFY2(std::abs(e * e - dropped) < 1e-5 * total, (std::to_string(e * e) + " vs " + std::to_string(dropped)).c_str());

    // Activation-aware, computed here from X directly: ||E Xᵀ||² / n + λ ||E||² = Σ_{i>R} σ_i(W L)²,
    // λ = damping · trace(XᵀX / n) / n_in. Checks the weighting convention, not just the shapes.
    const LatentFactors aware = factor(w, n_out, n_in, x, n_samples, rank);
    double trace = 0.0;
    for (float v : x) trace += double(v) * v;
    const double lambda = kDefaultLatentDamping * trace / n_samples / n_in;
    const std::vector<double> err = residual(w, aware);
    double weighted = 0.0;
    for (int32_t s = 0; s < n_samples; ++s) {
        for (int32_t i = 0; i < n_out; ++i) {
            double y = 0.0;
            for (int32_t j = 0; j < n_in; ++j) y += err[i * n_in + j] * x[s * n_in + j];
            weighted += y * y / n_samples;
        }
    }
    const double ef = frobenius(err);
    weighted += lambda * ef * ef;
    double a_dropped = 0.0, a_total = 0.0;
    for (size_t i = 0; i < aware.singular_values.size(); ++i) {
        const double s2 = aware.singular_values[i] * aware.singular_values[i];
        a_total += s2;
        if (i >= size_t(rank)) a_dropped += s2;
    }
    QVERIFY2(std::abs(weighted - a_dropped) < 1e-5 * a_total,
             (std::to_string(weighted) + " vs " + std::to_string(a_dropped)).c_str());
}

void TestLatentFactorization::activation_aware_beats_plain_on_correlated_activations() {
    const int32_t n_out = 48, n_in = 64, n_samples = 512;
    const std::vector<float> w = gaussian(size_t(n_out) * n_in, 13, 0.1f);
    const std::vector<float> x = correlated_activations(n_samples, n_in, 14);
    const std::vector<float> held_out = correlated_activations(n_samples, n_in, 15);
    for (int32_t rank : {6, 12, 24}) {
        const LatentFactors aware = factor(w, n_out, n_in, x, n_samples, rank);
        const LatentFactors plain = factor(w, n_out, n_in, {}, 0, rank);
        const double a_calib = output_error(w, aware, x, n_samples);
        const double p_calib = output_error(w, plain, x, n_samples);
        const double a_held = output_error(w, aware, held_out, n_samples);
        const double p_held = output_error(w, plain, held_out, n_samples);
        qInfo("rank %d: calibration aware %.4f plain %.4f; held-out aware %.4f plain %.4f", rank,
              a_calib, p_calib, a_held, p_held);
        QVERIFY(a_calib < 0.5 * p_calib);
        QVERIFY(a_held < 0.5 * p_held);
    }
}

void TestLatentFactorization::two_by_two_by_hand() {
    // W = diag(3, 1); samples e1 and 10·e2. Plain rank 1 keeps the larger weight direction (e1);
    // activation-aware keeps e2, the one the activations drive: W Xᵀ = diag(3, 10).
    const std::vector<float> w{3, 0, 0, 1};
    const std::vector<float> x{1, 0, 0, 10};
    const LatentFactors plain = factor(w, 2, 2, {}, 0, 1);
    const LatentFactors aware = factor(w, 2, 2, x, 2, 1);
    const std::vector<float> up = latent_reconstruct(plain), ua = latent_reconstruct(aware);
    const std::vector<float> want_plain{3, 0, 0, 0}, want_aware{0, 0, 0, 1};
    for (size_t i = 0; i < 4; ++i) {
        QVERIFY(std::abs(up[i] - want_plain[i]) < 1e-6f);
        QVERIFY(std::abs(ua[i] - want_aware[i]) < 1e-6f);
    }
    QVERIFY(std::abs(output_error(w, plain, x, 2) - 10.0 / std::sqrt(109.0)) < 1e-9);
    QVERIFY(std::abs(output_error(w, aware, x, 2) - 3.0 / std::sqrt(109.0)) < 1e-9);
}

void TestLatentFactorization::same_input_same_bits() {
    const std::vector<float> w = gaussian(20 * 30, 16);
    const std::vector<float> x = correlated_activations(64, 30, 17);
    const LatentFactors a = factor(w, 20, 30, x, 64, 7);
    const LatentFactors b = factor(w, 20, 30, x, 64, 7);
    QVERIFY(a.up == b.up);
    QVERIFY(a.down == b.down);
}

void TestLatentFactorization::rope_pairs_by_query_and_key_norms() {
    // One KV head of 4 dimensions (2 RoPE pairs) read by two query heads; k = x. Query head 0
    // leans to pair 1 (scales 1 against 2), head 1 to pair 0 (5 against 1): summed over the group
    // pair 0 wins (6 against 3), though head 0 alone would keep pair 1.
    ModelHparams hp;
    hp.n_embd = 4;
    hp.n_head = 2;
    hp.n_head_kv = 1;
    hp.head_dim = 4;
    const int32_t n = 256;
    const std::vector<float> x = gaussian(static_cast<size_t>(n) * 4, 11);
    std::vector<float> wk(16, 0.0f), wq(32, 0.0f);
    for (int d = 0; d < 4; ++d) wk[static_cast<size_t>(d * 4 + d)] = 1.0f;
    auto set_q = [&](RopeStyle style, int h, float pair0, float pair1) {
        for (int d = 0; d < 4; ++d) {
            const bool in_pair0 = style == RopeStyle::normal ? d < 2 : d % 2 == 0;
            wq[static_cast<size_t>((h * 4 + d) * 4 + d)] = in_pair0 ? pair0 : pair1;
        }
    };
    for (RopeStyle style : {RopeStyle::normal, RopeStyle::neox}) {
        hp.rope_style = style;
        std::fill(wq.begin(), wq.end(), 0.0f);
        set_q(style, 0, 1.0f, 2.0f);
        set_q(style, 1, 5.0f, 1.0f);
        // normal pairs (2i, 2i+1); neox pairs (i, i + head_dim/2)
        const std::vector<int32_t> pair0 = style == RopeStyle::normal ? std::vector<int32_t>{0, 1} : std::vector<int32_t>{0, 2};
        const std::vector<int32_t> pair1 = style == RopeStyle::normal ? std::vector<int32_t>{2, 3} : std::vector<int32_t>{1, 3};
        QCOMPARE(select_rope_dims(wq.data(), nullptr, wk.data(), nullptr, x.data(), n, hp, 1), pair0);
        // Both pairs: every dimension, ascending.
        QCOMPARE(select_rope_dims(wq.data(), nullptr, wk.data(), nullptr, x.data(), n, hp, 2), (std::vector<int32_t>{0, 1, 2, 3}));
        // Head 0 alone (the other query head silent) keeps pair 1.
        set_q(style, 1, 0.0f, 0.0f);
        QCOMPARE(select_rope_dims(wq.data(), nullptr, wk.data(), nullptr, x.data(), n, hp, 1), pair1);
    }
}

void TestLatentFactorization::kv_balance_scale_gives_k_the_energy_of_v() {
    // Two K rows and one V row over 3 inputs: K rows are 3x and 4x input 0, V is 2x input 1, so
    // Σ‖k‖² = 25 Σx0² and Σ‖v‖² = 4 Σx1²; with x0 and x1 of equal energy the scale is 2/5.
    const int32_t n = 64;
    std::vector<float> x(static_cast<size_t>(n) * 3, 0.0f);
    for (int32_t t = 0; t < n; ++t) {
        x[static_cast<size_t>(t * 3)] = (t % 2 ? 1.0f : -1.0f);
        x[static_cast<size_t>(t * 3 + 1)] = (t % 3 ? 1.0f : -1.0f);
        x[static_cast<size_t>(t * 3 + 2)] = 7.0f;   // a channel neither reads
    }
    const std::vector<float> stacked = {3, 0, 0, 4, 0, 0, 0, 2, 0};
    QVERIFY(std::abs(kv_balance_scale(stacked.data(), 2, 3, x.data(), n, 3) - 0.4) < 1e-12);
    // K silent: nothing to balance, the scale stays 1.
    const std::vector<float> silent_k = {0, 0, 0, 0, 0, 0, 0, 2, 0};
    QCOMPARE(kv_balance_scale(silent_k.data(), 2, 3, x.data(), n, 3), 1.0);
}

void TestLatentFactorization::ranks_go_where_the_measured_loss_is() {
    // Two layers with the same spectrum (σ_i = 1 / (i + 1), 8 values): equal sensitivity keeps
    // the ranks equal; a layer 9 times as sensitive takes rank from the other while its gain
    // w_0 σ² beats the other's loss w_1 σ², at the same total and parity.
    std::vector<double> s;
    for (int i = 0; i < 8; ++i) s.push_back(1.0 / (i + 1));
    const std::vector<std::vector<double>> sv = {s, s};
    QCOMPARE(allocate_latent_ranks(sv, {1.0, 1.0}, 2, 4, 2, 8), (std::vector<int32_t>{4, 4}));
    // w_0 = 9 w_1: moving 2 from layer 1 to layer 0 pays while 9 (σ_r² + σ_{r+1}²) of layer 0
    // exceeds layer 1's (σ_{r'-2}² + σ_{r'-1}²): at (6, 2) the next move would take layer 1 below 2.
    const std::vector<int32_t> moved = allocate_latent_ranks(sv, {9.0, 1.0}, 2, 4, 2, 8);
    QCOMPARE(moved, (std::vector<int32_t>{6, 2}));
    // By hand: from (4, 4), layer 0's gain 9 (1/25 + 1/36) = 0.61 against layer 1's cost
    // 1/9 + 1/16 = 0.17: the move pays. From (6, 2) the only move left would take layer 1 to 0.
    // Ranks never pass max_rank: a capped layer gives its surplus nowhere.
    QCOMPARE(allocate_latent_ranks(sv, {9.0, 1.0}, 2, 6, 2, 6), (std::vector<int32_t>{6, 6}));
    // Steps of 4 keep each rank congruent to the start and at least one step: from 8, 4 and 12.
    std::vector<double> s12;
    for (int i = 0; i < 12; ++i) s12.push_back(1.0 / (i + 1));
    QCOMPARE(allocate_latent_ranks({s12, s12}, {100.0, 1.0}, 2, 8, 4, 12), (std::vector<int32_t>{12, 4}));
}

void TestLatentFactorization::truncation_keeps_the_leading_directions() {
    // A layer of rank 4 over n_embd 3 with 2 rows of K and V: cut to 2, the first 2 rows of the
    // down-projection and the first 2 columns of each up-projection stay, and the error is the
    // dropped σ² over all of them.
    LatentLayer l;
    const int64_t n_embd = 3;
    for (int i = 0; i < 12; ++i) l.down.push_back(static_cast<float>(i));
    for (int i = 0; i < 8; ++i) l.up_k.push_back(static_cast<float>(10 + i)), l.up_v.push_back(static_cast<float>(20 + i));
    QVERIFY(pack_latent_layer(l, 4, n_embd));
    const std::vector<double> sv = {4, 3, 2, 1};
    QVERIFY(truncate_latent_layer(l, 2, n_embd, sv).ok());
    QCOMPARE(l.down, (std::vector<float>{0, 1, 2, 3, 4, 5}));
    QCOMPARE(l.up_k, (std::vector<float>{10, 11, 14, 15}));
    QCOMPARE(l.up_v, (std::vector<float>{20, 21, 24, 25}));
    QCOMPARE(l.down_m.n_out, int64_t{2});
    QCOMPARE(l.stored_half, int64_t{1});
    QVERIFY(std::abs(l.output_error - std::sqrt(5.0 / 30.0)) < 1e-12);
    QVERIFY(names(truncate_latent_layer(l, 3, n_embd, sv), "rank 3 is outside 1..2"));
    QVERIFY(names(truncate_latent_layer(l, 0, n_embd, sv), "rank 0 is outside 1..2"));
}

void TestLatentFactorization::rejects_bad_arguments() {
    const int32_t n_out = 8, n_in = 12, n_samples = 16;
    const std::vector<float> w = gaussian(size_t(n_out) * n_in, 18);
    const std::vector<float> x = correlated_activations(n_samples, n_in, 19);
    auto call = [&](std::span<const float> ww, int32_t o, int32_t i, std::span<const float> xx,
                    int32_t n, int32_t r, double damping = kDefaultLatentDamping) {
        return factorize_low_rank(ww, o, i, xx, n, r, damping).status();
    };
    QVERIFY(names(call(w, n_out, n_in, x, n_samples, 0), "rank = 0"));
    QVERIFY(names(call(w, n_out, n_in, x, n_samples, 9), "rank = 9, expected 1..8"));
    QVERIFY(names(call(w, n_out, n_in, {}, 0, -1), "rank = -1"));
    QVERIFY(names(call(w, 0, n_in, x, n_samples, 1), "n_out = 0"));
    QVERIFY(names(call(w, n_out, -3, x, n_samples, 1), "n_in = -3"));
    QVERIFY(names(call(std::span(w).first(w.size() - 1), n_out, n_in, x, n_samples, 4), "w has 95 values, expected 96"));
    QVERIFY(names(call(w, n_out, n_in, x, n_samples - 1, 4), "calibration has 192 values, expected 180"));
    QVERIFY(names(call(w, n_out, n_in, x, 0, 4), "calibration"));
    QVERIFY(names(call(w, n_out, n_in, x, -2, 4), "n_samples = -2"));
    QVERIFY(names(call(w, n_out, n_in, x, n_samples, 4, 0.0), "damping"));
    QVERIFY(names(call(w, n_out, n_in, x, n_samples, 4, NAN), "damping"));

    std::vector<float> bad_w = w;
    bad_w[5] = NAN;
    QVERIFY(names(call(bad_w, n_out, n_in, x, n_samples, 4), "w[5]"));
    std::vector<float> bad_x = x;
    bad_x[31] = -INFINITY;
    QVERIFY(names(call(w, n_out, n_in, bad_x, n_samples, 4), "calibration[31]"));
    const std::vector<float> silent(x.size(), 0.0f);
    QVERIFY(names(call(w, n_out, n_in, silent, n_samples, 4), "all zeros"));
    QCOMPARE(call(w, 20000, 20000, x, n_samples, 4).code(), StatusCode::unsupported);
    // The plain SVD ignores the damping it does not use.
    QVERIFY(call(w, n_out, n_in, {}, 0, 4, 0.0).ok());
}

void TestLatentFactorization::output_error_rejects_bad_arguments() {
    const int32_t n_out = 8, n_in = 12, n_samples = 16;
    const std::vector<float> w = gaussian(size_t(n_out) * n_in, 20);
    const std::vector<float> x = correlated_activations(n_samples, n_in, 21);
    const LatentFactors f = factor(w, n_out, n_in, x, n_samples, 3);
    QVERIFY(names(low_rank_output_error(std::span(w).first(10), f, x, n_samples).status(), "w has 10"));
    QVERIFY(names(low_rank_output_error(w, f, x, n_samples + 1).status(), "x has 192 values, expected 204"));
    QVERIFY(names(low_rank_output_error(w, f, x, 0).status(), "n_samples = 0"));
    LatentFactors short_up = f;
    short_up.up.pop_back();
    QVERIFY(names(low_rank_output_error(w, short_up, x, n_samples).status(), "factors.up"));
    LatentFactors bad_rank = f;
    bad_rank.rank = 0;
    QVERIFY(names(low_rank_output_error(w, bad_rank, x, n_samples).status(), "factors.rank"));
    std::vector<float> bad_x = x;
    bad_x[0] = NAN;
    QVERIFY(names(low_rank_output_error(w, f, bad_x, n_samples).status(), "x[0]"));
    const std::vector<float> silent(x.size(), 0.0f);
    QVERIFY(names(low_rank_output_error(w, f, silent, n_samples).status(), "zero"));
}

QTEST_APPLESS_MAIN(TestLatentFactorization)
#include "test_latent_factorization.moc"
