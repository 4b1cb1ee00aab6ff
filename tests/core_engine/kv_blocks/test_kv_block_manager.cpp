// KV cache manager tests on tiny pools (4 tokens a block): exact block tables, ref counts and
// free-queue order after allocate, prefix hit, fork, copy-on-write, truncate, free, commit and
// rollback; failures leave the state unchanged; byte accounting against hand-computed numbers.
// The randomized run is test_kv_block_stress.
#include <QTest>

#include <string>
#include <vector>

#include "kv_blocks/kv_block_manager.h"
#include "kv_blocks/kv_store.h"

using namespace workbench;

namespace {

using Ids = std::vector<BlockId>;
using Tokens = std::vector<TokenId>;

constexpr int32_t kBlock = 4;
// 1 layer, 1 head of 32, f16: 128 bytes a token, 512 a block.
const KvCacheConfig kTiny{{KvDType::f16, KvDType::f16}, 1, 1, 32, kBlock};
// SmolLM2-135M: 30 layers, 3 KV heads of 64.
const KvCacheConfig kSmol{{KvDType::f16, KvDType::f16}, 30, 3, 64, 16};

KvBlockManager make(int32_t n_blocks, const KvCacheConfig& config = kTiny) {
    return KvBlockManager::create(config, n_blocks).value();
}

Tokens range(TokenId first, int32_t n) {
    Tokens t;
    for (int32_t i = 0; i < n; ++i) t.push_back(first + i);
    return t;
}

Tokens concat(Tokens a, const Tokens& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

Ids ids(std::span<const BlockId> s) { return {s.begin(), s.end()}; }

// New block ids of a successful allocation; {-1} when it failed, so QCOMPARE shows a mismatch.
Ids added(Result<SlotAllocation> r) { return r.ok() ? r->new_blocks : Ids{-1}; }

std::vector<int32_t> refs(const KvBlockManager& m) {
    std::vector<int32_t> out;
    for (BlockId b = 0; b < m.pool().n_blocks(); ++b) out.push_back(m.pool().ref_count(b));
    return out;
}

// Everything observable, as text: compared before and after a call that must change nothing.
QByteArray describe(const KvBlockManager& m, const std::vector<SeqId>& seqs) {
    std::string s = "free:";
    // Appends piecewise: GCC 12 warns falsely (-Wrestrict) on `" " + std::to_string(...)`.
    const auto put = [&s](int64_t value, const char* suffix = "") {
        s += ' ';
        s += std::to_string(value);
        s += suffix;
    };
    for (BlockId b : m.pool().free_queue()) put(b);
    s += " | refs/hash:";
    for (BlockId b = 0; b < m.pool().n_blocks(); ++b) put(m.pool().ref_count(b), m.pool().block_hash(b) ? "h" : "");
    for (SeqId id : seqs) {
        s += " | seq";
        put(id, m.has_sequence(id) ? ":" : " absent:");
        for (BlockId b : m.block_table(id)) put(b);
        put(m.n_tokens(id), "/");
        put(m.n_tokens_committed(id));
    }
    return QByteArray::fromStdString(s);
}

// Runs a whole prompt as one committed step and frees the sequence: its full blocks stay cached
// in the free queue.
bool cache_and_free(KvBlockManager& m, SeqId seq, const Tokens& prompt) {
    return m.allocate_slots(seq, static_cast<int32_t>(prompt.size()), prompt).ok() && m.commit(seq).ok() &&
           m.free(seq).ok();
}

bool has(const Status& status, StatusCode code, const char* text) {
    return status.code() == code && status.message().find(text) != std::string::npos;
}

}  // namespace

class TestKvBlockManager : public QObject {
    Q_OBJECT

private slots:
    void allocation_grows_block_by_block();
    void no_room_changes_nothing();
    void never_fits_says_how_much_budget();
    void bad_requests_are_refused();
    void free_releases_the_tail_first();
    void prefix_hit_shares_full_blocks();
    void prefix_hit_revives_free_blocks();
    void stale_or_foreign_prefix_is_refused();
    void eviction_drops_the_prefix();
    void fork_shares_and_copies_on_write();
    void truncate_releases_and_uncaches_on_write();
    void rollback_forgets_uncommitted_slots();
    void bytes_for_real_models();
    void budget_sizes_the_pool();
    void config_errors_name_the_field();
    void per_layer_row_widths();
};

void TestKvBlockManager::allocation_grows_block_by_block() {
    KvBlockManager m = make(8);
    const Tokens t = range(0, 12);
    QCOMPARE(added(m.allocate_slots(1, 6, t)), (Ids{1, 2}));
    QCOMPARE(ids(m.block_table(1)), (Ids{1, 2}));
    QCOMPARE(m.n_tokens(1), 6);
    QCOMPARE(m.pool().free_queue(), (Ids{3, 4, 5, 6, 7}));
    QCOMPARE(added(m.allocate_slots(1, 1, t)), Ids{});
    QCOMPARE(added(m.allocate_slots(1, 2, t)), Ids{3});
    QCOMPARE(added(m.allocate_slots(1, 0, t)), Ids{});
    QCOMPARE(refs(m), (std::vector<int32_t>{0, 1, 1, 1, 0, 0, 0, 0}));
    QCOMPARE(m.bytes_in_use(), uint64_t(3 * 512));
    QCOMPARE(m.sequence_bytes(1), uint64_t(3 * 512));
    QCOMPARE(m.bytes_allocated(), uint64_t(8 * 512));
    QCOMPARE(m.peak_bytes_in_use(), uint64_t(3 * 512));
    QVERIFY(!m.allocate_slots(1, 1, t)->copy.has_value());
}

void TestKvBlockManager::no_room_changes_nothing() {
    KvBlockManager m = make(8);
    QCOMPARE(added(m.allocate_slots(1, 20, range(0, 20))), (Ids{1, 2, 3, 4, 5}));
    QCOMPARE(added(m.allocate_slots(2, 8, range(50, 8))), (Ids{6, 7}));
    const QByteArray before = describe(m, {1, 2, 3});

    const auto grow = m.allocate_slots(1, 1, range(0, 21));
    QVERIFY(has(grow.status(), StatusCode::resource_exhausted, "sequence 1 needs 1 more blocks, 0 can be taken now"));
    const auto fresh = m.allocate_slots(3, 3, range(90, 3));
    QCOMPARE(fresh.status().code(), StatusCode::resource_exhausted);
    QCOMPARE(describe(m, {1, 2, 3}), before);
    QVERIFY(!m.has_sequence(3));

    // Once seq 1 is freed, its tail block is the first one reused.
    QVERIFY(m.free(1).ok());
    QCOMPARE(added(m.allocate_slots(3, 3, range(90, 3))), Ids{5});
}

void TestKvBlockManager::never_fits_says_how_much_budget() {
    KvBlockManager m = make(8);
    QCOMPARE(added(m.allocate_slots(1, 20, range(0, 29))), (Ids{1, 2, 3, 4, 5}));
    const QByteArray before = describe(m, {1});
    const auto r = m.allocate_slots(1, 9, range(0, 29));
    QVERIFY2(has(r.status(), StatusCode::out_of_range,
                 "sequence 1 would hold 29 tokens in 8 blocks, but the pool has 7 usable blocks (28 tokens)"),
             r.status().message().c_str());
    QVERIFY(r.status().message().find("raise --kv-budget") != std::string::npos);
    QCOMPARE(describe(m, {1}), before);
    QCOMPARE(m.max_tokens_per_sequence(), int64_t(28));
}

void TestKvBlockManager::bad_requests_are_refused() {
    KvBlockManager m = make(8);
    QVERIFY(has(m.allocate_slots(1, -1, {}).status(), StatusCode::invalid_argument, "cannot add -1 tokens"));
    QVERIFY(has(m.allocate_slots(1, 5, range(0, 4)).status(), StatusCode::invalid_argument,
                "will hold 5 tokens but 4 token ids were given"));
    QVERIFY(m.allocate_slots(1, 8, range(0, 8)).ok());
    QVERIFY(m.commit(1).ok());
    const Tokens longer = range(0, 12);
    const CachedPrefix prefix = m.find_cached_prefix(longer);
    QCOMPARE(prefix.blocks, (Ids{1, 2}));
    QVERIFY(has(m.allocate_slots(1, 1, longer, prefix).status(), StatusCode::invalid_argument, "already exists"));

    QCOMPARE(m.commit(7).code(), StatusCode::not_found);
    QCOMPARE(m.rollback(7).code(), StatusCode::not_found);
    QCOMPARE(m.free(7).code(), StatusCode::not_found);
    QCOMPARE(m.truncate(7, 0).code(), StatusCode::not_found);
    QCOMPARE(m.fork(7, 8).code(), StatusCode::not_found);
    QVERIFY(has(m.fork(1, 1), StatusCode::invalid_argument, "already exists"));
    QVERIFY(has(m.truncate(1, 9), StatusCode::invalid_argument, "cannot truncate sequence 1 of 8 tokens to 9"));
    QCOMPARE(m.truncate(1, -1).code(), StatusCode::invalid_argument);
    QCOMPARE(m.n_tokens(1), 8);
    QCOMPARE(m.n_tokens(7), 0);
    QVERIFY(m.block_table(7).empty());
}

void TestKvBlockManager::free_releases_the_tail_first() {
    KvBlockManager m = make(8);
    QCOMPARE(added(m.allocate_slots(1, 10, range(0, 10))), (Ids{1, 2, 3}));
    QCOMPARE(added(m.allocate_slots(2, 4, range(0, 4))), Ids{4});
    QVERIFY(m.free(1).ok());
    QCOMPARE(m.pool().free_queue(), (Ids{5, 6, 7, 3, 2, 1}));
    QCOMPARE(m.bytes_in_use(), uint64_t(512));
    QVERIFY(m.free(2).ok());
    QCOMPARE(m.pool().free_queue(), (Ids{5, 6, 7, 3, 2, 1, 4}));
    QCOMPARE(m.n_sequences(), 0);
    QCOMPARE(m.peak_bytes_in_use(), uint64_t(4 * 512));
}

void TestKvBlockManager::prefix_hit_shares_full_blocks() {
    KvBlockManager m = make(8);
    const Tokens p = range(100, 10);
    QCOMPARE(added(m.allocate_slots(1, 10, p)), (Ids{1, 2, 3}));
    QCOMPARE(m.find_cached_prefix(p).n_tokens, 0);  // nothing is shared before the step commits
    QVERIFY(m.commit(1).ok());
    QCOMPARE(m.pool().n_cached(), 2);
    QCOMPARE(m.pool().block_hash(3), std::nullopt);  // partial: never cached

    const Tokens q = concat(range(100, 8), {500, 501, 502});
    const CachedPrefix prefix = m.find_cached_prefix(q);
    QCOMPARE(prefix.n_tokens, 8);
    QCOMPARE(prefix.blocks, (Ids{1, 2}));
    const auto r = m.allocate_slots(2, 3, q, prefix);
    QCOMPARE(added(r), Ids{4});
    QCOMPARE(ids(m.block_table(2)), (Ids{1, 2, 4}));
    QCOMPARE(refs(m), (std::vector<int32_t>{0, 2, 2, 1, 1, 0, 0, 0}));
    QCOMPARE(m.n_tokens(2), 11);
    QCOMPARE(m.n_tokens_committed(2), 8);
    QCOMPARE(m.bytes_in_use(), uint64_t(4 * 512));
    QCOMPARE(m.sequence_bytes(1), uint64_t(3 * 512));
    QCOMPARE(m.sequence_bytes(2), uint64_t(3 * 512));

    // The last token is always computed: 8 tokens reuse one block, 9 reuse two.
    QCOMPARE(m.find_cached_prefix(range(100, 8)).blocks, Ids{1});
    QCOMPARE(m.find_cached_prefix(range(100, 9)).blocks, (Ids{1, 2}));
    QCOMPARE(m.find_cached_prefix(range(101, 9)).n_tokens, 0);
    QCOMPARE(m.find_cached_prefix(concat({100, 101, 102, 999}, range(104, 6))).n_tokens, 0);
    QCOMPARE(m.find_cached_prefix(concat(range(100, 4), {0, 0, 0, 0, 0})).blocks, Ids{1});
    QCOMPARE(m.find_cached_prefix({}).n_tokens, 0);
}

void TestKvBlockManager::prefix_hit_revives_free_blocks() {
    KvBlockManager m = make(5);
    const Tokens p = range(100, 10);
    QVERIFY(cache_and_free(m, 1, p));
    QCOMPARE(m.pool().free_queue(), (Ids{4, 3, 2, 1}));
    QCOMPARE(m.bytes_cached_free(), uint64_t(2 * 512));
    QCOMPARE(m.bytes_in_use(), uint64_t(0));
    QCOMPARE(added(m.allocate_slots(9, 4, range(0, 4))), Ids{4});

    // Two of the three free blocks are the prefix itself, so only one is left for new tokens.
    const Tokens q16 = concat(range(100, 8), range(700, 8));
    const QByteArray before = describe(m, {2, 9});
    const auto r = m.allocate_slots(2, 8, q16, m.find_cached_prefix(q16));
    QVERIFY2(has(r.status(), StatusCode::resource_exhausted, "needs 2 more blocks, 1 can be taken now"),
             r.status().message().c_str());
    QCOMPARE(describe(m, {2, 9}), before);

    const Tokens q12 = concat(range(100, 8), range(700, 4));
    QCOMPARE(added(m.allocate_slots(2, 4, q12, m.find_cached_prefix(q12))), Ids{3});
    QCOMPARE(ids(m.block_table(2)), (Ids{1, 2, 3}));
    QCOMPARE(refs(m), (std::vector<int32_t>{0, 1, 1, 1, 1}));
    QVERIFY(m.pool().free_queue().empty());
    QCOMPARE(m.bytes_cached_free(), uint64_t(0));
}

void TestKvBlockManager::stale_or_foreign_prefix_is_refused() {
    KvBlockManager m = make(4);
    const Tokens p = range(100, 10);
    QVERIFY(cache_and_free(m, 1, p));
    const CachedPrefix prefix = m.find_cached_prefix(p);
    QCOMPARE(prefix.blocks, (Ids{1, 2}));
    QCOMPARE(added(m.allocate_slots(5, 12, range(0, 12))), (Ids{3, 2, 1}));  // evicts both
    QVERIFY(m.free(5).ok());
    QVERIFY(has(m.allocate_slots(2, 2, p, prefix).status(), StatusCode::invalid_argument, "was evicted"));
    QVERIFY(!m.has_sequence(2));

    QVERIFY(m.allocate_slots(6, 10, p).ok());
    QVERIFY(m.commit(6).ok());
    const CachedPrefix fresh = m.find_cached_prefix(p);
    QCOMPARE(fresh.n_tokens, 8);
    QVERIFY(has(m.allocate_slots(7, 2, range(0, 10), fresh).status(), StatusCode::invalid_argument,
                "does not match the token ids"));
    CachedPrefix malformed = fresh;
    malformed.n_tokens = 7;
    QVERIFY(has(m.allocate_slots(7, 2, p, malformed).status(), StatusCode::invalid_argument, "malformed"));
    QVERIFY(!m.has_sequence(7));
}

void TestKvBlockManager::eviction_drops_the_prefix() {
    KvBlockManager m = make(5);
    const Tokens p = range(100, 10);
    QVERIFY(cache_and_free(m, 1, p));
    QCOMPARE(m.pool().free_queue(), (Ids{4, 3, 2, 1}));
    QCOMPARE(added(m.allocate_slots(2, 12, range(0, 12))), (Ids{4, 3, 2}));
    QCOMPARE(m.pool().n_cached(), 1);
    QCOMPARE(m.find_cached_prefix(p).blocks, Ids{1});
    QCOMPARE(m.pool().block_hash(2), std::nullopt);
}

void TestKvBlockManager::fork_shares_and_copies_on_write() {
    KvBlockManager m = make(8);
    const Tokens t = range(0, 6);
    QVERIFY(m.allocate_slots(1, 6, t).ok());
    QVERIFY(m.commit(1).ok());
    QVERIFY(m.fork(1, 2).ok());
    QCOMPARE(ids(m.block_table(2)), (Ids{1, 2}));
    QCOMPARE(m.n_tokens(2), 6);
    QCOMPARE(refs(m), (std::vector<int32_t>{0, 2, 2, 0, 0, 0, 0, 0}));
    QCOMPARE(m.bytes_in_use(), uint64_t(2 * 512));
    QCOMPARE(m.sequence_bytes(2), uint64_t(2 * 512));

    // The child writes into the shared, partly filled block 2: it gets a copy.
    const auto child = m.allocate_slots(2, 1, concat(t, {900}));
    QVERIFY(child.ok());
    QCOMPARE(child->new_blocks, Ids{3});
    QCOMPARE(child->copy, std::optional<BlockCopy>(BlockCopy{2, 3}));
    QCOMPARE(ids(m.block_table(2)), (Ids{1, 3}));
    QCOMPARE(refs(m), (std::vector<int32_t>{0, 2, 1, 1, 0, 0, 0, 0}));

    // The parent is now block 2's only holder and writes in place.
    const auto parent = m.allocate_slots(1, 2, concat(t, {901, 902}));
    QCOMPARE(added(parent), Ids{});
    QVERIFY(!parent->copy.has_value());
    QCOMPARE(ids(m.block_table(1)), (Ids{1, 2}));
    QVERIFY(m.commit(1).ok());

    // Forking at a block boundary shares full blocks only: appending needs no copy.
    QVERIFY(m.fork(1, 3).ok());
    QCOMPARE(refs(m), (std::vector<int32_t>{0, 3, 2, 1, 0, 0, 0, 0}));
    const auto boundary = m.allocate_slots(3, 2, concat(t, {901, 902, 7, 8}));
    QCOMPARE(added(boundary), Ids{4});
    QVERIFY(!boundary->copy.has_value());
    QCOMPARE(ids(m.block_table(3)), (Ids{1, 2, 4}));
    QVERIFY(m.free(1).ok());
    QCOMPARE(refs(m), (std::vector<int32_t>{0, 2, 1, 1, 1, 0, 0, 0}));
    QCOMPARE(m.pool().free_queue(), (Ids{5, 6, 7}));
}

void TestKvBlockManager::truncate_releases_and_uncaches_on_write() {
    KvBlockManager m = make(8);
    const Tokens t = range(0, 14);
    QCOMPARE(added(m.allocate_slots(1, 14, t)), (Ids{1, 2, 3, 4}));
    QVERIFY(m.commit(1).ok());
    QVERIFY(m.truncate(1, 9).ok());
    QCOMPARE(ids(m.block_table(1)), (Ids{1, 2, 3}));
    QCOMPARE(m.pool().free_queue(), (Ids{5, 6, 7, 4}));
    QCOMPARE(m.n_tokens_committed(1), 9);
    QVERIFY(m.truncate(1, 8).ok());
    QCOMPARE(m.pool().free_queue(), (Ids{5, 6, 7, 4, 3}));
    QCOMPARE(m.pool().n_cached_free(), 1);  // block 3 was full: still a reusable prefix

    // Cut into cached block 2 and write a different token: its old hash must go.
    QVERIFY(m.truncate(1, 6).ok());
    const BlockHash old_hash = m.pool().block_hash(2).value();
    QCOMPARE(m.pool().lookup(old_hash), std::optional<BlockId>(2));
    QCOMPARE(added(m.allocate_slots(1, 1, concat(range(0, 6), {77}))), Ids{});
    QCOMPARE(m.pool().lookup(old_hash), std::nullopt);
    QVERIFY(m.commit(1).ok());

    // Cut into a block shared with a fork: the write copies it.
    QVERIFY(m.truncate(1, 4).ok());
    QCOMPARE(m.pool().free_queue(), (Ids{5, 6, 7, 4, 3, 2}));
    QVERIFY(m.allocate_slots(1, 4, range(0, 8)).ok());
    QVERIFY(m.commit(1).ok());
    QCOMPARE(ids(m.block_table(1)), (Ids{1, 5}));
    QVERIFY(m.fork(1, 2).ok());
    QVERIFY(m.truncate(2, 6).ok());
    QCOMPARE(refs(m), (std::vector<int32_t>{0, 2, 0, 0, 0, 2, 0, 0}));
    const auto cow = m.allocate_slots(2, 1, concat(range(0, 6), {55}));
    QCOMPARE(cow->copy, std::optional<BlockCopy>(BlockCopy{5, 6}));
    QCOMPARE(ids(m.block_table(2)), (Ids{1, 6}));

    QVERIFY(m.truncate(2, 0).ok());
    QVERIFY(m.has_sequence(2));
    QVERIFY(m.block_table(2).empty());
    QCOMPARE(m.pool().free_queue(), (Ids{7, 4, 3, 2, 6}));
}

void TestKvBlockManager::rollback_forgets_uncommitted_slots() {
    KvBlockManager m = make(8);
    const Tokens t = range(0, 10);
    QVERIFY(m.allocate_slots(1, 6, t).ok());
    QVERIFY(m.commit(1).ok());
    QCOMPARE(added(m.allocate_slots(1, 4, t)), Ids{3});
    QCOMPARE(m.pool().block_hash(2), std::nullopt);  // full but not committed: not shareable yet
    QVERIFY(m.rollback(1).ok());
    QCOMPARE(m.n_tokens(1), 6);
    QCOMPARE(ids(m.block_table(1)), (Ids{1, 2}));
    QCOMPARE(m.pool().free_queue(), (Ids{4, 5, 6, 7, 3}));
    QCOMPARE(m.find_cached_prefix(t).blocks, Ids{1});
    QCOMPARE(added(m.allocate_slots(1, 4, t)), Ids{4});
    QVERIFY(m.commit(1).ok());
    QCOMPARE(m.find_cached_prefix(t).blocks, (Ids{1, 2}));
}

void TestKvBlockManager::bytes_for_real_models() {
    QCOMPARE(kv_bytes_per_token(kSmol), uint64_t(23040));  // 2 · 30 · 3 · 64 · 2
    QCOMPARE(kv_bytes_per_block(kSmol), uint64_t(368640));
    KvCacheConfig quant = kSmol;
    quant.types = {KvDType::q8_0, KvDType::q4_0};
    QCOMPARE(kv_bytes_per_token(quant), uint64_t(9360));  // 30 · 3 · (2·34 + 2·18)
    QCOMPARE(kv_bytes_per_block(quant), uint64_t(149760));
    KvCacheConfig fp8 = kSmol;
    fp8.types = {KvDType::fp8, KvDType::f16};
    QCOMPARE(kv_bytes_per_token(fp8), uint64_t(17640));  // 30 · 3 · (68 + 128)
    // Llama-3-8B: 32 layers, 8 KV heads of 128, f16 → 128 KiB a token.
    const KvCacheConfig llama{{KvDType::f16, KvDType::f16}, 32, 8, 128, 16};
    QCOMPARE(kv_bytes_per_token(llama), uint64_t(131072));

    KvBlockManager m = make(10, kSmol);
    QCOMPARE(m.bytes_per_token(), uint64_t(23040));
    QCOMPARE(m.bytes_per_block(), uint64_t(368640));
    QCOMPARE(m.bytes_allocated(), uint64_t(3686400));
    QVERIFY(m.allocate_slots(1, 40, range(0, 40)).ok());  // 3 blocks
    QVERIFY(m.allocate_slots(2, 17, range(0, 17)).ok());  // 2 blocks
    QCOMPARE(m.bytes_in_use(), uint64_t(5 * 368640));
    QCOMPARE(m.sequence_bytes(1), uint64_t(3 * 368640));
    QVERIFY(m.free(1).ok());
    QCOMPARE(m.bytes_in_use(), uint64_t(2 * 368640));
    QCOMPARE(m.peak_bytes_in_use(), uint64_t(5 * 368640));
}

void TestKvBlockManager::budget_sizes_the_pool() {
    const auto m = KvBlockManager::create_for_budget(kSmol, 64ull << 20);
    QVERIFY(m.ok());
    QCOMPARE(m->pool().n_blocks(), 182);  // floor(67,108,864 / 368,640)
    QCOMPARE(m->bytes_allocated(), uint64_t(67092480));
    QCOMPARE(m->max_tokens_per_sequence(), int64_t(181 * 16));

    const auto tiny = kv_blocks_for_budget(kSmol, 500000);
    QVERIFY2(has(tiny.status(), StatusCode::resource_exhausted, "holds 1 KV blocks of 368640 bytes (16 tokens each)"),
             tiny.status().message().c_str());
    QVERIFY(tiny.status().message().find("0.70 MiB") != std::string::npos);

    auto small = KvBlockManager::create_for_budget(kSmol, 4ull << 20);
    QCOMPARE(small->pool().n_blocks(), 11);
    const auto r = small->allocate_slots(1, 161, range(0, 161));
    QVERIFY2(has(r.status(), StatusCode::out_of_range, "pool has 10 usable blocks (160 tokens)"),
             r.status().message().c_str());
    QVERIFY2(r.status().message().find("at least 4.22 MiB") != std::string::npos, r.status().message().c_str());
    QVERIFY(small->allocate_slots(1, 160, range(0, 160)).ok());
}

void TestKvBlockManager::config_errors_name_the_field() {
    KvCacheConfig c = kSmol;
    c.n_layers = 0;
    QVERIFY(has(validate_kv_cache_config(c), StatusCode::invalid_argument, "n_layers is 0, expected at least 1"));
    c = kSmol;
    c.n_tokens_per_block = -3;
    QVERIFY(has(validate_kv_cache_config(c), StatusCode::invalid_argument, "n_tokens_per_block is -3"));
    c = kSmol;
    c.head_dim = 80;
    QVERIFY(validate_kv_cache_config(c).ok());
    c.types.v = KvDType::q4_0;
    QVERIFY(has(validate_kv_cache_config(c), StatusCode::invalid_argument,
                "head_dim 80 is not a multiple of 32, the block of KV type q4_0"));
    c = kSmol;
    c.n_layers = c.n_kv_heads = c.head_dim = c.n_tokens_per_block = 1 << 30;
    QVERIFY(has(validate_kv_cache_config(c), StatusCode::invalid_argument, "overflow"));
    QVERIFY(has(KvBlockManager::create(kSmol, 1).status(), StatusCode::invalid_argument, "expected at least 2"));
    QCOMPARE(KvBlockManager::create(c, 4).status().code(), StatusCode::invalid_argument);
}

void TestKvBlockManager::per_layer_row_widths() {
    // Three layers, one KV head, rows of 64, 32 and 64 f16 values: a block of 16 tokens holds
    // 16 · 2 · 2 · (64 + 32 + 64) bytes, and the store lays out each layer at its own width.
    KvCacheConfig c{{KvDType::f16, KvDType::f16}, 3, 1, 64, 16};
    c.layer_head_dim = {64, 32, 64};
    QVERIFY(validate_kv_cache_config(c).ok());
    QCOMPARE(kv_bytes_per_block(c), uint64_t{16 * 2 * 2 * 160});
    QCOMPARE(kv_bytes_per_token(c), uint64_t{2 * 2 * 160});
    auto store = KvStore::create(c, 4);
    QVERIFY(store.ok());
    QVERIFY(!(*store)->uniform_rows());
    QCOMPARE((*store)->k_layout(0).row_bytes, int64_t{128});
    QCOMPARE((*store)->k_layout(1).row_bytes, int64_t{64});
    QCOMPARE((*store)->v_layout(1).block_stride, int64_t{64 * 16});
    QCOMPARE((*store)->k_row(1, 2, 3, 0) - (*store)->k_base(1), std::ptrdiff_t{2 * 64 * 16 + 3 * 64});
    c.layer_head_dim = {64, 32};
    QVERIFY(has(validate_kv_cache_config(c), StatusCode::invalid_argument, "2 per-layer row widths for 3 layers"));
    c.layer_head_dim = {64, 96, 64};
    QVERIFY(has(validate_kv_cache_config(c), StatusCode::invalid_argument, "layer 1's row width 96 is outside 1..64"));
    c.layer_head_dim = {64, 48, 64};
    c.types.k = KvDType::q8_0;
    QVERIFY(has(validate_kv_cache_config(c), StatusCode::invalid_argument, "head_dim 48 is not a multiple of 32"));
    // One width everywhere, given per layer: the same bytes as none given.
    KvCacheConfig same = kSmol;
    same.layer_head_dim.assign(30, 64);
    QCOMPARE(kv_bytes_per_block(same), kv_bytes_per_block(kSmol));
    QVERIFY((*KvStore::create(same, 2))->uniform_rows());
}

QTEST_APPLESS_MAIN(TestKvBlockManager)
#include "test_kv_block_manager.moc"
