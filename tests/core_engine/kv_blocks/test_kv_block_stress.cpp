// Randomized KV cache run (fixed seeds, thousands of ops): new prompts from shared stems (prefix
// hits), chunked growth, failed steps rolled back, forks, truncates and frees on a small pool. A
// shadow store writes each token id into its slot as stand-in KV data, so a wrong prefix hit or a
// missed copy-on-write shows up as wrong data; after every op all invariants are checked.
#include <QTest>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kv_blocks/kv_block_manager.h"

using namespace workbench;

namespace {

using Tokens = std::vector<TokenId>;

constexpr int32_t kBlock = 4;
constexpr int32_t kBlocks = 32;  // 31 usable: 124 tokens at most per sequence
constexpr TokenId kGarbage = -7; // what a failed step leaves in its slots
const KvCacheConfig kConfig{{KvDType::q8_0, KvDType::q4_0}, 2, 2, 32, kBlock};

class StressRun {
public:
    explicit StressRun(uint32_t seed)
        : m_(KvBlockManager::create(kConfig, kBlocks).value()), rng_(seed),
          data_(kBlocks, Tokens(kBlock, kGarbage)) {
        for (Tokens& stem : stems_)
            for (int i = 0; i < 12; ++i) stem.push_back(pick(0, 5));
    }

    // The first broken invariant or unexpected result, empty when all held.
    std::string run(int n_ops) {
        for (int op = 0; op < n_ops && failure_.empty(); ++op) {
            step();
            if (failure_.empty()) check_invariants();
            if (!failure_.empty()) failure_ = "op " + std::to_string(op) + ": " + failure_;
        }
        return failure_;
    }

    std::map<std::string, int> counts;

private:
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

    SeqId any_sequence() {
        auto it = tokens_.begin();
        std::advance(it, pick(0, static_cast<int>(tokens_.size()) - 1));
        return it->first;
    }

    void fail(const std::string& what) {
        if (failure_.empty()) failure_ = what;
    }

    void step() {
        const int r = pick(0, 99);
        if (tokens_.empty() || (r < 25 && tokens_.size() < 8)) return start_sequence();
        const SeqId seq = any_sequence();
        if (r < 60) return grow(seq, pick(1, 6), false);
        if (r < 68) return grow(seq, pick(1, 6), true);
        if (r < 70) return grow(seq, pick(40, 130), false);  // a long chunk: may never fit
        if (r < 78 && tokens_.size() < 10) {
            tokens_[next_id_] = Tokens(tokens_[seq].begin(), tokens_[seq].begin() + m_.n_tokens(seq));
            ++counts["forks"];
            if (!m_.fork(seq, next_id_++).ok()) fail("fork refused");
            return;
        }
        if (r < 90) {
            const int32_t n = pick(0, m_.n_tokens(seq));
            tokens_[seq].resize(static_cast<size_t>(n));  // what follows is an edit: new tokens
            ++counts["truncates"];
            if (!m_.truncate(seq, n).ok()) fail("truncate refused");
            return;
        }
        tokens_.erase(seq);
        ++counts["frees"];
        if (!m_.free(seq).ok()) fail("free refused");
    }

    void start_sequence() {
        const Tokens& stem = stems_[static_cast<size_t>(pick(0, 2))];
        Tokens prompt(stem.begin(), stem.begin() + pick(0, 12));
        for (int n = pick(1, 10); n > 0; --n) prompt.push_back(pick(0, 5));
        const CachedPrefix prefix = m_.find_cached_prefix(prompt);
        int n_revived = 0;
        for (BlockId b : prefix.blocks) n_revived += m_.pool().is_free(b) ? 1 : 0;
        const SeqId seq = next_id_++;
        const int32_t n_rest = static_cast<int32_t>(prompt.size()) - prefix.n_tokens;
        tokens_[seq] = prompt;
        if (!write_step(seq, pick(1, n_rest), prefix, pick(0, 9) == 0)) {
            tokens_.erase(seq);
            return;
        }
        counts["prefix_hits"] += prefix.blocks.empty() ? 0 : 1;
        counts["revived"] += n_revived;
    }

    void grow(SeqId seq, int32_t n_add, bool step_fails) {
        Tokens& t = tokens_[seq];
        while (t.size() < static_cast<size_t>(m_.n_tokens(seq) + n_add)) t.push_back(pick(0, 5));
        write_step(seq, n_add, {}, step_fails);
    }

    // One engine step for one sequence: allocate, copy, write the new slots, then commit or
    // (when the step "fails", leaving garbage) roll back. False when the allocation was refused.
    bool write_step(SeqId seq, int32_t n_add, const CachedPrefix& prefix, bool step_fails) {
        const std::string before = describe();
        const int32_t n_cached_before = m_.pool().n_cached();
        const Result<SlotAllocation> r = m_.allocate_slots(seq, n_add, tokens_[seq], prefix);
        if (!r.ok()) {
            const StatusCode code = r.status().code();
            if (code != StatusCode::resource_exhausted && code != StatusCode::out_of_range)
                fail("unexpected refusal: " + r.status().message());
            if (describe() != before) fail("a refused allocation changed state: " + r.status().message());
            ++counts[code == StatusCode::out_of_range ? "never_fits" : "no_room"];
            return false;
        }
        if (m_.pool().n_cached() < n_cached_before) ++counts["evictions"];
        if (r->copy) {
            data_[static_cast<size_t>(r->copy->dst)] = data_[static_cast<size_t>(r->copy->src)];
            ++counts["copies"];
        }
        const std::span<const BlockId> table = m_.block_table(seq);
        for (int32_t p = m_.n_tokens(seq) - n_add; p < m_.n_tokens(seq); ++p) {
            const BlockId b = table[static_cast<size_t>(p / kBlock)];
            if (m_.pool().ref_count(b) != 1) fail("a step writes into shared block " + std::to_string(b));
            slot(table, p) = step_fails ? kGarbage : tokens_[seq][static_cast<size_t>(p)];
        }
        counts["rollbacks"] += step_fails ? 1 : 0;
        if (!(step_fails ? m_.rollback(seq) : m_.commit(seq)).ok()) fail("commit/rollback refused");
        return true;
    }

    // The stand-in KV data at position p of a sequence with this block table.
    TokenId& slot(std::span<const BlockId> table, int32_t p) {
        return data_[static_cast<size_t>(table[static_cast<size_t>(p / kBlock)])][static_cast<size_t>(p % kBlock)];
    }

    std::string describe() const {
        std::string s;
        for (BlockId b : m_.pool().free_queue()) s += std::to_string(b) + ",";
        for (BlockId b = 0; b < kBlocks; ++b)
            s += std::to_string(m_.pool().ref_count(b)) + (m_.pool().block_hash(b) ? "h;" : ";");
        for (const auto& [seq, t] : tokens_) {
            for (BlockId b : m_.block_table(seq)) s += std::to_string(b) + ",";
            s += std::to_string(m_.n_tokens(seq)) + "|";
        }
        return s;
    }

    void check_invariants() {
        const BlockPool& pool = m_.pool();
        std::vector<int32_t> holders(kBlocks, 0);
        for (const auto& [seq, t] : tokens_) {
            const std::span<const BlockId> table = m_.block_table(seq);
            const int32_t n = m_.n_tokens(seq);
            if (!m_.has_sequence(seq) || n != m_.n_tokens_committed(seq)) return fail("sequence state");
            if (table.size() != static_cast<size_t>((n + kBlock - 1) / kBlock)) return fail("table length");
            if (std::set<BlockId>(table.begin(), table.end()).size() != table.size())
                return fail("block twice in a table");
            for (BlockId b : table) {
                if (b <= kNullBlock || b >= kBlocks) return fail("bad block id " + std::to_string(b));
                ++holders[static_cast<size_t>(b)];
            }
            for (int32_t p = 0; p < n; ++p)
                if (slot(table, p) != t[static_cast<size_t>(p)])
                    return fail("sequence " + std::to_string(seq) + " reads wrong KV at position " + std::to_string(p));
        }
        if (m_.n_sequences() != static_cast<int32_t>(tokens_.size())) return fail("sequence count");

        const std::vector<BlockId> queue = pool.free_queue();
        const std::set<BlockId> queued(queue.begin(), queue.end());
        if (queued.size() != queue.size() || static_cast<int32_t>(queue.size()) != pool.n_free())
            return fail("free queue has duplicates or a wrong count");
        if (queued.contains(kNullBlock) || pool.ref_count(kNullBlock) != 0) return fail("null block in use");
        int32_t n_cached_free = 0;
        for (BlockId b = 1; b < kBlocks; ++b) {
            const int32_t refs = pool.ref_count(b);
            if (refs != holders[static_cast<size_t>(b)]) return fail("ref count of block " + std::to_string(b));
            if (pool.is_free(b) != queued.contains(b) || pool.is_free(b) != (refs == 0))
                return fail("block " + std::to_string(b) + " is neither free exactly once nor referenced");
            n_cached_free += pool.is_free(b) && pool.block_hash(b) ? 1 : 0;
        }
        if (n_cached_free != pool.n_cached_free()) return fail("cached free count");
        if (m_.bytes_in_use() != static_cast<uint64_t>(kBlocks - 1 - pool.n_free()) * m_.bytes_per_block() ||
            m_.peak_bytes_in_use() < m_.bytes_in_use())
            return fail("byte accounting");
    }

    KvBlockManager m_;
    std::mt19937 rng_;
    std::vector<Tokens> data_;              // [n_blocks][kBlock]: the token id each slot holds
    std::map<SeqId, Tokens> tokens_;        // each live sequence's tokens (may run past n_tokens)
    Tokens stems_[3];
    SeqId next_id_ = 1;
    std::string failure_;
};

}  // namespace

class TestKvCacheStress : public QObject {
    Q_OBJECT

private slots:
    void invariants_hold_under_random_ops_data();
    void invariants_hold_under_random_ops();
};

void TestKvCacheStress::invariants_hold_under_random_ops_data() {
    QTest::addColumn<uint32_t>("seed");
    for (uint32_t seed : {1u, 42u, 20240611u}) QTest::newRow(std::to_string(seed).c_str()) << seed;
}

void TestKvCacheStress::invariants_hold_under_random_ops() {
    QFETCH(uint32_t, seed);
    StressRun run(seed);
    const std::string failure = run.run(20000);
    QVERIFY2(failure.empty(), failure.c_str());
    // Every path was taken, not only the easy ones.
    for (const char* path : {"prefix_hits", "revived", "copies", "no_room", "never_fits", "rollbacks", "forks",
                             "truncates", "frees", "evictions"})
        QVERIFY2(run.counts[path] > 0, path);
    QString summary;
    for (const auto& [path, n] : run.counts) summary += QString(" %1=%2").arg(QString::fromStdString(path)).arg(n);
    qInfo("seed %u:%s", seed, qPrintable(summary));
}

QTEST_APPLESS_MAIN(TestKvCacheStress)
#include "test_kv_block_stress.moc"
