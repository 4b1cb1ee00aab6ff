// The attention kernel (online softmax over key blocks) against a plain double-precision softmax on
// random caches (f16, f32, q8_0, q4_0 and q2_0 rows; GQA groups that tile and that don't; a head size the
// SIMD path skips), over lists that cross several key blocks, several streams with score biases,
// per-KV-head lists and an empty list; plus the properties the variants rely on: a query's result
// is bit-identical alone or tiled with others, and cutting a span in two changes nothing.
#include <QTest>

#include <cmath>
#include <numeric>
#include <random>

#include "kernels/cpu/attention.h"
#include "tensor/half_convert.h"
#include "kv_blocks/kv_row_codec.h"

using namespace workbench;

namespace {

constexpr int32_t kBlockTokens = 16;

// One stream of `n` random entries, its blocks in shuffled order (the kernel walks a block table).
struct Stream {
    std::vector<uint8_t> k, v;
    std::vector<BlockId> blocks;
    KvStreamView view;
    std::vector<float> k_f32, v_f32;  // the entries as the kernel reads them back
};

// K as the cache stores it (a head's rows of a block together), V as flat rows are (a token's
// heads together): the kernel reads both through the strides alike.
KvRowLayout row_layout(KvDType t, bool head_major, const AttentionShape& s) {
    KvRowLayout l;
    l.type = t;
    l.row_bytes = static_cast<int64_t>(kv_bytes(t, static_cast<uint64_t>(s.head_dim)));
    l.token_stride = head_major ? l.row_bytes : s.n_head_kv * l.row_bytes;
    l.head_stride = head_major ? kBlockTokens * l.row_bytes : l.row_bytes;
    l.block_stride = kBlockTokens * s.n_head_kv * l.row_bytes;
    return l;
}

Stream make_stream(int32_t n, const AttentionShape& s, KvTypes types, float bias, std::mt19937& rng) {
    Stream st;
    const int64_t hd = s.head_dim, n_kv = s.n_head_kv;
    const int32_t n_blocks = (n + kBlockTokens - 1) / kBlockTokens;
    st.blocks.resize(static_cast<size_t>(n_blocks));
    std::iota(st.blocks.begin(), st.blocks.end(), 0);
    std::shuffle(st.blocks.begin(), st.blocks.end(), rng);
    st.view.k = row_layout(types.k, true, s);
    st.view.v = row_layout(types.v, false, s);
    st.k.resize(static_cast<size_t>(n_blocks * st.view.k.block_stride));
    st.v.resize(static_cast<size_t>(n_blocks * st.view.v.block_stride));
    st.k_f32.resize(static_cast<size_t>(n * n_kv * hd));
    st.v_f32.resize(st.k_f32.size());
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(hd));
    for (int32_t j = 0; j < n; ++j)
        for (int64_t h = 0; h < n_kv; ++h)
            for (auto [bytes, lay, back] : {std::tuple{&st.k, &st.view.k, &st.k_f32}, {&st.v, &st.view.v, &st.v_f32}}) {
                for (auto& x : row) x = normal(rng) * 2.0f;
                uint8_t* dst = bytes->data() + st.blocks[static_cast<size_t>(j / kBlockTokens)] * lay->block_stride +
                               (j % kBlockTokens) * lay->token_stride + h * lay->head_stride;
                kv_encode_row(lay->type, row.data(), dst, hd);
                kv_decode_row(lay->type, dst, back->data() + (j * n_kv + h) * hd, hd);
            }
    st.view.k_base = st.k.data();
    st.view.v_base = st.v.data();
    st.view.blocks = st.blocks.data();
    st.view.block_tokens = kBlockTokens;
    st.view.score_bias = bias;
    return st;
}

// Softmax attention in double over the entries the kernel reads, with Q rounded to f16 as the
// kernel's contract says, and for q8_0, q4_0 and q2_0 keys also quantized to q8_0 blocks (they are
// scored by int8 dot products).
std::vector<float> reference(const std::vector<float>& q, int64_t n_tokens, const std::vector<Stream>& streams, const AttendPlan& plan,
                             const AttentionShape& s, float scale, const std::vector<float>& sinks = {}) {
    const int64_t hd = s.head_dim, group = s.n_head / s.n_head_kv;
    std::vector<float> out(q.size(), 0.0f);
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t h = 0; h < s.n_head; ++h) {
            const int64_t kvh = h / group;
            const auto list = plan.list(plan.per_kv_head ? t * s.n_head_kv + kvh : t);
            std::vector<double> sc;
            std::vector<const float*> vs;
            for (const KvSpan& sp : list)
                for (int32_t j = sp.begin; j < sp.end; ++j) {
                    const Stream& st = streams[static_cast<size_t>(sp.stream)];
                    const float* kr = st.k_f32.data() + (j * s.n_head_kv + kvh) * hd;
                    std::vector<float> qh(static_cast<size_t>(hd));
                    for (int64_t i = 0; i < hd; ++i) qh[static_cast<size_t>(i)] = half_to_float(float_to_half(q[(t * s.n_head + h) * hd + i]));
                    const KvDType kt = st.view.k.type;
                    if ((kt == KvDType::q8_0 || kt == KvDType::q4_0 || kt == KvDType::q2_0) && hd % 32 == 0) {
                        std::vector<uint8_t> blocks(kv_bytes(KvDType::q8_0, static_cast<uint64_t>(hd)));
                        kv_encode_row(KvDType::q8_0, qh.data(), blocks.data(), hd);
                        kv_decode_row(KvDType::q8_0, blocks.data(), qh.data(), hd);
                    }
                    double dot = 0;
                    for (int64_t i = 0; i < hd; ++i) dot += qh[static_cast<size_t>(i)] * static_cast<double>(kr[i]);
                    sc.push_back(dot * scale + st.view.score_bias);
                    vs.push_back(st.v_f32.data() + (j * s.n_head_kv + kvh) * hd);
                }
            if (sc.empty()) continue;
            // A sink logit (one per head) joins the softmax unscaled and brings no value.
            const double sink = sinks.empty() ? -INFINITY : sinks[static_cast<size_t>(h)];
            const double mx = std::max(*std::max_element(sc.begin(), sc.end()), sink);
            double sum = std::exp(sink - mx);
            for (double& x : sc) sum += (x = std::exp(x - mx));
            for (int64_t i = 0; i < hd; ++i) {
                double o = 0;
                for (size_t j = 0; j < sc.size(); ++j) o += sc[j] / sum * vs[j][i];
                out[(t * s.n_head + h) * hd + i] = static_cast<float>(o);
            }
        }
    return out;
}

std::vector<KvStreamView> views(const std::vector<Stream>& streams) {
    std::vector<KvStreamView> v;
    for (const Stream& st : streams) v.push_back(st.view);
    return v;
}

std::vector<float> run(const std::vector<float>& q, int64_t n_tokens, const std::vector<Stream>& streams, const AttendPlan& plan,
                       const AttentionShape& s, float scale, ThreadPool& pool, const std::vector<float>& sinks = {}) {
    std::vector<float> out(q.size(), -7.0f);  // garbage the kernel must overwrite
    attend_spans(q.data(), n_tokens, views(streams), plan, s, scale, out.data(), pool, sinks);
    return out;
}

// A causal prompt's plan: token t of the step (at position base + t) reads [0, base + t + 1).
AttendPlan causal(int64_t n_tokens, int32_t base) {
    AttendPlan p;
    for (int64_t t = 0; t < n_tokens; ++t) {
        p.add({0, 0, base + static_cast<int32_t>(t) + 1});
        p.close_list();
    }
    return p;
}

std::vector<float> random_q(int64_t n_tokens, const AttentionShape& s, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> q(static_cast<size_t>(n_tokens * s.n_head * s.head_dim));
    for (auto& x : q) x = normal(rng) * 1.5f;
    return q;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    // f32 sums of a few hundred terms of V ~ 2·N(0,1) against a double reference: ~5e-6 seen.
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
    qInfo("%s: max |kernel - reference| = %.2e", what, worst);
    if (worst > 2e-5) QFAIL(qPrintable(QStringLiteral("%1: max |kernel - reference| = %2").arg(what).arg(worst)));
}

}  // namespace

class TestAttentionKernel : public QObject {
    Q_OBJECT
private slots:
    void matches_reference_data() {
        QTest::addColumn<int>("n_head");
        QTest::addColumn<int>("n_head_kv");
        QTest::addColumn<int>("head_dim");
        QTest::addColumn<int>("k_type");
        QTest::addColumn<int>("v_type");
        const int f16 = static_cast<int>(KvDType::f16), f32 = static_cast<int>(KvDType::f32), q8 = static_cast<int>(KvDType::q8_0);
        const int q4 = static_cast<int>(KvDType::q4_0);
        QTest::newRow("gqa3 tiled f16 (SmolLM2)") << 9 << 3 << 64 << f16 << f16;
        QTest::newRow("gqa3 f32 keys, q8_0 values") << 9 << 3 << 64 << f32 << q8;
        QTest::newRow("group 4, untiled, q8_0 keys") << 8 << 2 << 64 << q8 << f16;
        QTest::newRow("gqa3 q4_0 keys and values") << 9 << 3 << 64 << q4 << q4;
        QTest::newRow("gqa3 q8_0 keys, q4_0 values") << 9 << 3 << 64 << q8 << q4;
        QTest::newRow("mha head 128") << 4 << 4 << 128 << f16 << f32;
        QTest::newRow("head 128, q4_0 keys, q8_0 values") << 4 << 4 << 128 << q4 << q8;
        QTest::newRow("gqa3 q2_0 keys and values") << 9 << 3 << 64 << static_cast<int>(KvDType::q2_0) << static_cast<int>(KvDType::q2_0);
        QTest::newRow("gqa4 head 256, one KV head (Gemma 3 270M)") << 4 << 1 << 256 << f16 << f16;
        QTest::newRow("head 40 (scalar path)") << 4 << 2 << 40 << f16 << f16;
    }
    void matches_reference() {
        QFETCH(int, n_head);
        QFETCH(int, n_head_kv);
        QFETCH(int, head_dim);
        QFETCH(int, k_type);
        QFETCH(int, v_type);
        const AttentionShape s{n_head, n_head_kv, head_dim};
        const KvTypes types{static_cast<KvDType>(k_type), static_cast<KvDType>(v_type)};
        std::mt19937 rng(1234 + n_head * 7 + head_dim);
        ThreadPool pool(2);
        const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));

        // A causal prompt step of 11 tokens at positions 290..300: three key blocks, the last
        // one cut differently per query.
        std::vector<Stream> one;
        one.push_back(make_stream(301, s, types, 0.0f, rng));
        const std::vector<float> q = random_q(11, s, rng);
        const AttendPlan plan = causal(11, 290);
        const std::vector<float> got = run(q, 11, one, plan, s, scale, pool);
        expect_close(got, reference(q, 11, one, plan, s, scale), "causal prompt");

        // Decode over two streams (a pooled stream's bias log 4), several spans, and a query
        // with an empty list; then per-KV-head lists that differ by head (a top-k selection).
        std::vector<Stream> two;
        two.push_back(make_stream(200, s, types, 0.0f, rng));
        two.push_back(make_stream(90, s, types, std::log(4.0f), rng));
        AttendPlan mixed;
        mixed.add({0, 0, 4});
        mixed.add({1, 10, 90});
        mixed.add({0, 150, 200});
        mixed.close_list();
        mixed.close_list();  // empty: zeros
        mixed.add({1, 0, 3});
        mixed.add({0, 5, 140});
        mixed.close_list();
        const std::vector<float> q3 = random_q(3, s, rng);
        const std::vector<float> got3 = run(q3, 3, two, mixed, s, scale, pool);
        expect_close(got3, reference(q3, 3, two, mixed, s, scale), "spans over two streams");
        for (int64_t i = 0; i < n_head * head_dim; ++i) QCOMPARE(got3[static_cast<size_t>(n_head * head_dim + i)], 0.0f);

        AttendPlan by_head;
        by_head.per_kv_head = true;
        for (int64_t t = 0; t < 2; ++t)
            for (int64_t h = 0; h < n_head_kv; ++h) {
                for (int32_t b = static_cast<int32_t>(h); b < 200; b += 3 + static_cast<int32_t>(t)) by_head.add({0, b, b + 1});
                by_head.add({1, 0, 40 + static_cast<int32_t>(h)});
                by_head.close_list();
            }
        const std::vector<float> q2 = random_q(2, s, rng);
        expect_close(run(q2, 2, two, by_head, s, scale, pool), reference(q2, 2, two, by_head, s, scale), "per-KV-head lists");
    }

    // Keys are scored four at a time when the four share an element type, one by one otherwise,
    // and quantized keys by runs of int8 dot products of one format: lists that alternate between
    // f16, f32, q8_0, q4_0 and q2_0 streams every few keys mix them within a block, and every key's
    // score must still match the reference.
    void keys_of_mixed_types() {
        const AttentionShape s{9, 3, 64};
        std::mt19937 rng(31);
        ThreadPool pool(2);
        std::vector<Stream> two;
        two.push_back(make_stream(120, s, KvTypes{KvDType::f16, KvDType::f16}, 0.0f, rng));
        two.push_back(make_stream(120, s, KvTypes{KvDType::f32, KvDType::f32}, std::log(2.0f), rng));
        two.push_back(make_stream(120, s, KvTypes{KvDType::q8_0, KvDType::f16}, 0.0f, rng));
        two.push_back(make_stream(120, s, KvTypes{KvDType::q4_0, KvDType::f16}, 0.0f, rng));
        two.push_back(make_stream(120, s, KvTypes{KvDType::q2_0, KvDType::q2_0}, 0.0f, rng));
        AttendPlan plan;
        for (int64_t t = 0; t < 5; ++t) {
            int32_t at = 0;
            for (int32_t len : {3, 5, 1, 4, 2, 7, 6}) {  // spans cut across the groups of four
                plan.add({0, at, at + len});
                plan.add({1, at, at + len + static_cast<int32_t>(t)});
                plan.add({2, at, at + len + 1});
                plan.add({3, at, at + len});
                plan.add({4, at, at + len + 2});
                at += len + 2;
            }
            plan.close_list();
        }
        const std::vector<float> q = random_q(5, s, rng);
        const float scale = 0.125f;
        expect_close(run(q, 5, two, plan, s, scale, pool), reference(q, 5, two, plan, s, scale), "f16, f32, q8_0, q4_0 and q2_0 keys mixed");
    }

    // A decode step has few (token, KV head) units: its long lists are cut into block ranges
    // computed on different threads and merged afterwards. Any thread count gives the same bits,
    // and the result matches the reference.
    void decode_split_over_threads_changes_nothing() {
        const AttentionShape s{9, 3, 64};
        std::mt19937 rng(5);
        std::vector<Stream> one;
        one.push_back(make_stream(1100, s, KvTypes{}, 0.0f, rng));
        const std::vector<float> q = random_q(1, s, rng);
        AttendPlan plan;
        plan.add({0, 0, 1037});
        plan.close_list();
        std::vector<float> first;
        for (int threads : {1, 2, 3, 8}) {
            ThreadPool pool(threads);
            const std::vector<float> got = run(q, 1, one, plan, s, 0.125f, pool);
            if (first.empty()) {
                first = got;
                expect_close(got, reference(q, 1, one, plan, s, 0.125f), "decode over 1037 keys");
            }
            QVERIFY2(got == first, qPrintable(QStringLiteral("%1 threads differ from 1").arg(threads)));
        }
    }

    // gpt-oss's sink logits: one per head in the softmax, no value; as the reference for a tiled
    // prompt and for a decode step split over threads (same bits at any thread count), and
    // a sink of −∞ is no sink, bit for bit.
    void sink_logits_join_the_softmax() {
        const AttentionShape s{6, 2, 64};
        std::mt19937 rng(12);
        std::vector<Stream> one;
        one.push_back(make_stream(700, s, KvTypes{}, 0.0f, rng));
        const std::vector<float> sinks = {-2.0f, 0.5f, 3.0f, 1.0f, 8.0f, -0.5f};  // 8: a head that mostly attends to nothing
        ThreadPool pool(2);
        const std::vector<float> q = random_q(9, s, rng);
        const AttendPlan prompt = causal(9, 20);
        expect_close(run(q, 9, one, prompt, s, 0.125f, pool, sinks), reference(q, 9, one, prompt, s, 0.125f, sinks), "prompt with sinks");
        QVERIFY(run(q, 9, one, prompt, s, 0.125f, pool, std::vector<float>(6, -INFINITY)) == run(q, 9, one, prompt, s, 0.125f, pool));
        const std::vector<float> q1 = random_q(1, s, rng);
        AttendPlan decode;
        decode.add({0, 0, 690});
        decode.close_list();
        std::vector<float> first;
        for (int threads : {1, 2, 5}) {
            ThreadPool p(threads);
            const std::vector<float> got = run(q1, 1, one, decode, s, 0.125f, p, sinks);
            if (first.empty()) {
                first = got;
                expect_close(got, reference(q1, 1, one, decode, s, 0.125f, sinks), "decode with sinks");
            }
            QVERIFY2(got == first, qPrintable(QStringLiteral("%1 threads differ from 1").arg(threads)));
        }
    }

    // DeepSeek's latent attention: one KV head of [c | RoPE key] rows whose values are their
    // first head_dim_v (V is a view of the K rows): the result is the reference's over whole
    // rows, cut to those values, for f16 and int8-scored q8_0 rows, prompt and split decode.
    void values_inside_keys() {
        const AttentionShape whole{16, 1, 96};
        const AttentionShape latent{16, 1, 96, 64};
        QCOMPARE(latent.value_dim(), int64_t{64});
        for (KvDType type : {KvDType::f16, KvDType::q8_0}) {
            std::mt19937 rng(21);
            std::vector<Stream> one;
            one.push_back(make_stream(300, whole, KvTypes{type, type}, 0.0f, rng));
            Stream& st = one.back();
            st.view.v = st.view.k;
            st.view.v_base = st.view.k_base;
            st.v_f32 = st.k_f32;
            auto cut = [&](const std::vector<float>& rows) {
                std::vector<float> out;
                for (size_t r = 0; r < rows.size() / 96; ++r) out.insert(out.end(), rows.begin() + r * 96, rows.begin() + r * 96 + 64);
                return out;
            };
            auto attend = [&](const std::vector<float>& q, int64_t n, const AttendPlan& plan, ThreadPool& pool) {
                std::vector<float> out(static_cast<size_t>(n * 16 * 64), -7.0f);
                attend_spans(q.data(), n, views(one), plan, latent, 0.1f, out.data(), pool);
                return out;
            };
            ThreadPool pool(2);
            const std::vector<float> q = random_q(5, whole, rng);
            const AttendPlan prompt = causal(5, 40);
            expect_close(attend(q, 5, prompt, pool), cut(reference(q, 5, one, prompt, whole, 0.1f)), "latent prompt");
            const std::vector<float> q1 = random_q(1, whole, rng);
            AttendPlan decode;
            decode.add({0, 0, 300});
            decode.close_list();
            const std::vector<float> alone = attend(q1, 1, decode, pool);
            expect_close(alone, cut(reference(q1, 1, one, decode, whole, 0.1f)), "latent decode");
            ThreadPool five(5);
            QVERIFY(attend(q1, 1, decode, five) == alone);
        }
    }

    // Each query of a tiled prompt step gets exactly what it gets alone, and a list cut into
    // more spans (the same keys in the same order) gives exactly the same result.
    void batch_and_split_invariant_data() {
        QTest::addColumn<int>("k_type");
        QTest::newRow("f16 keys") << static_cast<int>(KvDType::f16);
        QTest::newRow("q8_0 keys") << static_cast<int>(KvDType::q8_0);
        QTest::newRow("q4_0 keys") << static_cast<int>(KvDType::q4_0);
        QTest::newRow("q2_0 keys") << static_cast<int>(KvDType::q2_0);
    }
    void batch_and_split_invariant() {
        QFETCH(int, k_type);
        const AttentionShape s{9, 3, 64};
        std::mt19937 rng(99);
        ThreadPool pool(2);
        std::vector<Stream> one;
        one.push_back(make_stream(400, s, KvTypes{static_cast<KvDType>(k_type), KvDType::f16}, 0.0f, rng));
        const int64_t n = 9;
        const std::vector<float> q = random_q(n, s, rng);
        const float scale = 0.125f;
        const std::vector<float> tiled = run(q, n, one, causal(n, 380), s, scale, pool);
        const int64_t row = s.n_head * s.head_dim;
        for (int64_t t = 0; t < n; ++t) {
            std::vector<float> qt(q.begin() + t * row, q.begin() + (t + 1) * row);
            AttendPlan alone;
            alone.add({0, 0, 380 + static_cast<int32_t>(t) + 1});
            alone.close_list();
            const std::vector<float> a = run(qt, 1, one, alone, s, scale, pool);
            QVERIFY2(std::equal(a.begin(), a.end(), tiled.begin() + t * row), qPrintable(QStringLiteral("token %1 differs alone").arg(t)));

            AttendPlan cut;  // the same keys in three spans, edges off the 128-key blocks
            cut.add({0, 0, 77});
            cut.add({0, 77, 200});
            cut.add({0, 200, 380 + static_cast<int32_t>(t) + 1});
            cut.close_list();
            const std::vector<float> c = run(qt, 1, one, cut, s, scale, pool);
            QVERIFY2(std::equal(c.begin(), c.end(), a.begin()), qPrintable(QStringLiteral("token %1 differs when its span is cut").arg(t)));
        }
    }
};

QTEST_GUILESS_MAIN(TestAttentionKernel)
#include "test_attention_kernel.moc"
