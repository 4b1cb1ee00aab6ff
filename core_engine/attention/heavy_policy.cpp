// Heavy-hitter attention over pooled entries: like compressed (pooling_policy.h), but each query
// reads only the K pooled entries whose keys score highest against it (q·k summed over the KV
// head's query heads), chosen per KV head, beside the sinks and its recent window. read=tokens
// keeps the token rows and reads the selected groups' own tokens (and `around` tokens on each
// side) instead of their pooled entries: the pooled keys are then only the index, as Quest's
// bounds are topk's, and the cache is not smaller than full attention's.
#include "attention/pooling_policy.h"
#include "attention/top_selection.h"
#include "kernels/cpu/index_scores.h"
#include "kv_blocks/kv_row_codec.h"

namespace workbench {
namespace {

constexpr int32_t kPrefetchAhead = 8;

class HeavyPolicy final : public PoolingPolicy {
public:
    using PoolingPolicy::PoolingPolicy;

    const AttendPlan& plan(const KvArena& arena, int32_t layer, StepPart& part, const float* q, ThreadPool& pool) override {
        pool_weighted(arena, layer, part, q);
        if (selections_.size() <= static_cast<size_t>(part.index)) selections_.resize(static_cast<size_t>(part.index) + 1);
        AttendPlan& p = selections_[static_cast<size_t>(part.index)];
        const int32_t storage = arena.storage_of[static_cast<size_t>(layer)];
        const int64_t hd = arena.shape.head_dim, n_kv = arena.shape.n_kv_heads, group = arena.shape.n_head / arena.shape.n_kv_heads;
        const int32_t bs = arena.block_tokens();
        const std::span<const BlockId> ptable = arena.pooled_table(*part.s);
        const KvStore& store = *arena.store;
        auto key_of = [&](int32_t c, int64_t h) {
            return arena.store->k_row(storage, ptable[static_cast<size_t>(c / bs)], c % bs, static_cast<int32_t>(h));
        };
        auto n_cand = [&](int64_t pair) { return pooled_count(part.t0 + static_cast<int32_t>(pair / n_kv)); };
        auto score = [&](int64_t pair, int32_t c) {
            const int64_t h = pair % n_kv;
            if (c + kPrefetchAhead < n_cand(pair)) prefetch_row(key_of(c + kPrefetchAhead, h), store.k_layout(storage).row_bytes);
            const float* qh = q + (pair / n_kv * arena.shape.n_head + h * group) * hd;
            if (arena.types.k == KvDType::f16) return group_dot_f16(qh, group, reinterpret_cast<const uint16_t*>(key_of(c, h)), hd);
            thread_local std::vector<float> row;
            row.resize(static_cast<size_t>(hd));
            kv_decode_row(arena.types.k, key_of(c, h), row.data(), hd);
            return group_dot_f32(qh, group, row.data(), hd);
        };
        select_top(static_cast<int64_t>(part.n) * n_kv, spec_.k, n_cand, score, pool, selection_);
        p.clear();
        p.per_kv_head = true;
        for (int64_t pair = 0; pair < static_cast<int64_t>(part.n) * n_kv; ++pair) {
            const int32_t t = part.t0 + static_cast<int32_t>(pair / n_kv), nc = n_cand(pair);
            p.add({kTokenStream, 0, std::min(spec_.sinks, t + 1)});
            if (spec_.k < nc) {
                part.index_ops += 2.0 * static_cast<double>(nc) * static_cast<double>(group * hd);   // a multiply-add each
                if (pair / n_kv == part.n - 1) part.index_bytes_last += static_cast<uint64_t>(nc) * static_cast<uint64_t>(store.k_layout(storage).row_bytes);
            }
            if (reads_tokens()) add_group_tokens(selection_.of(pair), t, p);
            else add_kept_spans(selection_.of(pair), 1, kPooledStream, p);
            p.add({kTokenStream, recent_begin(t), t + 1});
            p.close_list();
        }
        return p;
    }

    void releasable(const KvArena& arena, const KvSequence& s, int32_t& first, int32_t& end) const override {
        if (!reads_tokens()) PoolingPolicy::releasable(arena, s, first, end);
    }

    Footprint footprint(int64_t n, int32_t bs) const override {
        Footprint f = PoolingPolicy::footprint(n, bs);
        const int64_t pooled = n > 0 ? pooled_count(static_cast<int32_t>(n - 1)) : 0;
        if (pooled > spec_.k) {
            f.entries_read -= pooled - spec_.k;
            f.index_rows_read = pooled;
            f.index_row = Footprint::IndexRow::key;
        }
        if (reads_tokens()) {
            f.token_blocks = (n + bs - 1) / bs;
            const int64_t read = std::min<int64_t>(pooled, spec_.k);
            f.entries_read += read * (std::min<int64_t>(pooled * spec_.block, spec_.block + 2LL * spec_.around) - 1);
            f.note = "read=tokens: selected groups whose windows overlap are read once, so a query may read fewer tokens";
        }
        return f;
    }

private:
    bool reads_tokens() const { return spec_.read == PooledRead::tokens; }

    // The token spans of the kept groups (ascending) of query t, `around` tokens wider on each
    // side, kept between its sinks and its recent window and joined where they meet.
    void add_group_tokens(std::span<const int32_t> kept, int32_t t, AttendPlan& p) const {
        const int32_t lo = std::min(spec_.sinks, t + 1), hi = recent_begin(t);
        int32_t b0 = 0, b1 = -1;
        for (const int32_t c : kept) {
            const int32_t b = std::max(lo, spec_.sinks + c * spec_.block - spec_.around);
            const int32_t e = std::min(hi, spec_.sinks + (c + 1) * spec_.block + spec_.around);
            if (b1 >= b) {
                b1 = std::max(b1, e);
                continue;
            }
            if (b1 > b0) p.add({kTokenStream, b0, b1});
            b0 = b, b1 = e;
        }
        if (b1 > b0) p.add({kTokenStream, b0, b1});
    }

    std::vector<AttendPlan> selections_;  // per part of the step
    TopSelection selection_;
};

AttentionVariant describe() {
    return {AttentionKind::heavy, "heavy", "old tokens pooled every M; each query reads the K pooled entries that match it best",
            {integer_parameter("block", "Pool (tokens per entry)", 16, 1, 4096, "Old tokens pooled into one entry, as in compressed."),
             integer_parameter("k", "Entries read", 32, 1, 1 << 20, "Pooled entries each KV head reads: the top k by q·k over its query group."),
             integer_parameter("recent", "Recent (tokens)", 64, 0, 1 << 20, "The newest tokens, kept unpooled and always read."),
             integer_parameter("sinks", "Sinks (tokens)", 0, 0, 1 << 16, "The first tokens, never pooled."),
             pool_parameter(),
             choice_parameter("read", "Read", {"pooled", "tokens"},
                              "What a selected group gives its query: its pooled entry, or its own tokens (kept, so the "
                              "cache is as large as full attention's: pair it with a quantized KV type)."),
             integer_parameter("around", "Around (tokens)", 0, 0, 1 << 16,
                               "With read=tokens: tokens read on each side of a selected group, so a fact cut by a group edge is read whole.")}};
}

std::string spec_parameters(const AttentionSpec& s) {
    return ":block=" + std::to_string(s.block) + ",k=" + std::to_string(s.k) + ",recent=" + std::to_string(s.recent) +
           (s.sinks ? ",sinks=" + std::to_string(s.sinks) : "") + pool_spec_part(s) +
           (s.read == PooledRead::tokens ? ",read=tokens" : "") + (s.around ? ",around=" + std::to_string(s.around) : "");
}

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<HeavyPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kHeavyPolicy{describe, spec_parameters, make};

}  // namespace workbench
