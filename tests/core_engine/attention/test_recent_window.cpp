// The recent window of a quantized KV cache (--kv-type q4_0,recent=N), on the KV group alone with
// generated rows: each query reads its last N tokens' rows in f16 and every older one quantized,
// whatever steps its prompt was cut into; a cut back within the ring's spare slots keeps that
// true, a deeper one starts the sequence over; the ring's bytes are counted; policies whose rows
// are not their own tokens refuse it.
#include <QTest>

#include <algorithm>
#include <random>
#include <vector>

#include "attention/kv_group.h"
#include "kernels/cpu/thread_pool.h"
#include "kv_blocks/kv_row_codec.h"
#include "tensor/half_convert.h"

using namespace workbench;

namespace {

constexpr int32_t kHeads = 2, kDim = 32, kRecent = 8, kTokens = 90;

PagedKvShape shape() {
    PagedKvShape s;
    s.n_layers = 1;
    s.n_kv_heads = kHeads;
    s.head_dim = kDim;
    s.n_head = kHeads;
    return s;
}

// Every token's K and V rows ([token][head][dim]), fixed by a seed.
struct Rows {
    std::vector<float> k, v;
    explicit Rows(int32_t n) : k(static_cast<size_t>(n) * kHeads * kDim), v(k.size()) {
        std::mt19937 rng(7);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (float& x : k) x = normal(rng);
        for (float& x : v) x = normal(rng);
    }
    const float* k_at(int32_t t) const { return k.data() + static_cast<size_t>(t) * kHeads * kDim; }
    const float* v_at(int32_t t) const { return v.data() + static_cast<size_t>(t) * kHeads * kDim; }
};

using Row = std::vector<float>;

// One head's row of token t as the cache should give it: f16 inside the window, else q4_0
// (keys and values Hadamard-rotated first, as q4_0 rows are stored, in the window too).
std::pair<Row, Row> expected_row(const Rows& rows, int32_t t, int32_t head, bool in_window) {
    Row k(rows.k_at(t) + head * kDim, rows.k_at(t) + (head + 1) * kDim), v(rows.v_at(t) + head * kDim, rows.v_at(t) + (head + 1) * kDim);
    hadamard_rotate(k.data(), kDim);
    hadamard_rotate(v.data(), kDim);
    for (Row* r : {&k, &v}) {
        if (in_window) {
            for (float& x : *r) x = half_to_float(float_to_half(x));
        } else {
            std::vector<uint8_t> q(kv_bytes(KvDType::q4_0, kDim));
            kv_encode_row(KvDType::q4_0, r->data(), q.data(), kDim);
            kv_decode_row(KvDType::q4_0, q.data(), r->data(), kDim);
        }
    }
    return {k, v};
}

// The rows a query's list reads in one head, decoded, sorted (the order of spans is free).
std::vector<std::pair<Row, Row>> rows_read(const AttendPlan& plan, std::span<const KvStreamView> streams, int64_t list, int32_t head) {
    std::vector<std::pair<Row, Row>> out;
    for (const KvSpan& sp : plan.list(list)) {
        const KvStreamView& view = streams[static_cast<size_t>(sp.stream)];
        for (int32_t e = sp.begin; e < sp.end; ++e) {
            const int64_t block = view.blocks[e / view.block_tokens], slot = e % view.block_tokens;
            Row k(kDim), v(kDim);
            kv_decode_row(view.k.type, view.k_base + block * view.k.block_stride + slot * view.k.token_stride + head * view.k.head_stride,
                          k.data(), kDim);
            kv_decode_row(view.v.type, view.v_base + block * view.v.block_stride + slot * view.v.token_stride + head * view.v.head_stride,
                          v.data(), kDim);
            out.emplace_back(std::move(k), std::move(v));
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::unique_ptr<KvGroup> make_group(const char* spec) {
    auto parsed = parse_attention_spec(spec);
    if (!parsed.ok()) qFatal("%s", parsed.status().message().c_str());
    auto group = KvGroup::create(*parsed, KvTypes{KvDType::q4_0, KvDType::q4_0, kRecent}, shape(), 0, 512);
    if (!group.ok()) qFatal("%s", group.status().message().c_str());
    return std::move(*group);
}

// Runs tokens [from, to) of `rows` in steps of the given sizes (the last repeated), checking every
// query's reads; false (with a message) at the first that differs.
bool run_and_check(KvGroup& kv, const Rows& rows, int32_t from, int32_t to, std::vector<int32_t> steps, std::string& why) {
    ThreadPool pool(1);
    std::vector<TokenId> ids(static_cast<size_t>(to), 1);
    size_t si = 0;
    for (int32_t t0 = from; t0 < to;) {
        const int32_t n = std::min(steps[std::min(si++, steps.size() - 1)], to - t0);
        if (!kv.begin_step(0, std::span<const TokenId>(ids.data() + t0, static_cast<size_t>(n))).ok()) {
            why = "begin_step failed";
            return false;
        }
        kv.write(0, rows.k_at(t0), rows.v_at(t0), pool);
        const AttendPlan& plan = kv.plan(0, nullptr, pool);
        const std::span<const KvStreamView> streams = kv.streams(0);
        for (int32_t i = 0; i < n; ++i) {
            const int32_t p = t0 + i;
            for (int32_t h = 0; h < kHeads; ++h) {
                std::vector<std::pair<Row, Row>> want;
                for (int32_t j = 0; j <= p; ++j) want.push_back(expected_row(rows, j, h, j > p - kRecent));
                std::sort(want.begin(), want.end());
                if (rows_read(plan, streams, i, h) != want) {
                    why = "query " + std::to_string(p) + " head " + std::to_string(h) + " (step of " + std::to_string(n) + " from " +
                          std::to_string(t0) + ") reads other rows";
                    kv.abort_step();
                    return false;
                }
            }
        }
        kv.finish_step();
        t0 += n;
    }
    return true;
}

}  // namespace

class TestRecentWindow : public QObject {
    Q_OBJECT

private slots:
    void each_query_reads_its_last_tokens_in_f16_however_the_prompt_is_cut() {
        const Rows rows(kTokens);
        for (const std::vector<int32_t>& steps : std::vector<std::vector<int32_t>>{{1}, {13, 1, 30, 16}, {90}, {5, 7}}) {
            auto kv = make_group("full");
            std::string why;
            QVERIFY2(run_and_check(*kv, rows, 0, kTokens, steps, why), why.c_str());
        }
    }

    void a_window_over_a_sliding_cache_reads_within_the_window() {
        const Rows rows(kTokens);
        auto kv = make_group("sliding:window=4096,sinks=4");   // a window wider than the run: every token stays
        std::string why;
        QVERIFY2(run_and_check(*kv, rows, 0, kTokens, {11, 1}, why), why.c_str());
    }

    void a_cut_within_the_spare_slots_keeps_the_window_and_a_deeper_one_starts_over() {
        const Rows rows(kTokens);
        auto kv = make_group("full");
        std::string why;
        QVERIFY2(run_and_check(*kv, rows, 0, 70, {1}, why), why.c_str());
        // A rejected draft: 20 tokens go back, then others take their place (same rows here).
        QCOMPARE(kv->keep_prefix(0, 50), 50);
        QVERIFY2(run_and_check(*kv, rows, 50, kTokens, {3, 1}, why), why.c_str());
        // Deeper than the ring's spare slots (kRecentRollback): the sequence starts over.
        QCOMPARE(kv->keep_prefix(0, kTokens - kRecentRollback - 1), 0);
        QCOMPARE(kv->n_tokens(0), 0);
    }

    void the_ring_is_counted_and_no_cached_prefix_is_adopted() {
        const Rows rows(kTokens);
        auto kv = make_group("full");
        std::string why;
        QVERIFY2(run_and_check(*kv, rows, 0, 40, {16}, why), why.c_str());
        const uint64_t ring = static_cast<uint64_t>(kRecent + kRecentRollback) * kHeads * kDim * 2 * 2;
        const uint64_t blocks = (40 + 15) / 16 * kv->block_bytes();
        QCOMPARE(kv->usage(0).bytes_in_use, blocks + ring);
        QCOMPARE(kv->usage().bytes_in_use, blocks + ring);
        QCOMPARE(kv->layer_bytes(0).front(), blocks + ring);
        // The last query read kRecent f16 rows and 32 q4_0 rows, K and V, in both heads.
        const uint64_t f16_row = 2 * kDim, q4_row = kv_bytes(KvDType::q4_0, kDim);
        QCOMPARE(kv->usage(0).bytes_read_last_step, (kRecent * 2 * f16_row + (40 - kRecent) * 2 * q4_row) * kHeads);
        kv->free(0);
        std::vector<TokenId> ids(40, 1);
        QCOMPARE(kv->cached_prefix_tokens(ids), 0);
        QCOMPARE(kv->adopt_cached_prefix(1, ids), 0);
    }

    void policies_whose_rows_are_not_their_tokens_refuse_it() {
        for (const char* spec : {"cross_layer:group=2", "latent:rank=64"}) {
            PagedKvShape s = shape();
            s.n_layers = 2;
            auto parsed = parse_attention_spec(spec);
            QVERIFY(parsed.ok());
            auto group = KvGroup::create(*parsed, KvTypes{KvDType::q4_0, KvDType::q4_0, kRecent}, s, 0, 512);
            QVERIFY2(!group.ok(), spec);
            QVERIFY2(group.status().message().find("recent=8") != std::string::npos, group.status().message().c_str());
        }
    }
};

QTEST_APPLESS_MAIN(TestRecentWindow)
#include "test_recent_window.moc"
