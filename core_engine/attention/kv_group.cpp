// The mechanism every variant shares: sequences, allocation, the step's parts, prefix sharing,
// forks and byte accounting. What is variant-specific is asked of the policy.
#include "attention/kv_group.h"

#include <algorithm>
#include <cstdint>

#include "kv_blocks/kv_row_codec.h"
#include "tensor/half_convert.h"

namespace workbench {


namespace {


}  // namespace

KvGroup::~KvGroup() = default;

Result<std::unique_ptr<KvGroup>> KvGroup::create(const AttentionSpec& spec, KvTypes types, const PagedKvShape& shape,
                                                 uint64_t budget_bytes, int32_t n_ctx, int32_t n_seq, int32_t n_tokens_per_block,
                                                 const std::vector<int32_t>& layers) {
    std::unique_ptr<KvGroup> kv(new KvGroup());
    kv->policy_ = make_attention_policy(spec);
    AttentionPolicy& policy = *kv->policy_;
    KvArena& arena = kv->arena_;
    const int32_t n_layers = shape.n_layers;
    WB_RETURN_IF_ERROR(check_value_rows(policy, shape, types));
    WB_RETURN_IF_ERROR(policy.check(shape, types));
    arena.types = types;
    arena.shape = policy.stored_shape(shape);
    arena.tokens_per_block = n_tokens_per_block;
    arena.rotate_k = kv_type_rotates_rows(types.k) && policy.rotates_low_bit_rows();
    arena.rotate_v = kv_type_rotates_rows(types.v) && policy.rotates_low_bit_rows();
    WB_RETURN_IF_ERROR(check_rotated_rows(policy, shape, types));
    WB_RETURN_IF_ERROR(check_recent_window(policy, types));
    kv->recent_ = types.recent;
    kv->ring_ = types.recent > 0 ? types.recent + kRecentRollback : 0;

    // Which layer's KV each layer reads (-1: a layer of another group).
    arena.owner.assign(static_cast<size_t>(n_layers), -1);
    arena.storage_of.assign(static_cast<size_t>(n_layers), -1);
    for (int32_t il = 0; il < n_layers; ++il) {
        if (!layers.empty() && std::find(layers.begin(), layers.end(), il) == layers.end()) continue;
        const int32_t owner = policy.owner_layer(il, n_layers);
        arena.owner[static_cast<size_t>(il)] = owner;
        if (owner == il) arena.members.emplace_back();
        arena.storage_of[static_cast<size_t>(il)] = static_cast<int32_t>(arena.members.size()) - 1;
        arena.members.back().push_back(il);
    }

    KvCacheConfig config;
    config.types = types;
    config.n_layers = static_cast<int32_t>(arena.members.size());
    config.n_kv_heads = arena.shape.n_kv_heads;
    config.head_dim = arena.shape.head_dim;
    config.layer_head_dim = arena.shape.layer_head_dim;
    config.values_in_keys = arena.shape.values_in_keys;
    config.head_dim_v = arena.shape.values_in_keys ? 0 : arena.shape.head_dim_v;
    config.n_tokens_per_block = n_tokens_per_block;
    WB_RETURN_IF_ERROR(validate_kv_cache_config(config));
    KvCacheConfig full_config = config;
    full_config.n_layers = n_layers;
    full_config.n_kv_heads = shape.n_kv_heads;
    full_config.head_dim = shape.head_dim;
    full_config.layer_head_dim.clear();
    full_config.values_in_keys = shape.values_in_keys;
    full_config.head_dim_v = shape.values_in_keys ? 0 : shape.head_dim_v;
    kv->full_bytes_per_token_ = kv_bytes_per_token(full_config);
    kv->aux_block_bytes_ = policy.aux_bytes_per_block(arena);

    const uint64_t per_block = kv_bytes_per_block(config) + kv->aux_block_bytes_;
    uint64_t n_blocks = std::min<uint64_t>(budget_bytes / per_block, 1u << 30);
    if (budget_bytes == 0) {
        const int64_t seq_tokens = policy.held_tokens_bound(std::max(n_ctx, 1), n_tokens_per_block);
        const uint64_t token_blocks = (static_cast<uint64_t>(seq_tokens) + n_tokens_per_block - 1) / n_tokens_per_block;
        const uint64_t per_seq = token_blocks + policy.pooled_blocks(token_blocks) + 1;
        n_blocks = per_seq * static_cast<uint64_t>(std::max(n_seq, 1)) + 1;
    }
    if (n_blocks < 2)
        return error(StatusCode::resource_exhausted, "--kv-budget " + std::to_string(budget_bytes >> 20) + " MiB holds " +
                                                         std::to_string(n_blocks) + " KV blocks of " + std::to_string(per_block) +
                                                         " bytes; at least 2 are needed");
    WB_ASSIGN_OR_RETURN(KvBlockManager manager, KvBlockManager::create(config, static_cast<int32_t>(n_blocks)));
    arena.manager = std::make_unique<KvBlockManager>(std::move(manager));
    WB_ASSIGN_OR_RETURN(arena.store, KvStore::create(config, static_cast<int32_t>(n_blocks)));
    policy.on_pool_created(arena, static_cast<int32_t>(n_blocks));
    return kv;
}

uint64_t KvGroup::block_bytes() const { return arena_.manager->bytes_per_block() + aux_block_bytes_; }

KvSequence& KvGroup::seq_state(SeqId seq) {
    auto& slot = seqs_[seq];
    if (!slot) {
        slot = std::make_unique<KvSequence>();
        slot->token_id = 2 * seq;
        slot->pooled_id = 2 * seq + 1;
    }
    return *slot;
}

Status KvGroup::begin_step(SeqId seq, std::span<const TokenId> tokens) {
    const StepSequence one{seq, tokens};
    return begin_step(std::span(&one, 1));
}

Status KvGroup::begin_step(std::span<const StepSequence> batch) {
    if (batch.empty()) return error(StatusCode::invalid_argument, "KV cache: a step needs at least one sequence");
    for (size_t i = 0; i < batch.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (batch[i].seq == batch[j].seq)
                return error(StatusCode::invalid_argument, "KV cache: sequence " + std::to_string(batch[i].seq) + " appears twice in one step");
    if (policy_->one_sequence_per_step() && batch.size() > 1)
        return error(StatusCode::invalid_argument, "KV cache: a latent step holds one sequence (its keys are rebuilt per sequence)");
    if (parts_.size() < batch.size()) parts_.resize(batch.size());
    n_parts_ = 0;
    int32_t row = 0;
    for (const StepSequence& b : batch) {
        StepPart& part = parts_[static_cast<size_t>(n_parts_)];
        if (Status st = begin_part(part, b); !st.ok()) {
            // Everything allocated for the earlier parts goes back.
            while (n_parts_ > 0) undo_part(parts_[static_cast<size_t>(--n_parts_)]);
            return st;
        }
        part.index = n_parts_;
        part.row0 = row;
        row += part.n;
        ++n_parts_;
    }
    positions_.resize(static_cast<size_t>(row));
    read_bytes_ = index_bytes_ = 0;
    index_ops_ = 0;
    for (int32_t p = 0; p < n_parts_; ++p) {
        StepPart& part = parts_[static_cast<size_t>(p)];
        for (int32_t i = 0; i < part.n; ++i) positions_[static_cast<size_t>(part.row0 + i)] = part.t0 + i;
        part.read_bytes = 0;
        policy_->begin_part(arena_, part);
    }
    return Status::ok_status();
}

Status KvGroup::begin_part(StepPart& part, const StepSequence& step) {
    const SeqId seq = step.seq;
    const std::span<const TokenId> tokens = step.tokens;
    if (seq < 0) return error(StatusCode::invalid_argument, "KV cache: sequence ids are non-negative");
    if (tokens.empty()) return error(StatusCode::invalid_argument, "KV cache: a step needs at least one token per sequence");
    KvBlockManager& manager = *arena_.manager;
    KvSequence& s = seq_state(seq);
    const int32_t t0 = static_cast<int32_t>(s.tokens.size());
    const int32_t n = static_cast<int32_t>(tokens.size());
    s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
    auto undo = [&](Status st) {
        s.tokens.resize(static_cast<size_t>(t0));
        if (t0 == 0 && !manager.has_sequence(s.token_id)) seqs_.erase(seq);
        return st;
    };
    Result<SlotAllocation> slots = manager.allocate_slots(s.token_id, n, s.tokens);
    if (!slots.ok()) return undo(slots.status());
    const int32_t t1 = t0 + n - 1;
    const int32_t n_pool_new = policy_->pooled_count(t1) - s.n_pooled +
                               policy_->reserved_pooled_entries(arena_, s, t0, n, step.ends_prompt);
    if (n_pool_new > 0) {
        std::vector<TokenId> ids(static_cast<size_t>(manager.n_tokens(s.pooled_id) + n_pool_new));
        // Pooled entries are not tokens: negative ids keep them out of every real prompt's hash.
        for (size_t g = 0; g < ids.size(); ++g) ids[g] = -1 - static_cast<TokenId>(g);
        Result<SlotAllocation> pooled = manager.allocate_slots(s.pooled_id, n_pool_new, ids);
        if (!pooled.ok()) {
            (void)manager.rollback(s.token_id);
            if (t0 == 0) (void)manager.free(s.token_id);
            return undo(pooled.status());
        }
        if (pooled->copy) arena_.store->copy_block(pooled->copy->src, pooled->copy->dst);
    }
    if (slots->copy) {
        arena_.store->copy_block(slots->copy->src, slots->copy->dst);
        policy_->on_block_copied(arena_, slots->copy->src, slots->copy->dst);
    }
    part.s = &s;
    part.id = seq;
    part.t0 = t0;
    part.n = n;
    part.ends_prompt = step.ends_prompt;
    part.generated = step.generated;
    return Status::ok_status();
}

void KvGroup::undo_part(StepPart& part) {
    KvSequence& s = *part.s;
    (void)arena_.manager->rollback(s.token_id);
    if (arena_.manager->has_sequence(s.pooled_id)) (void)arena_.manager->rollback(s.pooled_id);
    s.tokens.resize(static_cast<size_t>(part.t0));
    if (part.t0 == 0) free(part.id);  // a sequence this step created leaves no trace
    part.s = nullptr;
}

void KvGroup::write(int32_t layer, const float* k, const float* v, ThreadPool&) {
    const size_t row = static_cast<size_t>(arena_.shape.n_kv_heads) * arena_.shape.head_dim_of(arena_.storage_of[static_cast<size_t>(layer)]);
    if (arena_.rotate_v) {
        // Every V row the group keeps (blocks, ring, pooled or merged rows) is stored rotated, so
        // the step's rows turn once here; attention sums them and the backend turns the result back.
        const int64_t hd = arena_.shape.head_dim;
        int64_t n_rows = 0;
        for (int32_t p = 0; p < n_parts_; ++p) n_rows = std::max<int64_t>(n_rows, parts_[static_cast<size_t>(p)].row0 + parts_[static_cast<size_t>(p)].n);
        n_rows *= arena_.shape.n_kv_heads;
        rotated_v_.assign(v, v + n_rows * hd);
        for (int64_t r = 0; r < n_rows; ++r) hadamard_rotate(rotated_v_.data() + r * hd, hd);
        v = rotated_v_.data();
    }
    for (int32_t p = 0; p < n_parts_; ++p) {
        StepPart& part = parts_[static_cast<size_t>(p)];
        policy_->write(arena_, layer, part, k + part.row0 * row, v + part.row0 * row);
        if (recent_ > 0 && arena_.owner[static_cast<size_t>(layer)] == layer)
            write_recent(arena_.storage_of[static_cast<size_t>(layer)], part, k + part.row0 * row, v + part.row0 * row);
    }
}

void KvGroup::write_recent(int32_t storage, StepPart& part, const float* k, const float* v) {
    KvSequence& s = *part.s;
    const int64_t hd = arena_.shape.head_dim, row = arena_.shape.n_kv_heads * hd;
    const size_t ring_values = static_cast<size_t>(ring_ * row);
    if (s.recent_k.empty()) {
        s.recent_k.assign(arena_.members.size() * ring_values, 0);
        s.recent_v.assign(arena_.members.size() * ring_values, 0);
    }
    uint16_t* ring_k = s.recent_k.data() + static_cast<size_t>(storage) * ring_values;
    uint16_t* ring_v = s.recent_v.data() + static_cast<size_t>(storage) * ring_values;
    const int32_t t0 = part.t0, end = part.t0 + part.n;
    const int32_t ring_lo = std::max(0, end - ring_);   // the oldest token the ring holds after this write
    // Step token j's rows as stored: keys rotated like the quantized ones.
    std::vector<float> rotated(static_cast<size_t>(hd));
    const auto encode_step_row = [&](int32_t j, uint16_t* dst_k, uint16_t* dst_v) {
        const int64_t i = j - t0;
        for (int64_t h = 0; h < arena_.shape.n_kv_heads; ++h) {
            const float* kr = k + i * row + h * hd;
            if (arena_.rotate_k) {
                std::copy(kr, kr + hd, rotated.begin());
                hadamard_rotate(rotated.data(), hd);
                kr = rotated.data();
            }
            for (int64_t d = 0; d < hd; ++d) {
                dst_k[h * hd + d] = float_to_half(kr[d]);
                dst_v[h * hd + d] = float_to_half(v[i * row + h * hd + d]);
            }
        }
    };
    // Tokens this step's first queries still read in f16 that the write leaves outside the ring:
    // set aside first (older ones from the ring, the step's own from its rows).
    part.displaced_first = std::max(0, t0 - recent_ + 1);
    part.displaced_n = std::max(0, ring_lo - part.displaced_first);
    part.displaced_k.resize(static_cast<size_t>(part.displaced_n * row));
    part.displaced_v.resize(static_cast<size_t>(part.displaced_n * row));
    for (int32_t j = part.displaced_first; j < ring_lo; ++j) {
        uint16_t* dk = part.displaced_k.data() + (j - part.displaced_first) * row;
        uint16_t* dv = part.displaced_v.data() + (j - part.displaced_first) * row;
        if (j < t0) {
            std::copy_n(ring_k + (j % ring_) * row, row, dk);
            std::copy_n(ring_v + (j % ring_) * row, row, dv);
        } else {
            encode_step_row(j, dk, dv);
        }
    }
    for (int32_t j = std::max(t0, ring_lo); j < end; ++j) encode_step_row(j, ring_k + (j % ring_) * row, ring_v + (j % ring_) * row);
}

int32_t KvGroup::recent_stream(int32_t layer, const StepPart& part) const {
    return kFirstExtraStream + policy_->n_extra_streams(arena_, layer, part);
}

const AttendPlan& KvGroup::plan_with_recent(int32_t layer, StepPart& part, const AttendPlan& plan) {
    // Each query's last recent_ tokens come from the ring (or the rows set aside), the rest as planned.
    AttendPlan& out = part.recent_plan;
    out.clear();
    out.per_kv_head = plan.per_kv_head;
    const int32_t ring_stream = recent_stream(layer, part), displaced_stream = ring_stream + 1;
    const int32_t ring_lo = std::max(0, part.t0 + part.n - ring_);
    const int64_t lists_per_row = plan.per_kv_head ? arena_.shape.n_kv_heads : 1;
    for (size_t li = 0; li + 1 < plan.offsets.size(); ++li) {
        const int32_t pos = part.t0 + static_cast<int32_t>(static_cast<int64_t>(li) / lists_per_row);
        const int32_t lo = std::max(0, pos - recent_ + 1);
        for (const KvSpan& sp : plan.list(static_cast<int64_t>(li))) {
            if (sp.stream != kTokenStream) {
                out.add(sp);
                continue;
            }
            out.add({kTokenStream, sp.begin, std::min(sp.end, lo)});
            const int32_t a = std::max(sp.begin, lo), b = sp.end;
            if (a >= b) continue;
            out.add({displaced_stream, a - part.displaced_first, std::min(b, ring_lo) - part.displaced_first});
            for (int32_t j = std::max(a, ring_lo); j < b;) {
                const int32_t slot = j % ring_, run = std::min(b - j, ring_ - slot);
                out.add({ring_stream, slot, slot + run});
                j += run;
            }
        }
        out.close_list();
    }
    return out;
}

std::span<const int32_t> KvGroup::token_slots() {
    const int32_t bt = n_tokens_per_block();
    slots_.clear();
    for (int32_t pi = 0; pi < n_parts_; ++pi) {
        const StepPart& part = parts_[static_cast<size_t>(pi)];
        const std::span<const BlockId> table = arena_.token_table(*part.s);
        for (int32_t t = part.t0; t < part.t0 + part.n; ++t) slots_.push_back(table[static_cast<size_t>(t / bt)] * bt + t % bt);
    }
    return slots_;
}

void KvGroup::read_rows(int32_t layer, int32_t n, float* k_out, float* v_out) const {
    const KvSequence& s = *parts_.front().s;
    const int32_t storage = arena_.storage_of[static_cast<size_t>(layer)];
    const int32_t bs = n_tokens_per_block();
    const int32_t n_kv = arena_.shape.n_kv_heads, hd = arena_.shape.head_dim_of(storage);
    const int64_t row = static_cast<int64_t>(n_kv) * hd;
    const std::span<const BlockId> table = arena_.token_table(s);
    for (int32_t j = 0; j < n; ++j) {
        const BlockId blk = table[static_cast<size_t>(j / bs)];
        for (int32_t h = 0; h < n_kv; ++h) {
            kv_decode_row(arena_.types.k, arena_.store->k_row(storage, blk, j % bs, h), k_out + j * row + h * hd, hd);
            kv_decode_row(arena_.types.v, arena_.store->v_row(storage, blk, j % bs, h), v_out + j * row + h * hd, hd);
        }
    }
}

std::span<const KvStreamView> KvGroup::streams(int32_t layer) {
    const int32_t storage = arena_.storage_of[static_cast<size_t>(layer)];
    views_.clear();
    // Each part's streams in turn: its token cache, its pooled cache, then the policy's own, as
    // plan() offsets them.
    for (int32_t pi = 0; pi < n_parts_; ++pi) {
        StepPart& part = parts_[static_cast<size_t>(pi)];
        views_.push_back(arena_.token_stream(storage, *part.s));
        views_.push_back(arena_.pooled_stream(storage, *part.s, policy_->pooled_score_bias()));
        policy_->add_extra_streams(arena_, layer, part, views_);
        if (recent_ > 0) {
            const int64_t n_kv = arena_.shape.n_kv_heads, hd = arena_.shape.head_dim;
            const size_t at = static_cast<size_t>(storage) * static_cast<size_t>(ring_ * n_kv * hd);
            const KvSequence& s = *part.s;
            views_.push_back(flat_f16_stream(s.recent_k.data() + at, s.recent_v.data() + at, ring_, n_kv, hd));
            views_.push_back(flat_f16_stream(part.displaced_k.data(), part.displaced_v.data(), std::max(1, part.displaced_n), n_kv, hd));
        }
    }
    return views_;
}

const AttendPlan& KvGroup::plan(int32_t layer, const float* q, ThreadPool& pool) {
    const int64_t q_row = static_cast<int64_t>(arena_.shape.n_head) * arena_.shape.head_dim;
    if (n_parts_ == 1) return part_plan(layer, parts_.front(), q, pool);
    // Several sequences: their lists in row order, each span moved to its part's streams.
    AttendPlan& joined = batch_plan_;
    joined.clear();
    int32_t stream0 = 0;
    for (int32_t pi = 0; pi < n_parts_; ++pi) {
        StepPart& part = parts_[static_cast<size_t>(pi)];
        const AttendPlan& p = part_plan(layer, part, q ? q + part.row0 * q_row : nullptr, pool);
        joined.per_kv_head = p.per_kv_head;
        for (size_t li = 0; li + 1 < p.offsets.size(); ++li) {
            for (KvSpan sp : p.list(static_cast<int64_t>(li))) {
                sp.stream += stream0;
                joined.add(sp);
            }
            joined.close_list();
        }
        stream0 += recent_stream(layer, part) + (recent_ > 0 ? 2 : 0);
    }
    return joined;
}

const AttendPlan& KvGroup::part_plan(int32_t layer, StepPart& part, const float* q, ThreadPool& pool) {
    part.index_bytes_last = 0;
    part.index_ops = 0;
    const AttendPlan* planned = &policy_->plan(arena_, layer, part, q, pool);
    const AttendPlan* p = recent_ > 0 ? &plan_with_recent(layer, part, *planned) : planned;
    // Bytes the part's last query reads in this layer: its entries' K and V rows in every KV head
    // (f16 rows from the recent ring).
    const int64_t n_kv = arena_.shape.n_kv_heads;
    const int32_t storage = arena_.storage_of[static_cast<size_t>(layer)];
    const uint64_t row_bytes = static_cast<uint64_t>(arena_.store->row_pair_bytes(storage));
    const uint64_t f16_row_bytes = 4 * static_cast<uint64_t>(arena_.shape.head_dim);
    const int32_t first_recent_stream = recent_ > 0 ? recent_stream(layer, part) : INT32_MAX;
    const int64_t last = part.n - 1;
    uint64_t bytes = part.index_bytes_last;
    for (int64_t h = 0; h < (p->per_kv_head ? n_kv : 1); ++h)
        for (const KvSpan& sp : p->list(p->per_kv_head ? last * n_kv + h : last))
            bytes += static_cast<uint64_t>(sp.end - sp.begin) * (sp.stream >= first_recent_stream ? f16_row_bytes : row_bytes) *
                     (p->per_kv_head ? 1 : static_cast<uint64_t>(n_kv));
    part.read_bytes += bytes;
    read_bytes_ += bytes;
    index_bytes_ += part.index_bytes_last;
    index_ops_ += part.index_ops;
    if (policy_->marks_read_blocks()) {
        // The token blocks the part's last query read in this layer (any KV head), for the block map.
        const int32_t bs = n_tokens_per_block();
        auto& seen = part.s->read_last;
        seen.resize(static_cast<size_t>(arena_.shape.n_layers));
        std::vector<bool>& row = seen[static_cast<size_t>(layer)];
        row.assign(static_cast<size_t>((part.t0 + part.n + bs - 1) / bs), false);
        // As the policy planned them: entries the ring serves are read all the same.
        for (int64_t h = 0; h < (planned->per_kv_head ? n_kv : 1); ++h)
            for (const KvSpan& sp : planned->list(planned->per_kv_head ? last * n_kv + h : last))
                if (sp.stream == kTokenStream)
                    for (int32_t b = sp.begin / bs; b < (sp.end + bs - 1) / bs; ++b) row[static_cast<size_t>(b)] = true;
    }
    return *p;
}

void KvGroup::release_unreachable(KvSequence& s) {
    int32_t first = s.release_cursor, end = first;
    policy_->releasable(arena_, s, first, end);
    if (end > first) {
        (void)arena_.manager->release_blocks(s.token_id, first, end);
        s.release_cursor = end;
        s.lossy = true;
    }
}

void KvGroup::finish_step() {
    for (int32_t p = 0; p < n_parts_; ++p) {
        StepPart& part = parts_[static_cast<size_t>(p)];
        KvSequence& s = *part.s;
        const int32_t g1 = policy_->pooled_count(part.t0 + part.n - 1);
        if (g1 > s.n_pooled) s.n_pooled = g1, s.lossy = true;
        (void)arena_.manager->commit(s.token_id);
        if (arena_.manager->has_sequence(s.pooled_id)) (void)arena_.manager->commit(s.pooled_id);
        policy_->on_committed(arena_, part);
        release_unreachable(s);
        s.read_bytes_last_step = part.read_bytes;
        part.s = nullptr;
    }
    n_parts_ = 0;
    peak_ = std::max(peak_, usage().bytes_in_use);
}

void KvGroup::abort_step() {
    while (n_parts_ > 0) undo_part(parts_[static_cast<size_t>(--n_parts_)]);
}

int32_t KvGroup::keep_prefix(SeqId seq, int32_t n_common) {
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return 0;
    KvSequence& s = *it->second;
    const int32_t n = static_cast<int32_t>(s.tokens.size());
    n_common = std::clamp(n_common, 0, n);
    if (n_common == n) return n;
    // A cut deeper than the ring's spare slots loses f16 rows a fresh run would have.
    if (s.lossy || n_common == 0 || (recent_ > 0 && n - n_common > ring_ - recent_)) {
        free(seq);
        return 0;
    }
    (void)arena_.manager->truncate(s.token_id, n_common);
    s.tokens.resize(static_cast<size_t>(n_common));
    policy_->on_truncate(arena_, s, n_common);
    return n_common;
}

int32_t KvGroup::cached_prefix_tokens(std::span<const TokenId> prompt) const {
    // Cached blocks hold no f16 ring: a recent window's sequence is always computed.
    return policy_->can_adopt_prefix() && recent_ == 0 ? arena_.manager->find_cached_prefix(prompt).n_tokens : 0;
}

int32_t KvGroup::adopt_cached_prefix(SeqId seq, std::span<const TokenId> prompt) {
    if (seqs_.contains(seq) || seq < 0) return 0;
    if (!policy_->can_adopt_prefix() || recent_ > 0) return 0;
    const CachedPrefix prefix = arena_.manager->find_cached_prefix(prompt);
    if (prefix.n_tokens == 0) return 0;
    KvSequence& s = seq_state(seq);
    if (!arena_.manager->allocate_slots(s.token_id, 0, prompt, prefix).ok()) {
        seqs_.erase(seq);
        return 0;
    }
    (void)arena_.manager->commit(s.token_id);
    s.tokens.assign(prompt.begin(), prompt.begin() + prefix.n_tokens);
    peak_ = std::max(peak_, usage().bytes_in_use);
    return prefix.n_tokens;
}

void KvGroup::free(SeqId seq) {
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return;
    (void)arena_.manager->free(it->second->token_id);
    if (arena_.manager->has_sequence(it->second->pooled_id)) (void)arena_.manager->free(it->second->pooled_id);
    seqs_.erase(it);
}

Status KvGroup::fork(SeqId parent, SeqId child) {
    const auto it = seqs_.find(parent);
    if (it == seqs_.end()) return error(StatusCode::not_found, "KV cache: no sequence " + std::to_string(parent));
    if (seqs_.contains(child)) return error(StatusCode::invalid_argument, "KV cache: sequence " + std::to_string(child) + " exists");
    if (!policy_->can_fork())
        return error(StatusCode::invalid_argument, "KV cache: " + std::string(attention_kind_name(spec().kind)) +
                                                       " keeps per-sequence state; its sequences cannot share blocks");
    const KvSequence& p = *it->second;
    WB_RETURN_IF_ERROR(arena_.manager->fork(p.token_id, 2 * child));
    if (arena_.manager->has_sequence(p.pooled_id)) WB_RETURN_IF_ERROR(arena_.manager->fork(p.pooled_id, 2 * child + 1));
    auto c = std::make_unique<KvSequence>(p);
    c->token_id = 2 * child;
    c->pooled_id = 2 * child + 1;
    seqs_[child] = std::move(c);
    return Status::ok_status();
}

int32_t KvGroup::n_tokens(SeqId seq) const {
    const auto it = seqs_.find(seq);
    return it == seqs_.end() ? 0 : static_cast<int32_t>(it->second->tokens.size());
}

std::span<const TokenId> KvGroup::tokens(SeqId seq) const {
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return {};
    return it->second->tokens;
}

int64_t KvGroup::n_free_tokens() const {
    return static_cast<int64_t>(arena_.manager->pool().n_free()) * n_tokens_per_block();
}

int32_t KvGroup::n_tokens_per_block() const { return arena_.manager->n_tokens_per_block(); }

KvUsage KvGroup::usage() const {
    KvUsage u;
    const BlockPool& pool = arena_.manager->pool();
    const uint64_t per_block = block_bytes();
    u.bytes_in_use = static_cast<uint64_t>(pool.n_usable() - pool.n_free()) * per_block;
    u.bytes_peak = std::max(peak_, u.bytes_in_use);
    u.bytes_allocated = static_cast<uint64_t>(pool.n_blocks()) * per_block;
    u.bytes_read_last_step = read_bytes_;
    u.index_bytes_last_step = index_bytes_;
    u.index_ops_last_step = index_ops_;
    const uint64_t bs = static_cast<uint64_t>(n_tokens_per_block());
    for (const auto& [id, s] : seqs_) {
        u.bytes_in_use += recent_bytes(*s);
        u.n_tokens += static_cast<int32_t>(s->tokens.size());
        u.bytes_full += (s->tokens.size() + bs - 1) / bs * bs * full_bytes_per_token_;
    }
    return u;
}

KvUsage KvGroup::usage(SeqId seq) const {
    KvUsage u;
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return u;
    const KvSequence& s = *it->second;
    u.bytes_in_use = static_cast<uint64_t>(arena_.manager->n_live_blocks(s.token_id) + arena_.manager->n_live_blocks(s.pooled_id)) *
                         block_bytes() +
                     recent_bytes(s);
    const uint64_t bs = static_cast<uint64_t>(n_tokens_per_block());
    u.bytes_full = (s.tokens.size() + bs - 1) / bs * bs * full_bytes_per_token_;
    u.bytes_read_last_step = s.read_bytes_last_step;
    u.n_tokens = static_cast<int32_t>(s.tokens.size());
    return u;
}

std::vector<KvBlockUse> KvGroup::block_map(SeqId seq, int32_t& n_blocks) const {
    n_blocks = 0;
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return {};
    const KvSequence& s = *it->second;
    const std::span<const BlockId> table = arena_.token_table(s);
    n_blocks = static_cast<int32_t>(table.size());
    const KvBlockUse released = policy_->pools_released_blocks() ? KvBlockUse::compressed : KvBlockUse::evicted;
    std::vector<KvBlockUse> map(static_cast<size_t>(arena_.shape.n_layers) * table.size());
    for (int32_t il = 0; il < arena_.shape.n_layers; ++il) {
        if (arena_.owner[static_cast<size_t>(il)] < 0) continue;  // another group's layer
        const bool borrowed = !policy_->layer_computes_kv(arena_, il);
        const std::vector<bool>* read = static_cast<size_t>(il) < s.read_last.size() ? &s.read_last[static_cast<size_t>(il)] : nullptr;
        for (size_t b = 0; b < table.size(); ++b) {
            KvBlockUse u = KvBlockUse::live;
            if (table[b] == kNullBlock) u = released;
            else if (borrowed) u = KvBlockUse::borrowed;
            else if (read && b < read->size() && !(*read)[b]) u = KvBlockUse::skipped;
            else if (arena_.manager->pool().ref_count(table[b]) > 1) u = KvBlockUse::shared;
            map[static_cast<size_t>(il) * table.size() + b] = u;
        }
    }
    return map;
}

std::vector<uint64_t> KvGroup::layer_bytes(SeqId seq) const {
    std::vector<uint64_t> out(static_cast<size_t>(arena_.shape.n_layers), 0);
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return out;
    const uint64_t aux_per_layer = aux_block_bytes_ / arena_.members.size();
    const uint64_t blocks = static_cast<uint64_t>(arena_.manager->n_live_blocks(it->second->token_id) +
                                                  arena_.manager->n_live_blocks(it->second->pooled_id));
    const uint64_t ring_per_layer = recent_bytes(*it->second) / arena_.members.size();
    for (size_t storage = 0; storage < arena_.members.size(); ++storage) {
        const int32_t st = static_cast<int32_t>(storage);
        const uint64_t layer_block = static_cast<uint64_t>(arena_.store->block_pair_bytes(st)) + aux_per_layer;
        out[static_cast<size_t>(arena_.members[storage].front())] = blocks * layer_block + ring_per_layer;
    }
    return out;
}

}  // namespace workbench
