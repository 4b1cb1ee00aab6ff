// Heavy-hitter attention over pooled entries: like compressed (pooling_policy.h), but each query
// reads only the K pooled entries whose keys score highest against it (q·k summed over the KV
// head's query heads), chosen per KV head, beside the sinks and its recent window.
#include "attention/pooling_policy.h"
#include "attention/top_selection.h"
#include "kv_blocks/kv_row_codec.h"

namespace workbench {
namespace {

class HeavyPolicy final : public PoolingPolicy {
public:
    using PoolingPolicy::PoolingPolicy;

    const AttendPlan& plan(const KvArena& arena, int32_t layer, StepPart& part, const float* q) override {
        if (selections_.size() <= static_cast<size_t>(part.index)) selections_.resize(static_cast<size_t>(part.index) + 1);
        AttendPlan& p = selections_[static_cast<size_t>(part.index)];
        const KvSequence& s = *part.s;
        const int32_t storage = arena.storage_of[static_cast<size_t>(layer)];
        const int64_t hd = arena.shape.head_dim, n_kv = arena.shape.n_kv_heads, group = arena.shape.n_head / arena.shape.n_kv_heads;
        const int32_t bs = arena.block_tokens();
        p.clear();
        p.per_kv_head = true;
        std::vector<float> score, row(static_cast<size_t>(hd));
        std::vector<int32_t> order;
        const std::span<const BlockId> ptable = arena.pooled_table(s);
        for (int32_t i = 0; i < part.n; ++i) {
            const int32_t t = part.t0 + i;
            for (int64_t h = 0; h < n_kv; ++h) {
                const float* qh = q + (static_cast<int64_t>(i) * arena.shape.n_head + h * group) * hd;
                const int32_t n_cand = pooled_count(t);
                const int32_t keep = spec_.k;
                p.add({kTokenStream, 0, std::min(spec_.sinks, t + 1)});
                if (keep >= n_cand) {
                    p.add({kPooledStream, 0, n_cand});
                    p.add({kTokenStream, recent_begin(t), t + 1});
                    p.close_list();
                    continue;
                }
                score.assign(static_cast<size_t>(n_cand), 0.0f);
                for (int32_t c = 0; c < n_cand; ++c) {
                    float sc = 0;
                    kv_decode_row(arena.types.k, arena.store->k_row(storage, ptable[static_cast<size_t>(c / bs)], c % bs, static_cast<int32_t>(h)),
                                  row.data(), hd);
                    for (int64_t g = 0; g < group; ++g)
                        for (int64_t d = 0; d < hd; ++d) sc += qh[g * hd + d] * row[static_cast<size_t>(d)];
                    score[static_cast<size_t>(c)] = sc;
                }
                if (i == part.n - 1) part.index_bytes_last += static_cast<uint64_t>(n_cand) * static_cast<uint64_t>(arena.store->k_layout().row_bytes);
                add_top_spans(score, keep, 1, kPooledStream, order, p);
                p.add({kTokenStream, recent_begin(t), t + 1});
                p.close_list();
            }
        }
        return p;
    }

    Footprint footprint(int64_t n, int32_t bs) const override {
        Footprint f = PoolingPolicy::footprint(n, bs);
        const int64_t pooled = n > 0 ? pooled_count(static_cast<int32_t>(n - 1)) : 0;
        if (pooled > spec_.k) {
            f.entries_read -= pooled - spec_.k;
            f.index_rows_read = pooled;
            f.index_rows_are_keys = true;
        }
        return f;
    }

private:
    std::vector<AttendPlan> selections_;  // per part of the step
};

AttentionVariant describe() {
    return {AttentionKind::heavy, "heavy", "old tokens pooled every M; each query reads the K pooled entries that match it best",
            {integer_parameter("block", "Pool (tokens per entry)", 16, 1, 4096, "Old tokens pooled into one entry, as in compressed."),
             integer_parameter("k", "Entries read", 32, 1, 1 << 20, "Pooled entries each KV head reads: the top k by q·k over its query group."),
             integer_parameter("recent", "Recent (tokens)", 64, 0, 1 << 20, "The newest tokens, kept unpooled and always read."),
             integer_parameter("sinks", "Sinks (tokens)", 0, 0, 1 << 16, "The first tokens, never pooled.")}};
}

std::string spec_parameters(const AttentionSpec& s) {
    return ":block=" + std::to_string(s.block) + ",k=" + std::to_string(s.k) + ",recent=" + std::to_string(s.recent) +
           (s.sinks ? ",sinks=" + std::to_string(s.sinks) : "");
}

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<HeavyPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kHeavyPolicy{describe, spec_parameters, make};

}  // namespace workbench
