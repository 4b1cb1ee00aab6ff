// Top-k block attention (Quest): every token keeps its K and V, and each block also keeps the
// elementwise range of its keys (f16 min and max per KV head). A query reads the first block (the
// sinks), its recent window, and the K/bs older blocks whose bound on q·k is highest (per
// dimension the larger of q·min and q·max), chosen per KV head. Memory stays full; reads shrink.
#include <cstring>
#include <limits>

#include "attention/attention_policy.h"
#include "attention/top_selection.h"
#include "tensor/half_convert.h"
#include "kernels/cpu/index_scores.h"
#include "kv_blocks/kv_row_codec.h"

namespace workbench {
namespace {

constexpr int32_t kPrefetchAhead = 8;   // candidates: their ranges are scattered over blocks

class TopkPolicy final : public AttentionPolicy, public KeyRowObserver {
public:
    using AttentionPolicy::AttentionPolicy;

    uint64_t aux_bytes_per_block(const KvArena& arena) const override {
        return static_cast<uint64_t>(arena.members.size()) * arena.shape.n_kv_heads * 2 * arena.shape.head_dim * sizeof(uint16_t);
    }
    void on_pool_created(const KvArena& arena, int32_t n_blocks) override {
        minmax_.resize(static_cast<size_t>(static_cast<uint64_t>(n_blocks) * aux_bytes_per_block(arena) / 2));
        stride_ = minmax_.size() / arena.members.size();
        per_block_ = static_cast<size_t>(aux_bytes_per_block(arena) / 2 / arena.members.size());
    }
    bool marks_read_blocks() const override { return true; }

    void on_block_copied(const KvArena& arena, BlockId src, BlockId dst) override {
        for (size_t st = 0; st < arena.members.size(); ++st)
            std::memcpy(&minmax_[st * stride_ + dst * per_block_], &minmax_[st * stride_ + src * per_block_], per_block_ * 2);
    }

    void write(KvArena& arena, int32_t layer, StepPart& part, const float* k, const float* v) override {
        if (arena.owner[static_cast<size_t>(layer)] != layer) return;
        n_kv_ = arena.shape.n_kv_heads;
        hd_ = arena.shape.head_dim;
        write_token_rows(arena, arena.storage_of[static_cast<size_t>(layer)], *part.s, part.t0, k, v, part.n, arena.rotate_k, this);
    }

    // The block's elementwise key range, for the indexer's score bound.
    void key_row(int32_t storage, BlockId block, int32_t slot, int32_t head, const float* kr) override {
        uint16_t* mm = range(storage, block, head);
        for (int64_t d = 0; d < hd_; ++d) {
            const float lo = slot == 0 ? kr[d] : std::min(kr[d], half_to_float(mm[d]));
            const float hi = slot == 0 ? kr[d] : std::max(kr[d], half_to_float(mm[hd_ + d]));
            mm[d] = float_to_half(lo);
            mm[hd_ + d] = float_to_half(hi);
        }
    }

    const AttendPlan& plan(const KvArena& arena, int32_t layer, StepPart& part, const float* q, ThreadPool& pool) override {
        if (selections_.size() <= static_cast<size_t>(part.index)) selections_.resize(static_cast<size_t>(part.index) + 1);
        AttendPlan& p = selections_[static_cast<size_t>(part.index)];
        const int32_t storage = arena.storage_of[static_cast<size_t>(layer)];
        const int64_t hd = arena.shape.head_dim, n_kv = arena.shape.n_kv_heads, group = arena.shape.n_head / arena.shape.n_kv_heads;
        const int32_t bs = arena.block_tokens();
        const int32_t keep = spec_.k / bs;
        const std::span<const BlockId> table = arena.token_table(*part.s);
        const uint16_t* ranges = minmax_.data() + static_cast<size_t>(storage) * stride_;
        auto range_of = [&](int32_t c, int64_t h) { return ranges + (static_cast<size_t>(table[static_cast<size_t>(c)]) * n_kv + static_cast<size_t>(h)) * 2 * hd; };
        // Per (query, KV head) pair: whole blocks before the query's recent window.
        auto n_cand = [&](int64_t pair) { return std::max(0, part.t0 + static_cast<int32_t>(pair / n_kv) + 1 - spec_.recent) / bs; };
        auto score = [&](int64_t pair, int32_t c) {
            // The first block (the attention sinks of StreamingLLM) is always kept: queries put
            // much weight there that a bound on its keys does not foresee.
            if (c == 0) return std::numeric_limits<float>::infinity();
            const int64_t h = pair % n_kv;
            if (c + kPrefetchAhead < n_cand(pair)) prefetch_row(range_of(c + kPrefetchAhead, h), 2 * hd * static_cast<int64_t>(sizeof(uint16_t)));
            return quest_bound(q + (pair / n_kv * arena.shape.n_head + h * group) * hd, group, range_of(c, h), hd);
        };
        select_top(static_cast<int64_t>(part.n) * n_kv, keep, n_cand, score, pool, selection_);
        p.clear();
        p.per_kv_head = true;
        for (int64_t pair = 0; pair < static_cast<int64_t>(part.n) * n_kv; ++pair) {
            const int32_t t = part.t0 + static_cast<int32_t>(pair / n_kv), nc = n_cand(pair);
            if (keep >= nc) {
                p.add({kTokenStream, 0, t + 1});
                p.close_list();
                continue;
            }
            // Per candidate, dimension and query head: two products, a max and an add.
            part.index_ops += 4.0 * static_cast<double>(nc - 1) * static_cast<double>(group * hd);
            if (pair / n_kv == part.n - 1) part.index_bytes_last += static_cast<uint64_t>(nc) * (2 * hd * sizeof(uint16_t));
            add_kept_spans(selection_.of(pair), bs, kTokenStream, p);
            p.add({kTokenStream, nc * bs, t + 1});
            p.close_list();
        }
        return p;
    }

    void on_truncate(KvArena& arena, KvSequence& s, int32_t n_tokens) override {
        const int32_t bs = arena.block_tokens();
        if (n_tokens % bs == 0) return;
        // The partial block's key range must forget the dropped tokens: rebuild it from what stays.
        const BlockId blk = arena.token_table(s)[static_cast<size_t>(n_tokens / bs)];
        const int64_t hd = arena.shape.head_dim, n_kv = arena.shape.n_kv_heads;
        std::vector<float> row(static_cast<size_t>(hd));
        for (size_t st = 0; st < arena.members.size(); ++st)
            for (int64_t h = 0; h < n_kv; ++h) {
                uint16_t* mm = &minmax_[st * stride_ + (static_cast<size_t>(blk) * n_kv + static_cast<size_t>(h)) * 2 * hd];
                for (int32_t slot = 0; slot < n_tokens % bs; ++slot) {
                    kv_decode_row(arena.types.k, arena.store->k_row(static_cast<int32_t>(st), blk, slot, static_cast<int32_t>(h)), row.data(), hd);
                    for (int64_t d = 0; d < hd; ++d) {
                        mm[d] = float_to_half(slot == 0 ? row[d] : std::min(row[d], half_to_float(mm[d])));
                        mm[hd + d] = float_to_half(slot == 0 ? row[d] : std::max(row[d], half_to_float(mm[hd + d])));
                    }
                }
            }
    }

    Footprint footprint(int64_t n, int32_t bs) const override {
        Footprint f = AttentionPolicy::footprint(n, bs);
        const int64_t n_cand = std::max<int64_t>(0, n - spec_.recent) / bs;
        const int64_t keep = spec_.k / bs;
        if (keep < n_cand) {
            f.entries_read = keep * bs + (n - n_cand * bs);
            f.index_rows_read = n_cand;
        }
        return f;
    }

private:
    std::vector<uint16_t> minmax_;  // [storage][block][kv head][min | max][head_dim] f16
    size_t stride_ = 0, per_block_ = 0;
    int64_t n_kv_ = 0, hd_ = 0;
    std::vector<AttendPlan> selections_;  // per part of the step
    TopSelection selection_;

    uint16_t* range(int32_t storage, BlockId block, int32_t head) {
        return &minmax_[static_cast<size_t>(storage) * stride_ + (static_cast<size_t>(block) * n_kv_ + static_cast<size_t>(head)) * 2 * hd_];
    }
};

AttentionVariant describe() {
    return {AttentionKind::topk, "topk", "every token kept; each query reads the K tokens' blocks that bound q·k highest",
            {integer_parameter("k", "Tokens read", 1024, 1, 1 << 20, "Tokens each query reads, picked by block per KV head (Quest's bound): the cache keeps everything, the reads shrink. Rounds down to whole 16-token blocks."),
             integer_parameter("recent", "Recent (tokens)", 64, 0, 1 << 20, "The newest tokens, always read as they are.")}};
}

std::string spec_parameters(const AttentionSpec& s) { return ":k=" + std::to_string(s.k) + ",recent=" + std::to_string(s.recent); }

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<TopkPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kTopkPolicy{describe, spec_parameters, make};

}  // namespace workbench
