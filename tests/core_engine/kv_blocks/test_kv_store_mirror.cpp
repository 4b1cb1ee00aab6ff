// The hook a device backend keeps its copy of the KV cache by (KvStoreMirror): every store has
// its own id, a block copy copies the bytes and tells the mirror which block went where, a fork's
// first write into the shared partial block is such a copy (and nothing before it is), rows the
// host writes name their (layer, block) — token rows and pooled entries alike — and a store
// going away says so. The CUDA backend's device KV relies on each of these; they hold on
// the CPU alone, so they are checked here, where every machine runs them.
#include <QTest>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "attention/paged_kv.h"
#include "kernels/cpu/thread_pool.h"
#include "kv_blocks/kv_store.h"

using namespace workbench;

namespace {

struct Recorder final : KvStoreMirror {
    struct Copy {
        uint64_t store;
        BlockId src, dst;
    };
    std::vector<Copy> copies;
    std::vector<uint64_t> released;
    std::vector<std::pair<int32_t, BlockId>> written;   // (layer, block), as reported
    void block_copied(uint64_t store_id, BlockId src, BlockId dst) override { copies.push_back({store_id, src, dst}); }
    void block_written(uint64_t, int32_t layer, BlockId block) override { written.emplace_back(layer, block); }
    void store_released(uint64_t store_id) override { released.push_back(store_id); }
};

KvCacheConfig small_config() {
    KvCacheConfig c;
    c.n_layers = 2;
    c.n_kv_heads = 2;
    c.head_dim = 32;
    c.n_tokens_per_block = 4;
    return c;
}

}  // namespace

class TestKvStoreMirror : public QObject {
    Q_OBJECT
private slots:
    void ids_differ_and_copies_are_reported() {
        auto a = KvStore::create(small_config(), 8);
        auto b = KvStore::create(small_config(), 8);
        QVERIFY(a.ok() && b.ok());
        QVERIFY((*a)->id() != (*b)->id());
        QCOMPARE((*a)->n_blocks(), 8);
        Recorder r;
        (*a)->set_mirror(&r);
        QCOMPARE((*a)->mirror(), static_cast<KvStoreMirror*>(&r));
        for (int32_t layer = 0; layer < 2; ++layer) std::memset((*a)->k_base(layer) + 3 * (*a)->k_layout(0).block_stride, 0x5a, (*a)->k_layout(0).block_stride);
        (*a)->copy_block(3, 6);
        QCOMPARE(r.copies.size(), size_t{1});
        QCOMPARE(r.copies[0].store, (*a)->id());
        QCOMPARE(r.copies[0].src, BlockId{3});
        QCOMPARE(r.copies[0].dst, BlockId{6});
        QCOMPARE((*a)->k_base(1)[6 * (*a)->k_layout(0).block_stride], uint8_t{0x5a});
        (*b)->copy_block(1, 2);   // no mirror there
        QCOMPARE(r.copies.size(), size_t{1});
        const uint64_t id = (*a)->id();
        a->reset();
        QCOMPARE(r.released, std::vector<uint64_t>{id});
    }

    void a_forks_first_write_into_the_shared_block_is_one_reported_copy() {
        const PagedKvShape shape{2, 2, 32, 4, {}, {}, {}};
        auto kv = PagedKv::create(AttentionSpec{}, KvTypes{}, shape, 0, 64, 2, 4);
        QVERIFY2(kv.ok(), kv.status().message().c_str());
        Recorder r;
        KvGroup& group = (*kv)->group_of(0);
        group.store().set_mirror(&r);
        const std::vector<TokenId> prompt = {5, 6, 7, 8, 9, 10};   // one full block and a partial one
        QVERIFY((*kv)->begin_step(0, prompt).ok());
        (*kv)->finish_step();
        QVERIFY((*kv)->fork(0, 1).ok());
        QVERIFY(r.copies.empty());   // sharing copies nothing
        const std::vector<TokenId> next = {11};
        QVERIFY((*kv)->begin_step(1, next).ok());
        (*kv)->finish_step();
        QCOMPARE(r.copies.size(), size_t{1});   // the child's write went to a copy of the partial block
        QCOMPARE(r.copies[0].store, group.store().id());
        QVERIFY(r.copies[0].src != r.copies[0].dst);
        QVERIFY((*kv)->begin_step(0, next).ok());   // the parent's block is its own again
        (*kv)->finish_step();
        QCOMPARE(r.copies.size(), size_t{1});
        const uint64_t id = group.store().id();
        kv->reset();
        QCOMPARE(r.released, std::vector<uint64_t>{id});
    }

    // A device backend that leaves a policy's state on the host uploads exactly the blocks the
    // host wrote: every row written must be reported, in the storage layer it went to.
    void host_writes_report_their_blocks() {
        const PagedKvShape shape{2, 2, 32, 4, {}, {}, {}};
        AttentionSpec spec;
        spec.kind = AttentionKind::compressed;
        spec.block = 2;
        spec.recent = 2;
        spec.sinks = 0;
        Recorder r;   // outlives the cache, which reports its release
        auto kv = PagedKv::create(spec, KvTypes{}, shape, 0, 64, 1, 4);
        QVERIFY2(kv.ok(), kv.status().message().c_str());
        KvGroup& group = (*kv)->group_of(0);
        group.store().set_mirror(&r);
        ThreadPool pool(1);
        const std::vector<TokenId> prompt = {5, 6, 7, 8, 9, 10};   // 6 tokens: two pooled entries of 2
        QVERIFY((*kv)->begin_step(0, prompt).ok());
        const std::vector<float> k(prompt.size() * 2 * 32, 0.5f), v(prompt.size() * 2 * 32, -0.25f);
        (*kv)->write(1, k.data(), v.data(), pool);
        // The token rows went to the first two token blocks (4 tokens a block), in layer 1 only.
        std::vector<std::pair<int32_t, BlockId>> seen = r.written;
        std::sort(seen.begin(), seen.end());
        seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
        QVERIFY(!seen.empty());
        for (const auto& [layer, block] : seen) QCOMPARE(layer, 1);
        const std::span<const KvStreamView> streams = (*kv)->streams(1);
        QVERIFY(streams.size() >= 2);
        const BlockId t0 = streams[0].blocks[0], t1 = streams[0].blocks[1], p0 = streams[1].blocks[0];
        for (BlockId b : {t0, t1, p0}) QVERIFY2(std::count(seen.begin(), seen.end(), std::make_pair(1, b)) == 1, "a written block was not reported");
        QCOMPARE(seen.size(), size_t{3});
        (*kv)->finish_step();
    }
};

QTEST_APPLESS_MAIN(TestKvStoreMirror)
#include "test_kv_store_mirror.moc"
