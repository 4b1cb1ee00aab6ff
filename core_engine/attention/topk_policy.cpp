// Top-k attention: every token keeps its K and V; a query reads the first block (the sinks), its
// recent window, and K older tokens chosen per KV head by an index. select=block (Quest): each
// block keeps the elementwise range of its keys (f16 min and max per KV head), and the K/bs blocks
// whose bound on q·k is highest are read. select=token: each token keeps a 2-bit code of its
// rotated key (kernels/cpu/token_codes.h), and the K tokens whose coded q·k is highest are read,
// so a fact needs its own tokens read, not their whole block. Memory stays full; reads shrink.
#include <cstring>
#include <limits>

#include "attention/attention_policy.h"
#include "attention/top_selection.h"
#include "tensor/half_convert.h"
#include "kernels/cpu/index_scores.h"
#include "kernels/cpu/token_codes.h"
#include "kv_blocks/kv_row_codec.h"

namespace workbench {
namespace {

constexpr int32_t kPrefetchAhead = 8;   // candidates: their ranges are scattered over blocks

class TopkPolicy final : public AttentionPolicy, public KeyRowObserver {
public:
    using AttentionPolicy::AttentionPolicy;

    Status check(const PagedKvShape& model, KvTypes) const override {
        const int64_t hd = model.head_dim;
        if (by_token() && !token_codes_fit(hd))
            return error(StatusCode::invalid_argument, "--attention " + attention_spec_name(spec_) + ": select=token needs a head_dim that is a power of two from 4 to 512 (this model's is " +
                                                           std::to_string(hd) + "); use select=block");
        return Status::ok_status();
    }
    // Per storage layer, block and KV head: the key range (block), or each slot's code (token).
    uint64_t aux_bytes_per_block(const KvArena& arena) const override {
        const uint64_t groups = static_cast<uint64_t>((arena.block_tokens() + kTokenCodeGroup - 1) / kTokenCodeGroup);
        const uint64_t per_head = by_token() ? groups * token_code_group_bytes(arena.shape.head_dim)
                                             : 2 * static_cast<uint64_t>(arena.shape.head_dim) * sizeof(uint16_t);
        return static_cast<uint64_t>(arena.members.size()) * arena.shape.n_kv_heads * per_head;
    }
    void on_pool_created(const KvArena& arena, int32_t n_blocks) override {
        index_.resize(static_cast<size_t>(static_cast<uint64_t>(n_blocks) * aux_bytes_per_block(arena)));
        stride_ = index_.size() / arena.members.size();
        per_block_ = static_cast<size_t>(aux_bytes_per_block(arena) / arena.members.size());
        per_head_ = per_block_ / static_cast<size_t>(arena.shape.n_kv_heads);
    }
    bool marks_read_blocks() const override { return true; }

    void on_block_copied(const KvArena& arena, BlockId src, BlockId dst) override {
        for (size_t st = 0; st < arena.members.size(); ++st)
            std::memcpy(&index_[st * stride_ + dst * per_block_], &index_[st * stride_ + src * per_block_], per_block_);
    }

    void write(KvArena& arena, int32_t layer, StepPart& part, const float* k, const float* v) override {
        if (arena.owner[static_cast<size_t>(layer)] != layer) return;
        hd_ = arena.shape.head_dim;
        write_token_rows(arena, arena.storage_of[static_cast<size_t>(layer)], *part.s, part.t0, k, v, part.n, arena.rotate_k, this);
    }

    // The token's code, or the block's elementwise key range for the indexer's score bound.
    void key_row(int32_t storage, BlockId block, int32_t slot, int32_t head, const float* kr) override {
        if (by_token())
            return encode_token_code(kr, hd_, entry(storage, block, head) + slot / kTokenCodeGroup * token_code_group_bytes(hd_), slot % kTokenCodeGroup);
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
        if (by_token()) return plan_tokens(arena, layer, part, q, pool, p);
        const int32_t storage = arena.storage_of[static_cast<size_t>(layer)];
        const int64_t hd = arena.shape.head_dim, n_kv = arena.shape.n_kv_heads, group = arena.shape.n_head / arena.shape.n_kv_heads;
        const int32_t bs = arena.block_tokens();
        const int32_t keep = spec_.k / bs;
        const std::span<const BlockId> table = arena.token_table(*part.s);
        auto range_of = [&](int32_t c, int64_t h) { return reinterpret_cast<const uint16_t*>(entry(storage, table[static_cast<size_t>(c)], static_cast<int32_t>(h))); };
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
        if (by_token() || n_tokens % bs == 0) return;   // a token's code is its own: nothing to forget
        // The partial block's key range must forget the dropped tokens: rebuild it from what stays.
        const BlockId blk = arena.token_table(s)[static_cast<size_t>(n_tokens / bs)];
        const int64_t hd = arena.shape.head_dim, n_kv = arena.shape.n_kv_heads;
        std::vector<float> row(static_cast<size_t>(hd));
        for (size_t st = 0; st < arena.members.size(); ++st)
            for (int64_t h = 0; h < n_kv; ++h) {
                uint16_t* mm = range(static_cast<int32_t>(st), blk, static_cast<int32_t>(h));
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
        if (by_token()) {
            const int64_t n_cand = std::max<int64_t>(0, n - spec_.recent);
            if (std::max<int64_t>(spec_.k, bs) < n_cand) {
                f.entries_read = std::max<int64_t>(spec_.k, bs) + (n - n_cand);
                f.index_rows_read = n_cand - bs;
                f.index_row = Footprint::IndexRow::token_code;
            }
            return f;
        }
        const int64_t n_cand = std::max<int64_t>(0, n - spec_.recent) / bs;
        const int64_t keep = spec_.k / bs;
        if (keep < n_cand) {
            f.entries_read = keep * bs + (n - n_cand * bs);
            f.index_rows_read = n_cand;
        }
        return f;
    }

private:
    // [storage][block][kv head] then [min | max][head_dim] f16 (block), or the block's 16-token code groups (token)
    std::vector<uint8_t> index_;
    size_t stride_ = 0, per_block_ = 0, per_head_ = 0;
    std::vector<uint8_t> tables_;   // select=token: each (query, KV head) pair's code table
    int64_t hd_ = 0;
    std::vector<AttendPlan> selections_;  // per part of the step
    TopSelection selection_;

    bool by_token() const { return spec_.select == TopkSelect::token; }
    uint8_t* entry(int32_t storage, BlockId block, int32_t head) {
        return &index_[static_cast<size_t>(storage) * stride_ + static_cast<size_t>(block) * per_block_ + static_cast<size_t>(head) * per_head_];
    }
    const uint8_t* entry(int32_t storage, BlockId block, int32_t head) const {
        return &index_[static_cast<size_t>(storage) * stride_ + static_cast<size_t>(block) * per_block_ + static_cast<size_t>(head) * per_head_];
    }
    uint16_t* range(int32_t storage, BlockId block, int32_t head) { return reinterpret_cast<uint16_t*>(entry(storage, block, head)); }

    // Token-granular: per (query, KV head) pair, the candidates are the tokens before its recent
    // window; the first block (the sinks) is always kept, the others by their coded score.
    const AttendPlan& plan_tokens(const KvArena& arena, int32_t layer, StepPart& part, const float* q, ThreadPool& pool, AttendPlan& p) {
        const int32_t storage = arena.storage_of[static_cast<size_t>(layer)];
        const int64_t hd = arena.shape.head_dim, n_kv = arena.shape.n_kv_heads, group = arena.shape.n_head / arena.shape.n_kv_heads;
        const int32_t bs = arena.block_tokens(), keep = std::max(spec_.k, bs);
        const int64_t code_bytes = token_code_bytes(hd), table_bytes = token_code_table_bytes(hd), group_bytes = token_code_group_bytes(hd);
        const int64_t n_pairs = static_cast<int64_t>(part.n) * n_kv;
        const std::span<const BlockId> table = arena.token_table(*part.s);
        auto n_cand = [&](int64_t pair) { return std::max(0, part.t0 + static_cast<int32_t>(pair / n_kv) + 1 - spec_.recent); };
        // The group's query rows summed: one table a pair (a sum of scores ranks as well as their
        // maximum did, and costs a third).
        tables_.resize(static_cast<size_t>(n_pairs * table_bytes));
        pool.parallel_for(n_pairs, [&](int64_t p0, int64_t p1) {
            for (int64_t pair = p0; pair < p1; ++pair)
                if (n_cand(pair) > keep)
                    token_code_table(q + (pair / n_kv * arena.shape.n_head + pair % n_kv * group) * hd, group, hd, tables_.data() + pair * table_bytes);
        });
        // Candidates [c0, c1) a group of 16 at a time (c0 is a multiple of 64, so of 16).
        auto score = [&](int64_t pair, int32_t c0, int32_t c1, float* out) {
            const int32_t h = static_cast<int32_t>(pair % n_kv);
            float group_scores[kTokenCodeGroup];
            for (int32_t c = c0; c < c1; c += kTokenCodeGroup) {
                const uint8_t* codes = entry(storage, table[static_cast<size_t>(c / bs)], h) + c % bs / kTokenCodeGroup * group_bytes;
                token_code_scores(tables_.data() + pair * table_bytes, codes, hd, group_scores);
                for (int32_t i = 0; i < std::min(kTokenCodeGroup, c1 - c); ++i)
                    out[c - c0 + i] = c + i < bs ? std::numeric_limits<float>::infinity() : group_scores[i];
            }
        };
        select_top(n_pairs, keep, n_cand, score, pool, selection_);
        p.clear();
        p.per_kv_head = true;
        for (int64_t pair = 0; pair < n_pairs; ++pair) {
            const int32_t t = part.t0 + static_cast<int32_t>(pair / n_kv), nc = n_cand(pair);
            if (keep >= nc) {
                p.add({kTokenStream, 0, t + 1});
                p.close_list();
                continue;
            }
            // Per candidate: a table entry per code byte (the table itself is built once a pair).
            part.index_ops += static_cast<double>(nc - bs) * static_cast<double>(hd / 4);
            if (pair / n_kv == part.n - 1) part.index_bytes_last += static_cast<uint64_t>(nc - bs) * static_cast<uint64_t>(code_bytes);
            add_kept_spans(selection_.of(pair), 1, kTokenStream, p);
            p.add({kTokenStream, nc, t + 1});
            p.close_list();
        }
        return p;
    }
};

AttentionVariant describe() {
    return {AttentionKind::topk, "topk", "every token kept; each query reads the K tokens (by block or by token) an index scores highest",
            {integer_parameter("k", "Tokens read", 1024, 1, 1 << 20, "Tokens each query reads, picked per KV head: the cache keeps everything, the reads shrink. By block, it rounds down to whole 16-token blocks."),
             integer_parameter("recent", "Recent (tokens)", 64, 0, 1 << 20, "The newest tokens, always read as they are."),
             choice_parameter("select", "Select", {"block", "token"},
                              "block: whole 16-token blocks by a bound on their keys (Quest). token: single tokens by a 2-bit code of each key (finer, about the same index size).")}};
}

// select=block is left out, so the names stored before select existed still match.
std::string spec_parameters(const AttentionSpec& s) {
    return ":k=" + std::to_string(s.k) + ",recent=" + std::to_string(s.recent) + (s.select == TopkSelect::token ? ",select=token" : "");
}

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<TopkPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kTopkPolicy{describe, spec_parameters, make};

}  // namespace workbench
