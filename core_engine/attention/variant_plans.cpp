// Which entries each query reads, per variant — the policies proper. Every list is in position
// order, so a variant whose setting lets a query see everything produces full attention's list
// and, through the same kernel, full attention's exact arithmetic.
//   full, cross_layer(none)  [0, t]
//   sliding                  sinks [0, S) (re-rotated once tokens are evicted) + [t+1-W, t]
//   compressed               sinks [0, S) + pooled [0, P(t)) + tokens [S + P(t)·M, t],
//                            P(t) = max(0, t+1-R-S) / M
//   heavy                    sinks + the top-K pooled entries by q·k + tokens [S + P(t)·M, t]
//   topk                     the top K/bs blocks by the indexer's bound + tokens from the recent window
//   cross_layer(mean|slerp)  merged entries [0, t0) + this layer's own step tokens
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "attention/paged_kv.h"
#include "kernels/cpu/half_convert.h"
#include "kv_cache/kv_row_codec.h"

namespace workbench {
namespace {

constexpr int32_t kTokenStream = 0, kPooledStream = 1, kScratchStream = 2;

KvRowLayout f32_layout(int64_t n_kv, int64_t hd, int64_t n_rows) {
    KvRowLayout l;
    l.type = KvDType::f32;
    l.row_bytes = hd * 4;
    l.token_stride = n_kv * l.row_bytes;
    l.block_stride = l.token_stride * n_rows;
    return l;
}

}  // namespace

KvStreamView PagedKv::token_stream(int32_t storage, const Sequence& s) const {
    KvStreamView v;
    v.k_base = store_->k_base(storage);
    v.v_base = store_->v_base(storage);
    v.blocks = manager_->block_table(s.token_id).data();
    v.block_tokens = manager_->n_tokens_per_block();
    v.k = store_->k_layout();
    v.v = store_->v_layout();
    return v;
}

KvStreamView PagedKv::pooled_stream(int32_t storage, const Sequence& s) const {
    KvStreamView v = token_stream(storage, s);
    v.blocks = manager_->block_table(s.pooled_id).data();
    // A pooled entry stands for M tokens: its softmax weight counts M times (ToMe's proportional
    // attention), so a mean key that matches like its tokens draws their combined weight.
    v.score_bias = std::log(static_cast<float>(std::max(1, spec_.block)));
    return v;
}

void PagedKv::build_token_plans(StepPart& part) {
    AttendPlan& p = part.token_plan;
    p.clear();
    part.merge_plan.clear();
    const int32_t step_t0 = part.t0, step_n = part.n;
    const bool merged = spec_.kind == AttentionKind::cross_layer && spec_.merge != LayerMerge::none;
    std::vector<int32_t> sink_rotations;  // distinct evictions seen by this step's queries
    for (int32_t i = 0; i < step_n; ++i) {
        const int32_t t = step_t0 + i;
        switch (spec_.kind) {
        case AttentionKind::sliding: {
            const int32_t evicted = evicted_before(t);
            const int32_t window_begin = std::max(spec_.sinks, t + 1 - spec_.window);
            if (evicted == 0) {
                p.add({kTokenStream, 0, std::min(spec_.sinks, t + 1)});
            } else {
                auto at = std::find(sink_rotations.begin(), sink_rotations.end(), evicted);
                if (at == sink_rotations.end()) at = sink_rotations.insert(at, evicted);
                p.add({kScratchStream + static_cast<int32_t>(at - sink_rotations.begin()), 0, spec_.sinks});
            }
            p.add({kTokenStream, window_begin, t + 1});
            break;
        }
        case AttentionKind::compressed:
        case AttentionKind::heavy: {
            const int32_t n_pooled = pooled_count(t);
            p.add({kTokenStream, 0, std::min(spec_.sinks, t + 1)});
            p.add({kPooledStream, 0, n_pooled});
            p.add({kTokenStream, std::min(spec_.sinks, t + 1) + n_pooled * spec_.block, t + 1});
            break;
        }
        default:
            p.add({kTokenStream, 0, t + 1});
        }
        p.close_list();
        if (merged) {
            part.merge_plan.add({kTokenStream, 0, step_t0});
            part.merge_plan.add({kScratchStream, 0, i + 1});
            part.merge_plan.close_list();
        }
    }
    part.sink_rotations = std::move(sink_rotations);
}

void PagedKv::build_sink_streams(int32_t storage, StepPart& part) {
    // The sinks as the query would see them if the evicted tokens had never been there: keys
    // turned forward by the evicted count (RoPE composes by adding angles), rounded through the
    // KV type as stored keys are; values unchanged.
    const Sequence& s = *part.s;
    const int64_t hd = shape_.head_dim, n_kv = shape_.n_kv_heads, row = n_kv * hd;
    const int32_t n_sinks = spec_.sinks;
    const std::vector<int32_t>& rotations = part.sink_rotations;
    std::vector<std::vector<float>>& scratch = part.scratch;
    const std::span<const BlockId> table = manager_->block_table(s.token_id);
    const int32_t bs = manager_->n_tokens_per_block();
    scratch.resize(rotations.size() * 2);
    std::vector<float> tmp(static_cast<size_t>(hd));
    std::vector<uint8_t> enc(static_cast<size_t>(store_->k_layout().row_bytes));
    for (size_t r = 0; r < rotations.size(); ++r) {
        std::vector<float>& ks = scratch[2 * r];
        std::vector<float>& vs = scratch[2 * r + 1];
        ks.assign(s.sink_k.begin() + static_cast<std::ptrdiff_t>(storage * n_sinks * row),
                  s.sink_k.begin() + static_cast<std::ptrdiff_t>((storage + 1) * n_sinks * row));
        std::vector<int32_t> shift(static_cast<size_t>(n_sinks), rotations[r]);
        rope(ks.data(), shift.data(), n_sinks, n_kv, hd, shape_.rope);
        vs.resize(ks.size());
        for (int32_t j = 0; j < n_sinks; ++j)
            for (int64_t h = 0; h < n_kv; ++h) {
                float* kr = ks.data() + j * row + h * hd;
                if (rotate_k_) hadamard_rotate(kr, hd);
                kv_encode_row(types_.k, kr, enc.data(), hd);
                kv_decode_row(types_.k, enc.data(), kr, hd);
                const BlockId blk = table[static_cast<size_t>(j / bs)];
                kv_decode_row(types_.v, store_->v_row(storage, blk, j % bs, static_cast<int32_t>(h)), vs.data() + j * row + h * hd, hd);
            }
        KvStreamView v;
        v.k_base = reinterpret_cast<const uint8_t*>(ks.data());
        v.v_base = reinterpret_cast<const uint8_t*>(vs.data());
        v.blocks = scratch_blocks_.data();
        v.block_tokens = n_sinks;
        v.k = v.v = f32_layout(n_kv, hd, n_sinks);
        views_.push_back(v);
    }
}

int32_t PagedKv::part_stream_count(int32_t layer, const StepPart& part) const {
    const auto& group = members_[static_cast<size_t>(storage_of_[static_cast<size_t>(layer)])];
    int32_t n = 2;
    if (spec_.kind == AttentionKind::sliding) n += static_cast<int32_t>(part.sink_rotations.size());
    if (spec_.kind == AttentionKind::cross_layer && spec_.merge != LayerMerge::none && group.size() > 1) n += 1;
    return n;
}

std::span<const KvStreamView> PagedKv::streams(int32_t layer) {
    const int32_t storage = storage_of_[static_cast<size_t>(layer)];
    const auto& group = members_[static_cast<size_t>(storage)];
    views_.clear();
    // Each part's streams in turn: its token cache, its pooled cache, then its scratch streams,
    // as part_stream_count() counts them for plan()'s stream offsets.
    for (int32_t pi = 0; pi < n_parts_; ++pi) {
        StepPart& part = parts_[static_cast<size_t>(pi)];
        views_.push_back(token_stream(storage, *part.s));
        views_.push_back(pooled_stream(storage, *part.s));
        if (spec_.kind == AttentionKind::sliding && !part.sink_rotations.empty()) build_sink_streams(storage, part);
        if (spec_.kind == AttentionKind::cross_layer && spec_.merge != LayerMerge::none && group.size() > 1) {
            const size_t m = static_cast<size_t>(std::find(group.begin(), group.end(), layer) - group.begin());
            KvStreamView v;
            v.k_base = reinterpret_cast<const uint8_t*>(part.stage_k[m].data());
            v.v_base = reinterpret_cast<const uint8_t*>(part.stage_v[m].data());
            v.blocks = scratch_blocks_.data();
            v.block_tokens = part.n;
            v.k = v.v = f32_layout(shape_.n_kv_heads, shape_.head_dim, part.n);
            views_.push_back(v);
        }
    }
    return views_;
}

const AttendPlan& PagedKv::plan(int32_t layer, const float* q) {
    const int64_t q_row = static_cast<int64_t>(shape_.n_head) * shape_.head_dim;
    if (n_parts_ == 1) return part_plan(layer, parts_.front(), q);
    // Several sequences: their lists in row order, each span moved to its part's streams.
    AttendPlan& joined = batch_plan_;
    joined.clear();
    int32_t stream0 = 0;
    for (int32_t pi = 0; pi < n_parts_; ++pi) {
        StepPart& part = parts_[static_cast<size_t>(pi)];
        const AttendPlan& p = part_plan(layer, part, q + part.row0 * q_row);
        joined.per_kv_head = p.per_kv_head;
        for (size_t li = 0; li + 1 < p.offsets.size(); ++li) {
            for (KvSpan sp : p.list(static_cast<int64_t>(li))) {
                sp.stream += stream0;
                joined.add(sp);
            }
            joined.close_list();
        }
        stream0 += part_stream_count(layer, part);
    }
    return joined;
}

const AttendPlan& PagedKv::part_plan(int32_t layer, StepPart& part, const float* q) {
    const int32_t storage = storage_of_[static_cast<size_t>(layer)];
    const auto& group = members_[static_cast<size_t>(storage)];
    const AttendPlan* p = &part.token_plan;
    part.index_bytes_last = 0;
    if (spec_.kind == AttentionKind::topk || spec_.kind == AttentionKind::heavy) {
        build_selection_plan(layer, part, q);
        p = &part.selection_plan;
    }
    if (spec_.kind == AttentionKind::cross_layer && spec_.merge != LayerMerge::none && group.size() > 1) p = &part.merge_plan;
    // Bytes the part's last query reads in this layer: its entries' K and V rows in every KV head.
    const int64_t n_kv = shape_.n_kv_heads;
    const uint64_t row_bytes = static_cast<uint64_t>(store_->k_layout().row_bytes + store_->v_layout().row_bytes);
    const int64_t last = part.n - 1;
    uint64_t bytes = part.index_bytes_last;
    for (int64_t h = 0; h < (p->per_kv_head ? n_kv : 1); ++h)
        for (const KvSpan& sp : p->list(p->per_kv_head ? last * n_kv + h : last))
            bytes += static_cast<uint64_t>(sp.end - sp.begin) * row_bytes * (p->per_kv_head ? 1 : static_cast<uint64_t>(n_kv));
    part.read_bytes += bytes;
    read_bytes_ += bytes;
    if (spec_.kind == AttentionKind::topk) {
        // The blocks the part's last query read in this layer (any KV head), for the block map.
        const int32_t bs = manager_->n_tokens_per_block();
        auto& seen = part.s->read_last;
        seen.resize(static_cast<size_t>(shape_.n_layers));
        std::vector<bool>& row = seen[static_cast<size_t>(layer)];
        row.assign(static_cast<size_t>((part.t0 + part.n + bs - 1) / bs), false);
        for (int64_t h = 0; h < n_kv; ++h)
            for (const KvSpan& sp : p->list(last * n_kv + h))
                if (sp.stream == kTokenStream)
                    for (int32_t b = sp.begin / bs; b < (sp.end + bs - 1) / bs; ++b) row[static_cast<size_t>(b)] = true;
    }
    return *p;
}

void PagedKv::build_selection_plan(int32_t layer, StepPart& part, const float* q) {
    const Sequence& s = *part.s;
    const int32_t step_t0 = part.t0, step_n = part.n;
    const int32_t storage = storage_of_[static_cast<size_t>(layer)];
    const int64_t hd = shape_.head_dim, n_kv = shape_.n_kv_heads, group = shape_.n_head / shape_.n_kv_heads;
    const int32_t bs = manager_->n_tokens_per_block();
    AttendPlan& p = part.selection_plan;
    p.clear();
    p.per_kv_head = true;
    std::vector<float> score, row(static_cast<size_t>(hd));
    std::vector<int32_t> order;
    const std::span<const BlockId> table = manager_->block_table(s.token_id);
    const std::span<const BlockId> ptable = manager_->block_table(s.pooled_id);
    const size_t mm_stride = block_minmax_.empty() ? 0 : block_minmax_.size() / members_.size();
    for (int32_t i = 0; i < step_n; ++i) {
        const int32_t t = step_t0 + i;
        for (int64_t h = 0; h < n_kv; ++h) {
            const float* qh = q + (static_cast<int64_t>(i) * shape_.n_head + h * group) * hd;
            // Candidates and how many to keep.
            int32_t n_cand, keep, recent_begin;
            KvSpan all;
            if (spec_.kind == AttentionKind::topk) {
                n_cand = std::max(0, t + 1 - spec_.recent) / bs;   // whole blocks before the recent window
                keep = spec_.k / bs;
                recent_begin = n_cand * bs;
                all = {kTokenStream, 0, t + 1};
            } else {
                n_cand = pooled_count(t);
                keep = spec_.k;
                recent_begin = std::min(spec_.sinks, t + 1) + n_cand * spec_.block;
                all = {kPooledStream, 0, n_cand};
                p.add({kTokenStream, 0, std::min(spec_.sinks, t + 1)});
            }
            if (keep >= n_cand) {
                p.add(all);
                if (spec_.kind == AttentionKind::heavy) p.add({kTokenStream, recent_begin, t + 1});
                p.close_list();
                continue;
            }
            score.assign(static_cast<size_t>(n_cand), 0.0f);
            for (int32_t c = 0; c < n_cand; ++c) {
                float sc = 0;
                if (spec_.kind == AttentionKind::topk) {
                    // Quest's bound: per dimension the larger of q·min and q·max over the block.
                    const uint16_t* mm = &block_minmax_[static_cast<size_t>(storage) * mm_stride +
                                                        (static_cast<size_t>(table[static_cast<size_t>(c)]) * n_kv + static_cast<size_t>(h)) * 2 * hd];
                    for (int64_t g = 0; g < group; ++g)
                        for (int64_t d = 0; d < hd; ++d) {
                            const float qd = qh[g * hd + d];
                            sc += std::max(qd * half_to_float(mm[d]), qd * half_to_float(mm[hd + d]));
                        }
                } else {
                    kv_decode_row(types_.k, store_->k_row(storage, ptable[static_cast<size_t>(c / bs)], c % bs, static_cast<int32_t>(h)), row.data(), hd);
                    for (int64_t g = 0; g < group; ++g)
                        for (int64_t d = 0; d < hd; ++d) sc += qh[g * hd + d] * row[static_cast<size_t>(d)];
                }
                // The first block (the attention sinks of StreamingLLM) is always kept: queries
                // put much weight there that a bound on its keys does not foresee.
                if (spec_.kind == AttentionKind::topk && c == 0) sc = std::numeric_limits<float>::infinity();
                score[static_cast<size_t>(c)] = sc;
            }
            if (i == step_n - 1)
                part.index_bytes_last += static_cast<uint64_t>(n_cand) *
                                     (spec_.kind == AttentionKind::topk ? 2 * hd * sizeof(uint16_t) : static_cast<uint64_t>(store_->k_layout().row_bytes));
            order.resize(static_cast<size_t>(n_cand));
            std::iota(order.begin(), order.end(), 0);
            std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                              [&](int32_t a, int32_t b) { return score[static_cast<size_t>(a)] > score[static_cast<size_t>(b)] || (score[static_cast<size_t>(a)] == score[static_cast<size_t>(b)] && a < b); });
            order.resize(static_cast<size_t>(keep));
            std::sort(order.begin(), order.end());
            const int32_t unit = spec_.kind == AttentionKind::topk ? bs : 1;
            const int32_t stream = spec_.kind == AttentionKind::topk ? kTokenStream : kPooledStream;
            for (size_t j = 0; j < order.size();) {
                size_t e = j + 1;
                while (e < order.size() && order[e] == order[e - 1] + 1) ++e;
                p.add({stream, order[j] * unit, (order[e - 1] + 1) * unit});
                j = e;
            }
            p.add({kTokenStream, recent_begin, t + 1});
            p.close_list();
        }
    }
}

}  // namespace workbench
