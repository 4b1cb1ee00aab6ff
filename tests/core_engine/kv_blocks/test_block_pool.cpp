// Block pool tests on a pool of 6 blocks (5 usable): exact ids handed out, ref counts and free-queue
// order after each allocate / release / prefix hit / eviction, the null block never handed out,
// "no room" leaving everything unchanged, and the chained block hash.
#include <QTest>

#include <string>
#include <vector>

#include "kv_blocks/block_pool.h"

using namespace workbench;

namespace {

using Ids = std::vector<BlockId>;

std::vector<int32_t> ref_counts(const BlockPool& pool) {
    std::vector<int32_t> refs;
    for (BlockId b = 0; b < pool.n_blocks(); ++b) refs.push_back(pool.ref_count(b));
    return refs;
}

Ids take(BlockPool& pool, int32_t n) {
    Result<Ids> r = pool.allocate(n);
    return r.ok() ? std::move(r).value() : Ids{-1};
}

}  // namespace

class TestBlockPool : public QObject {
    Q_OBJECT

private slots:
    void fresh_pool_queues_all_but_the_null_block();
    void allocate_takes_from_the_head();
    void release_appends_in_the_given_order();
    void shared_block_frees_on_last_release();
    void no_room_changes_nothing();
    void whole_pool_never_hands_out_block_zero();
    void cached_block_stays_free_and_revives();
    void revive_from_head_middle_and_tail();
    void allocating_a_cached_block_evicts_its_hash();
    void forgetting_free_hashes_keeps_referenced_ones();
    void hash_registration_rules();
    void chained_hash_depends_on_parent_and_tokens();
};

void TestBlockPool::fresh_pool_queues_all_but_the_null_block() {
    BlockPool pool(6, 4);
    QCOMPARE(pool.n_blocks(), 6);
    QCOMPARE(pool.n_usable(), 5);
    QCOMPARE(pool.n_tokens_per_block(), 4);
    QCOMPARE(pool.n_free(), 5);
    QCOMPARE(pool.free_queue(), (Ids{1, 2, 3, 4, 5}));
    QVERIFY(!pool.is_free(kNullBlock));
    QCOMPARE(pool.ref_count(kNullBlock), 0);
    QCOMPARE(pool.n_cached(), 0);
}

void TestBlockPool::allocate_takes_from_the_head() {
    BlockPool pool(6, 4);
    QCOMPARE(take(pool, 2), (Ids{1, 2}));
    QCOMPARE(pool.free_queue(), (Ids{3, 4, 5}));
    QCOMPARE(ref_counts(pool), (std::vector<int32_t>{0, 1, 1, 0, 0, 0}));
    QCOMPARE(take(pool, 0), Ids{});
    QCOMPARE(take(pool, 1), Ids{3});
    QCOMPARE(pool.n_free(), 2);
}

void TestBlockPool::release_appends_in_the_given_order() {
    BlockPool pool(6, 4);
    QCOMPARE(take(pool, 3), (Ids{1, 2, 3}));
    const Ids reversed{3, 2, 1};
    pool.release(reversed);
    // The free queue is the eviction order: the remaining never-used blocks first, then 3, 2, 1.
    QCOMPARE(pool.free_queue(), (Ids{4, 5, 3, 2, 1}));
    QCOMPARE(take(pool, 3), (Ids{4, 5, 3}));
    QCOMPARE(pool.free_queue(), (Ids{2, 1}));
}

void TestBlockPool::shared_block_frees_on_last_release() {
    BlockPool pool(6, 4);
    const Ids blocks = take(pool, 2);
    pool.acquire(blocks);
    QCOMPARE(ref_counts(pool), (std::vector<int32_t>{0, 2, 2, 0, 0, 0}));
    const Ids one{1};
    pool.release(one);
    QCOMPARE(pool.ref_count(1), 1);
    QVERIFY(!pool.is_free(1));
    QCOMPARE(pool.free_queue(), (Ids{3, 4, 5}));
    pool.release(one);
    QCOMPARE(pool.ref_count(1), 0);
    QCOMPARE(pool.free_queue(), (Ids{3, 4, 5, 1}));
}

void TestBlockPool::no_room_changes_nothing() {
    BlockPool pool(6, 4);
    QCOMPARE(take(pool, 3), (Ids{1, 2, 3}));
    QVERIFY(pool.register_hash(2, 77));
    const std::vector<int32_t> refs = ref_counts(pool);

    const Result<Ids> r = pool.allocate(3);
    QVERIFY(!r.ok());
    QCOMPARE(r.status().code(), StatusCode::resource_exhausted);
    QVERIFY2(r.status().message().find("need 3 free blocks, 2 free of 5") != std::string::npos,
             r.status().message().c_str());
    QCOMPARE(pool.allocate(-1).status().code(), StatusCode::resource_exhausted);
    QCOMPARE(pool.free_queue(), (Ids{4, 5}));
    QCOMPARE(ref_counts(pool), refs);
    QCOMPARE(pool.lookup(77), std::optional<BlockId>(2));
}

void TestBlockPool::whole_pool_never_hands_out_block_zero() {
    BlockPool pool(6, 4);
    QCOMPARE(take(pool, 5), (Ids{1, 2, 3, 4, 5}));
    QCOMPARE(pool.n_free(), 0);
    QVERIFY(pool.free_queue().empty());
    QVERIFY(!pool.allocate(1).ok());
    const Ids all{5, 4, 3, 2, 1};
    pool.release(all);
    QCOMPARE(take(pool, 5), (Ids{5, 4, 3, 2, 1}));
}

void TestBlockPool::cached_block_stays_free_and_revives() {
    BlockPool pool(6, 4);
    QCOMPARE(take(pool, 2), (Ids{1, 2}));
    QVERIFY(pool.register_hash(1, 1001));
    QCOMPARE(pool.n_cached(), 1);
    QCOMPARE(pool.n_cached_free(), 0);

    const Ids both{2, 1};
    pool.release(both);
    QCOMPARE(pool.free_queue(), (Ids{3, 4, 5, 2, 1}));
    // Free but still cached: a prefix hit can find it until it is evicted.
    QCOMPARE(pool.lookup(1001), std::optional<BlockId>(1));
    QCOMPARE(pool.block_hash(1), std::optional<BlockHash>(1001));
    QCOMPARE(pool.n_cached_free(), 1);

    const Ids hit{1};
    pool.acquire(hit);
    QCOMPARE(pool.ref_count(1), 1);
    QVERIFY(!pool.is_free(1));
    QCOMPARE(pool.free_queue(), (Ids{3, 4, 5, 2}));
    QCOMPARE(pool.block_hash(1), std::optional<BlockHash>(1001));
    QCOMPARE(pool.n_cached_free(), 0);

    pool.release(hit);
    QCOMPARE(pool.free_queue(), (Ids{3, 4, 5, 2, 1}));
}

void TestBlockPool::revive_from_head_middle_and_tail() {
    BlockPool pool(6, 4);
    const Ids middle{3}, head{1}, tail{5};
    pool.acquire(middle);
    QCOMPARE(pool.free_queue(), (Ids{1, 2, 4, 5}));
    pool.acquire(head);
    QCOMPARE(pool.free_queue(), (Ids{2, 4, 5}));
    pool.acquire(tail);
    QCOMPARE(pool.free_queue(), (Ids{2, 4}));
    QCOMPARE(ref_counts(pool), (std::vector<int32_t>{0, 1, 0, 1, 0, 1}));
    QCOMPARE(take(pool, 2), (Ids{2, 4}));
    QCOMPARE(pool.n_free(), 0);
    pool.release(middle);
    QCOMPARE(pool.free_queue(), Ids{3});
}

void TestBlockPool::allocating_a_cached_block_evicts_its_hash() {
    BlockPool pool(4, 4);
    QCOMPARE(take(pool, 3), (Ids{1, 2, 3}));
    QVERIFY(pool.register_hash(1, 11));
    QVERIFY(pool.register_hash(2, 22));
    const Ids order{1, 3, 2};
    pool.release(order);
    QCOMPARE(pool.free_queue(), (Ids{1, 3, 2}));
    QCOMPARE(pool.n_cached_free(), 2);

    // The head is cached block 1: allocating it drops its hash; block 2 is still reusable.
    QCOMPARE(take(pool, 1), Ids{1});
    QCOMPARE(pool.lookup(11), std::nullopt);
    QCOMPARE(pool.block_hash(1), std::nullopt);
    QCOMPARE(pool.lookup(22), std::optional<BlockId>(2));
    QCOMPARE(pool.n_cached(), 1);
    QCOMPARE(pool.n_cached_free(), 1);

    QCOMPARE(take(pool, 2), (Ids{3, 2}));
    QCOMPARE(pool.n_cached(), 0);
    QCOMPARE(pool.n_cached_free(), 0);
}

void TestBlockPool::forgetting_free_hashes_keeps_referenced_ones() {
    BlockPool pool(5, 4);
    QCOMPARE(take(pool, 3), (Ids{1, 2, 3}));
    QVERIFY(pool.register_hash(1, 11));
    QVERIFY(pool.register_hash(2, 22));
    QVERIFY(pool.register_hash(3, 33));
    const Ids freed{1, 2};
    pool.release(freed);
    QCOMPARE(pool.n_cached_free(), 2);

    pool.forget_free_hashes();
    QCOMPARE(pool.lookup(11), std::nullopt);
    QCOMPARE(pool.lookup(22), std::nullopt);
    QCOMPARE(pool.lookup(33), std::optional<BlockId>(3));   // still referenced: still shareable
    QCOMPARE(pool.n_cached(), 1);
    QCOMPARE(pool.n_cached_free(), 0);
    QCOMPARE(pool.n_free(), 3);
    QCOMPARE(pool.free_queue(), (Ids{1, 2, 4}));             // back in id order, as a fresh pool
    QCOMPARE(take(pool, 2), (Ids{1, 2}));
}

void TestBlockPool::hash_registration_rules() {
    BlockPool pool(6, 4);
    QCOMPARE(take(pool, 2), (Ids{1, 2}));
    QVERIFY(pool.register_hash(1, 5));
    QVERIFY(pool.register_hash(1, 5));  // again: a no-op
    QCOMPARE(pool.n_cached(), 1);
    // Another block with the same contents: the first stays the cached one.
    QVERIFY(!pool.register_hash(2, 5));
    QCOMPARE(pool.lookup(5), std::optional<BlockId>(1));
    QCOMPARE(pool.block_hash(2), std::nullopt);

    pool.unregister_hash(1);
    QCOMPARE(pool.lookup(5), std::nullopt);
    QCOMPARE(pool.n_cached(), 0);
    pool.unregister_hash(1);  // uncached: a no-op
    QVERIFY(pool.register_hash(2, 5));
    QCOMPARE(pool.lookup(5), std::optional<BlockId>(2));

    // Registering a free block counts it as cached and free.
    const Ids two{2};
    pool.release(two);
    pool.unregister_hash(2);
    QCOMPARE(pool.n_cached_free(), 0);
    QVERIFY(pool.register_hash(2, 9));
    QCOMPARE(pool.n_cached_free(), 1);
}

void TestBlockPool::chained_hash_depends_on_parent_and_tokens() {
    const std::vector<TokenId> a{1, 2, 3, 4};
    const std::vector<TokenId> swapped{2, 1, 3, 4};
    const std::vector<TokenId> shorter{1, 2, 3};
    const BlockHash h = hash_block_tokens(kRootBlockHash, a);
    QCOMPARE(hash_block_tokens(kRootBlockHash, a), h);
    QVERIFY(hash_block_tokens(kRootBlockHash, swapped) != h);
    QVERIFY(hash_block_tokens(kRootBlockHash, shorter) != h);
    QVERIFY(hash_block_tokens(h, a) != h);
    // The same block after different prefixes hashes differently.
    QVERIFY(hash_block_tokens(h, a) != hash_block_tokens(hash_block_tokens(kRootBlockHash, swapped), a));
    // Negative ids (never valid tokens, but the hash must not fold them onto others).
    const std::vector<TokenId> negative{-1, 2, 3, 4};
    const std::vector<TokenId> large{-1 + (1 << 30), 2, 3, 4};
    QVERIFY(hash_block_tokens(kRootBlockHash, negative) != hash_block_tokens(kRootBlockHash, large));
}

QTEST_APPLESS_MAIN(TestBlockPool)
#include "test_block_pool.moc"
