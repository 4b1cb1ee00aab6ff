// The mechanism shared by every variant: sequences, allocation, writes into the paged store,
// pooling, eviction and byte accounting. Which entries a query reads is decided in
// variant_plans.cpp; this file keeps the cache in the state those plans assume.
#include "attention/paged_kv.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/half_convert.h"
#include "kv_cache/kv_row_codec.h"

namespace workbench {


namespace {

bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

Status bad_spec(const AttentionSpec& spec, const std::string& what) {
    return error(StatusCode::invalid_argument, "--attention " + attention_spec_name(spec) + ": " + what);
}

}  // namespace

PagedKv::~PagedKv() = default;

Result<std::unique_ptr<PagedKv>> PagedKv::create(const AttentionSpec& spec, KvTypes types, const PagedKvShape& shape,
                                                 uint64_t budget_bytes, int32_t n_ctx, int32_t n_seq, int32_t n_tokens_per_block) {
    std::unique_ptr<PagedKv> kv(new PagedKv());
    kv->spec_ = spec;
    kv->types_ = types;
    kv->shape_ = shape;
    const int32_t n_layers = shape.n_layers;
    if (spec.kind == AttentionKind::latent) {
        // The cache holds each layer's latent c (R values) as one "head": its first half in the
        // K arena, its second in the V arena.
        if (spec.rank % 2 != 0) return bad_spec(spec, "rank must be even (the latent is stored as two halves)");
        for (KvDType t : {types.k, types.v})
            if ((spec.rank / 2) % static_cast<int32_t>(kv_dtype_layout(t).block_values) != 0)
                return bad_spec(spec, "with KV type " + std::string(kv_dtype_name(t)) + " the rank must be a multiple of " +
                                          std::to_string(2 * kv_dtype_layout(t).block_values));
        kv->shape_.n_kv_heads = 1;
        kv->shape_.head_dim = spec.rank / 2;
    }
    if (spec.kind == AttentionKind::cross_layer) {
        const int32_t last = spec.last_layer < 0 ? n_layers - 1 : spec.last_layer;
        if (spec.first_layer >= n_layers || last >= n_layers)
            return bad_spec(spec, "layers " + std::to_string(spec.first_layer) + "-" + std::to_string(last) +
                                      " outside this model's 0-" + std::to_string(n_layers - 1));
        if (spec.merge == LayerMerge::slerp && spec.group != 2)
            return bad_spec(spec, "slerp merges pairs of layers (MiniCache); use group=2 or merge=mean");
    }
    if (types.k == KvDType::q4_0 && spec.kind != AttentionKind::latent && !is_power_of_two(shape.head_dim))
        return error(StatusCode::invalid_argument, "--kv-type k=q4_0 rotates keys with a Hadamard transform, which needs a "
                                                   "power-of-two head_dim; this model's is " + std::to_string(shape.head_dim));
    kv->rotate_k_ = types.k == KvDType::q4_0 && spec.kind != AttentionKind::latent;

    // Which layer's KV each layer reads.
    kv->owner_.resize(static_cast<size_t>(n_layers));
    for (int32_t il = 0; il < n_layers; ++il) {
        int32_t owner = il;
        if (spec.kind == AttentionKind::cross_layer) {
            const int32_t last = spec.last_layer < 0 ? n_layers - 1 : spec.last_layer;
            if (il >= spec.first_layer && il <= last) owner = spec.first_layer + (il - spec.first_layer) / spec.group * spec.group;
        }
        kv->owner_[static_cast<size_t>(il)] = owner;
        if (owner == il) kv->members_.emplace_back();
        kv->storage_of_.push_back(static_cast<int32_t>(kv->members_.size()) - 1);
        kv->members_.back().push_back(il);
    }

    KvCacheConfig config;
    config.types = types;
    config.n_layers = static_cast<int32_t>(kv->members_.size());
    config.n_kv_heads = kv->shape_.n_kv_heads;
    config.head_dim = kv->shape_.head_dim;
    config.n_tokens_per_block = n_tokens_per_block;
    WB_RETURN_IF_ERROR(validate_kv_cache_config(config));
    KvCacheConfig full_config = config;
    full_config.n_layers = n_layers;
    full_config.n_kv_heads = shape.n_kv_heads;
    full_config.head_dim = shape.head_dim;
    kv->full_bytes_per_token_ = kv_bytes_per_token(full_config);

    const uint64_t per_block = kv_bytes_per_block(config) + kv->aux_block_bytes();
    uint64_t n_blocks = std::min<uint64_t>(budget_bytes / per_block, 1u << 30);
    if (budget_bytes == 0) {
        int64_t seq_tokens = std::max(n_ctx, 1);
        if (spec.kind == AttentionKind::sliding)  // sinks + window + a step in flight, with block rounding either side
            seq_tokens = std::min<int64_t>(seq_tokens, spec.sinks + spec.window + kMaxStepTokens + 2 * n_tokens_per_block);
        const uint64_t token_blocks = (static_cast<uint64_t>(seq_tokens) + n_tokens_per_block - 1) / n_tokens_per_block;
        const bool pools = spec.kind == AttentionKind::compressed || spec.kind == AttentionKind::heavy;
        const uint64_t per_seq = token_blocks + (pools ? token_blocks / static_cast<uint64_t>(spec.block) + 1 : 0) + 1;
        n_blocks = per_seq * static_cast<uint64_t>(std::max(n_seq, 1)) + 1;
    }
    if (n_blocks < 2)
        return error(StatusCode::resource_exhausted, "--kv-budget " + std::to_string(budget_bytes >> 20) + " MiB holds " +
                                                         std::to_string(n_blocks) + " KV blocks of " + std::to_string(per_block) +
                                                         " bytes; at least 2 are needed");
    WB_ASSIGN_OR_RETURN(KvCacheManager manager, KvCacheManager::create(config, static_cast<int32_t>(n_blocks)));
    kv->manager_ = std::make_unique<KvCacheManager>(std::move(manager));
    WB_ASSIGN_OR_RETURN(kv->store_, KvStore::create(config, static_cast<int32_t>(n_blocks)));
    if (spec.kind == AttentionKind::topk)
        kv->block_minmax_.resize(static_cast<size_t>(n_blocks * kv->aux_block_bytes() / 2));
    return kv;
}

uint64_t PagedKv::aux_block_bytes() const {
    if (spec_.kind != AttentionKind::topk) return 0;
    return static_cast<uint64_t>(members_.size()) * shape_.n_kv_heads * 2 * shape_.head_dim * sizeof(uint16_t);
}

PagedKv::Sequence& PagedKv::seq_state(SeqId seq) {
    auto& slot = seqs_[seq];
    if (!slot) {
        slot = std::make_unique<Sequence>();
        slot->token_id = 2 * seq;
        slot->pooled_id = 2 * seq + 1;
    }
    return *slot;
}

int32_t PagedKv::pooled_count(int32_t t) const {
    if (spec_.kind != AttentionKind::compressed && spec_.kind != AttentionKind::heavy) return 0;
    return std::max(0, t + 1 - spec_.recent - spec_.sinks) / spec_.block;
}

int32_t PagedKv::evicted_before(int32_t t) const {
    if (spec_.kind != AttentionKind::sliding) return 0;
    const int32_t bs = manager_->n_tokens_per_block();
    const int32_t first = (spec_.sinks + bs - 1) / bs;
    const int32_t end = std::max(0, t + 1 - spec_.window) / bs;
    return std::max(0, end - first) * bs;
}

Status PagedKv::begin_step(SeqId seq, std::span<const TokenId> tokens) {
    const StepSequence one{seq, tokens};
    return begin_step(std::span(&one, 1));
}

Status PagedKv::begin_step(std::span<const StepSequence> batch) {
    if (batch.empty()) return error(StatusCode::invalid_argument, "KV cache: a step needs at least one sequence");
    for (size_t i = 0; i < batch.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (batch[i].seq == batch[j].seq)
                return error(StatusCode::invalid_argument, "KV cache: sequence " + std::to_string(batch[i].seq) + " appears twice in one step");
    if (spec_.kind == AttentionKind::latent && batch.size() > 1)
        return error(StatusCode::invalid_argument, "KV cache: a latent step holds one sequence (its keys are rebuilt per sequence)");
    if (parts_.size() < batch.size()) parts_.resize(batch.size());
    n_parts_ = 0;
    int32_t row = 0;
    for (const StepSequence& b : batch) {
        StepPart& part = parts_[static_cast<size_t>(n_parts_)];
        if (Status st = begin_part(part, b.seq, b.tokens); !st.ok()) {
            // Everything allocated for the earlier parts goes back.
            while (n_parts_ > 0) undo_part(parts_[static_cast<size_t>(--n_parts_)]);
            return st;
        }
        part.row0 = row;
        row += part.n;
        ++n_parts_;
    }
    positions_.resize(static_cast<size_t>(row));
    read_bytes_ = 0;
    for (int32_t p = 0; p < n_parts_; ++p) {
        StepPart& part = parts_[static_cast<size_t>(p)];
        for (int32_t i = 0; i < part.n; ++i) positions_[static_cast<size_t>(part.row0 + i)] = part.t0 + i;
        part.read_bytes = 0;
        build_token_plans(part);
        if (spec_.kind == AttentionKind::cross_layer && spec_.merge != LayerMerge::none) {
            part.stage_k.resize(static_cast<size_t>(spec_.group));
            part.stage_v.resize(static_cast<size_t>(spec_.group));
            const size_t rows = static_cast<size_t>(part.n) * shape_.n_kv_heads * shape_.head_dim;
            for (auto& b : part.stage_k) b.resize(rows);
            for (auto& b : part.stage_v) b.resize(rows);
        }
    }
    return Status::ok_status();
}

Status PagedKv::begin_part(StepPart& part, SeqId seq, std::span<const TokenId> tokens) {
    if (seq < 0) return error(StatusCode::invalid_argument, "KV cache: sequence ids are non-negative");
    if (tokens.empty()) return error(StatusCode::invalid_argument, "KV cache: a step needs at least one token per sequence");
    Sequence& s = seq_state(seq);
    const int32_t t0 = static_cast<int32_t>(s.tokens.size());
    const int32_t n = static_cast<int32_t>(tokens.size());
    s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
    auto undo = [&](Status st) {
        s.tokens.resize(static_cast<size_t>(t0));
        if (t0 == 0 && !manager_->has_sequence(s.token_id)) seqs_.erase(seq);
        return st;
    };
    Result<SlotAllocation> slots = manager_->allocate_slots(s.token_id, n, s.tokens);
    if (!slots.ok()) return undo(slots.status());
    const int32_t t1 = t0 + n - 1;
    const int32_t n_pool_new = pooled_count(t1) - s.n_pooled;
    if (n_pool_new > 0) {
        std::vector<TokenId> ids(static_cast<size_t>(s.n_pooled + n_pool_new));
        // Pooled entries are not tokens: negative ids keep them out of every real prompt's hash.
        for (size_t g = 0; g < ids.size(); ++g) ids[g] = -1 - static_cast<TokenId>(g);
        Result<SlotAllocation> pooled = manager_->allocate_slots(s.pooled_id, n_pool_new, ids);
        if (!pooled.ok()) {
            (void)manager_->rollback(s.token_id);
            if (t0 == 0) (void)manager_->free(s.token_id);
            return undo(pooled.status());
        }
        if (pooled->copy) store_->copy_block(pooled->copy->src, pooled->copy->dst);
    }
    if (slots->copy) {
        store_->copy_block(slots->copy->src, slots->copy->dst);
        if (!block_minmax_.empty()) {
            const size_t per = static_cast<size_t>(aux_block_bytes() / 2 / members_.size());
            for (size_t st = 0; st < members_.size(); ++st) {
                const size_t stride = block_minmax_.size() / members_.size();
                std::memcpy(&block_minmax_[st * stride + slots->copy->dst * per], &block_minmax_[st * stride + slots->copy->src * per], per * 2);
            }
        }
    }
    part.s = &s;
    part.id = seq;
    part.t0 = t0;
    part.n = n;
    return Status::ok_status();
}

void PagedKv::undo_part(StepPart& part) {
    Sequence& s = *part.s;
    (void)manager_->rollback(s.token_id);
    if (manager_->has_sequence(s.pooled_id)) (void)manager_->rollback(s.pooled_id);
    s.tokens.resize(static_cast<size_t>(part.t0));
    if (part.t0 == 0) free(part.id);  // a sequence this step created leaves no trace
    part.s = nullptr;
}

void PagedKv::write_rows(int32_t storage, Sequence& s, int32_t first_token, const float* k, const float* v, int64_t n) {
    const int32_t bs = manager_->n_tokens_per_block();
    const int64_t hd = shape_.head_dim, n_kv = shape_.n_kv_heads;
    const std::span<const BlockId> table = manager_->block_table(s.token_id);
    std::vector<float> rot(static_cast<size_t>(hd));
    const size_t mm_stride = block_minmax_.empty() ? 0 : block_minmax_.size() / members_.size();
    for (int64_t i = 0; i < n; ++i) {
        const int64_t idx = first_token + i;
        const BlockId blk = table[static_cast<size_t>(idx / bs)];
        const int32_t slot = static_cast<int32_t>(idx % bs);
        for (int64_t h = 0; h < n_kv; ++h) {
            const float* kr = k + (i * n_kv + h) * hd;
            if (rotate_k_) {
                std::copy(kr, kr + hd, rot.begin());
                hadamard_rotate(rot.data(), hd);
                kr = rot.data();
            }
            kv_encode_row(types_.k, kr, store_->k_row(storage, blk, slot, static_cast<int32_t>(h)), hd);
            kv_encode_row(types_.v, v + (i * n_kv + h) * hd, store_->v_row(storage, blk, slot, static_cast<int32_t>(h)), hd);
            if (mm_stride) {
                // The block's elementwise key range, for the top-k indexer's score bound.
                uint16_t* mm = &block_minmax_[static_cast<size_t>(storage) * mm_stride +
                                              (static_cast<size_t>(blk) * n_kv + static_cast<size_t>(h)) * 2 * hd];
                for (int64_t d = 0; d < hd; ++d) {
                    const float lo = slot == 0 ? kr[d] : std::min(kr[d], half_to_float(mm[d]));
                    const float hi = slot == 0 ? kr[d] : std::max(kr[d], half_to_float(mm[hd + d]));
                    mm[d] = float_to_half(lo);
                    mm[hd + d] = float_to_half(hi);
                }
            }
        }
    }
}

void PagedKv::pool_groups(int32_t storage, Sequence& s, int32_t g0, int32_t g1) {
    const int32_t bs = manager_->n_tokens_per_block(), m = spec_.block;
    const int64_t hd = shape_.head_dim;
    const std::span<const BlockId> tokens = manager_->block_table(s.token_id);
    const std::span<const BlockId> pooled = manager_->block_table(s.pooled_id);
    std::vector<float> acc_k(static_cast<size_t>(hd)), acc_v(static_cast<size_t>(hd)), row(static_cast<size_t>(hd));
    for (int32_t g = g0; g < g1; ++g) {
        const BlockId dst = pooled[static_cast<size_t>(g / bs)];
        for (int32_t h = 0; h < shape_.n_kv_heads; ++h) {
            uint8_t* dk = store_->k_row(storage, dst, g % bs, h);
            uint8_t* dv = store_->v_row(storage, dst, g % bs, h);
            if (m == 1) {
                // One token pooled is that token: copy its bytes, no re-rounding.
                const int32_t j = spec_.sinks + g;
                const BlockId src = tokens[static_cast<size_t>(j / bs)];
                std::memcpy(dk, store_->k_row(storage, src, j % bs, h), static_cast<size_t>(store_->k_layout().row_bytes));
                std::memcpy(dv, store_->v_row(storage, src, j % bs, h), static_cast<size_t>(store_->v_layout().row_bytes));
                continue;
            }
            // The mean of the RoPE-applied keys (and of the values) of the group's M tokens.
            std::fill(acc_k.begin(), acc_k.end(), 0.0f);
            std::fill(acc_v.begin(), acc_v.end(), 0.0f);
            for (int32_t j = spec_.sinks + g * m; j < spec_.sinks + (g + 1) * m; ++j) {
                const BlockId src = tokens[static_cast<size_t>(j / bs)];
                kv_decode_row(types_.k, store_->k_row(storage, src, j % bs, h), row.data(), hd);
                for (int64_t d = 0; d < hd; ++d) acc_k[d] += row[d];
                kv_decode_row(types_.v, store_->v_row(storage, src, j % bs, h), row.data(), hd);
                for (int64_t d = 0; d < hd; ++d) acc_v[d] += row[d];
            }
            for (int64_t d = 0; d < hd; ++d) acc_k[d] /= static_cast<float>(m), acc_v[d] /= static_cast<float>(m);
            kv_encode_row(types_.k, acc_k.data(), dk, hd);
            kv_encode_row(types_.v, acc_v.data(), dv, hd);
        }
    }
}

void PagedKv::write(int32_t layer, const float* k, const float* v, ThreadPool&) {
    const size_t row = static_cast<size_t>(shape_.n_kv_heads) * shape_.head_dim;
    for (int32_t p = 0; p < n_parts_; ++p) {
        StepPart& part = parts_[static_cast<size_t>(p)];
        write_part(layer, part, k + part.row0 * row, v + part.row0 * row);
    }
}

void PagedKv::write_part(int32_t layer, StepPart& part, const float* k, const float* v) {
    Sequence& s = *part.s;
    const int32_t step_t0 = part.t0, step_n = part.n;
    const int32_t storage = storage_of_[static_cast<size_t>(layer)];
    const auto& group = members_[static_cast<size_t>(storage)];
    const size_t row = static_cast<size_t>(shape_.n_kv_heads) * shape_.head_dim;
    if (spec_.kind == AttentionKind::cross_layer && spec_.merge != LayerMerge::none && group.size() > 1) {
        // Each member attends over the merged past plus its own exact K/V of this step; the
        // group's merge of this step's tokens is stored once its last member has run.
        const size_t m = static_cast<size_t>(std::find(group.begin(), group.end(), layer) - group.begin());
        std::copy(k, k + step_n * row, part.stage_k[m].begin());
        std::copy(v, v + step_n * row, part.stage_v[m].begin());
        if (rotate_k_)
            for (int64_t r = 0; r < static_cast<int64_t>(step_n) * shape_.n_kv_heads; ++r)
                hadamard_rotate(part.stage_k[m].data() + r * shape_.head_dim, shape_.head_dim);
        if (m + 1 < group.size()) return;
        std::vector<float> mk(step_n * row), mv(step_n * row);
        const int64_t hd = shape_.head_dim;
        for (size_t r = 0; r < static_cast<size_t>(step_n) * shape_.n_kv_heads; ++r) {
            for (auto [stage, out] : {std::pair{&part.stage_k, &mk}, {&part.stage_v, &mv}}) {
                float* o = out->data() + r * hd;
                if (spec_.merge == LayerMerge::slerp) {
                    // MiniCache: interpolate the directions halfway on the sphere, keep the mean norm.
                    const float* a = (*stage)[0].data() + r * hd;
                    const float* b = (*stage)[1].data() + r * hd;
                    double na = 0, nb = 0, dot = 0;
                    for (int64_t d = 0; d < hd; ++d) na += a[d] * a[d], nb += b[d] * b[d], dot += a[d] * b[d];
                    na = std::sqrt(na), nb = std::sqrt(nb);
                    const double cosw = (na > 0 && nb > 0) ? std::clamp(dot / (na * nb), -1.0, 1.0) : 1.0;
                    const double omega = std::acos(cosw), norm = 0.5 * (na + nb);
                    const double wa = omega < 1e-4 ? 0.5 : std::sin(0.5 * omega) / std::sin(omega);
                    for (int64_t d = 0; d < hd; ++d) {
                        const double ua = na > 0 ? a[d] / na : 0, ub = nb > 0 ? b[d] / nb : 0;
                        o[d] = static_cast<float>(norm * wa * (ua + ub));
                    }
                    continue;
                }
                for (int64_t d = 0; d < hd; ++d) {
                    float sum = 0;
                    for (size_t mm = 0; mm < group.size(); ++mm) sum += (*stage)[mm][r * hd + d];
                    o[d] = sum / static_cast<float>(group.size());
                }
            }
        }
        // Staged keys are already rotated; store them as they are.
        const bool rot = rotate_k_;
        rotate_k_ = false;
        write_rows(storage, s, step_t0, mk.data(), mv.data(), step_n);
        rotate_k_ = rot;
        return;
    }
    if (owner_[static_cast<size_t>(layer)] != layer) return;  // merge=none: the owner wrote it
    write_rows(storage, s, step_t0, k, v, step_n);
    if (spec_.kind == AttentionKind::sliding && step_t0 < spec_.sinks) {
        const size_t n_sinks = static_cast<size_t>(spec_.sinks);
        s.sink_k.resize(members_.size() * n_sinks * row);
        for (int32_t i = 0; i < step_n && step_t0 + i < spec_.sinks; ++i)
            std::copy(k + i * row, k + (i + 1) * row,
                      s.sink_k.begin() + static_cast<std::ptrdiff_t>((storage * n_sinks + static_cast<size_t>(step_t0 + i)) * row));
    }
    const int32_t g1 = pooled_count(step_t0 + step_n - 1);
    if (g1 > s.n_pooled) pool_groups(storage, s, s.n_pooled, g1);
}

void PagedKv::read_rows(int32_t layer, int32_t n, float* k_out, float* v_out) const {
    const Sequence& s = *parts_.front().s;
    const int32_t storage = storage_of_[static_cast<size_t>(layer)];
    const int32_t bs = manager_->n_tokens_per_block();
    const int64_t row = static_cast<int64_t>(shape_.n_kv_heads) * shape_.head_dim;
    const std::span<const BlockId> table = manager_->block_table(s.token_id);
    for (int32_t j = 0; j < n; ++j) {
        const BlockId blk = table[static_cast<size_t>(j / bs)];
        for (int32_t h = 0; h < shape_.n_kv_heads; ++h) {
            kv_decode_row(types_.k, store_->k_row(storage, blk, j % bs, h), k_out + j * row + h * shape_.head_dim, shape_.head_dim);
            kv_decode_row(types_.v, store_->v_row(storage, blk, j % bs, h), v_out + j * row + h * shape_.head_dim, shape_.head_dim);
        }
    }
}

void PagedKv::release_unreachable(Sequence& s) {
    const int32_t bs = manager_->n_tokens_per_block();
    const int32_t n = static_cast<int32_t>(s.tokens.size());
    int32_t first = s.release_cursor, end = first;
    if (spec_.kind == AttentionKind::sliding) {
        // Tokens between the sinks and the next query's window are read by no future query.
        first = std::max(first, (spec_.sinks + bs - 1) / bs);
        end = std::max(0, n + 1 - spec_.window) / bs;
    } else if (spec_.kind == AttentionKind::compressed || spec_.kind == AttentionKind::heavy) {
        // Pooled tokens are read through their pooled entry; the sinks' block stays.
        first = std::max(first, (spec_.sinks + bs - 1) / bs);
        end = (spec_.sinks + s.n_pooled * spec_.block) / bs;
    }
    if (end > first) {
        (void)manager_->release_blocks(s.token_id, first, end);
        s.release_cursor = end;
        s.lossy = true;
    }
}

void PagedKv::finish_step() {
    for (int32_t p = 0; p < n_parts_; ++p) {
        StepPart& part = parts_[static_cast<size_t>(p)];
        Sequence& s = *part.s;
        const int32_t g1 = pooled_count(part.t0 + part.n - 1);
        if (g1 > s.n_pooled) s.n_pooled = g1, s.lossy = true;
        (void)manager_->commit(s.token_id);
        if (manager_->has_sequence(s.pooled_id)) (void)manager_->commit(s.pooled_id);
        release_unreachable(s);
        s.read_bytes_last_step = part.read_bytes;
        part.s = nullptr;
    }
    n_parts_ = 0;
    peak_ = std::max(peak_, usage().bytes_in_use);
}

void PagedKv::abort_step() {
    while (n_parts_ > 0) undo_part(parts_[static_cast<size_t>(--n_parts_)]);
}

int32_t PagedKv::keep_prefix(SeqId seq, int32_t n_common) {
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return 0;
    Sequence& s = *it->second;
    const int32_t n = static_cast<int32_t>(s.tokens.size());
    n_common = std::clamp(n_common, 0, n);
    if (n_common == n) return n;
    if (s.lossy || n_common == 0) {
        free(seq);
        return 0;
    }
    (void)manager_->truncate(s.token_id, n_common);
    s.tokens.resize(static_cast<size_t>(n_common));
    const int32_t bs = manager_->n_tokens_per_block();
    if (!block_minmax_.empty() && n_common % bs != 0) {
        // The partial block's key range must forget the dropped tokens: rebuild it from what stays.
        const BlockId blk = manager_->block_table(s.token_id)[static_cast<size_t>(n_common / bs)];
        const int64_t hd = shape_.head_dim, n_kv = shape_.n_kv_heads;
        const size_t stride = block_minmax_.size() / members_.size();
        std::vector<float> row(static_cast<size_t>(hd));
        for (size_t st = 0; st < members_.size(); ++st)
            for (int64_t h = 0; h < n_kv; ++h) {
                uint16_t* mm = &block_minmax_[st * stride + (static_cast<size_t>(blk) * n_kv + static_cast<size_t>(h)) * 2 * hd];
                for (int32_t slot = 0; slot < n_common % bs; ++slot) {
                    kv_decode_row(types_.k, store_->k_row(static_cast<int32_t>(st), blk, slot, static_cast<int32_t>(h)), row.data(), hd);
                    for (int64_t d = 0; d < hd; ++d) {
                        mm[d] = float_to_half(slot == 0 ? row[d] : std::min(row[d], half_to_float(mm[d])));
                        mm[hd + d] = float_to_half(slot == 0 ? row[d] : std::max(row[d], half_to_float(mm[hd + d])));
                    }
                }
            }
    }
    return n_common;
}

int32_t PagedKv::adopt_cached_prefix(SeqId seq, std::span<const TokenId> prompt) {
    if (seqs_.contains(seq) || seq < 0) return 0;
    if (spec_.kind == AttentionKind::sliding || spec_.kind == AttentionKind::compressed || spec_.kind == AttentionKind::heavy) return 0;
    // Merged cross-layer blocks depend on how their prompt was chunked (a step's tokens see
    // each other unmerged): adopting them would make a prompt's output depend on history.
    if (spec_.kind == AttentionKind::cross_layer && spec_.merge != LayerMerge::none) return 0;
    const CachedPrefix prefix = manager_->find_cached_prefix(prompt);
    if (prefix.n_tokens == 0) return 0;
    Sequence& s = seq_state(seq);
    if (!manager_->allocate_slots(s.token_id, 0, prompt, prefix).ok()) {
        seqs_.erase(seq);
        return 0;
    }
    (void)manager_->commit(s.token_id);
    s.tokens.assign(prompt.begin(), prompt.begin() + prefix.n_tokens);
    peak_ = std::max(peak_, usage().bytes_in_use);
    return prefix.n_tokens;
}

void PagedKv::free(SeqId seq) {
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return;
    (void)manager_->free(it->second->token_id);
    if (manager_->has_sequence(it->second->pooled_id)) (void)manager_->free(it->second->pooled_id);
    seqs_.erase(it);
}

Status PagedKv::fork(SeqId parent, SeqId child) {
    const auto it = seqs_.find(parent);
    if (it == seqs_.end()) return error(StatusCode::not_found, "KV cache: no sequence " + std::to_string(parent));
    if (seqs_.contains(child)) return error(StatusCode::invalid_argument, "KV cache: sequence " + std::to_string(child) + " exists");
    const Sequence& p = *it->second;
    WB_RETURN_IF_ERROR(manager_->fork(p.token_id, 2 * child));
    if (manager_->has_sequence(p.pooled_id)) WB_RETURN_IF_ERROR(manager_->fork(p.pooled_id, 2 * child + 1));
    auto c = std::make_unique<Sequence>(p);
    c->token_id = 2 * child;
    c->pooled_id = 2 * child + 1;
    seqs_[child] = std::move(c);
    return Status::ok_status();
}

int32_t PagedKv::n_tokens(SeqId seq) const {
    const auto it = seqs_.find(seq);
    return it == seqs_.end() ? 0 : static_cast<int32_t>(it->second->tokens.size());
}

int64_t PagedKv::n_free_tokens() const {
    return static_cast<int64_t>(manager_->pool().n_free()) * manager_->n_tokens_per_block();
}

int32_t PagedKv::n_tokens_per_block() const { return manager_->n_tokens_per_block(); }

KvUsage PagedKv::usage() const {
    KvUsage u;
    const BlockPool& pool = manager_->pool();
    const uint64_t per_block = manager_->bytes_per_block() + aux_block_bytes();
    u.bytes_in_use = static_cast<uint64_t>(pool.n_usable() - pool.n_free()) * per_block;
    u.bytes_peak = std::max(peak_, u.bytes_in_use);
    u.bytes_allocated = static_cast<uint64_t>(pool.n_blocks()) * per_block;
    u.bytes_read_last_step = read_bytes_;
    const uint64_t bs = static_cast<uint64_t>(manager_->n_tokens_per_block());
    for (const auto& [id, s] : seqs_) {
        u.n_tokens += static_cast<int32_t>(s->tokens.size());
        u.bytes_full += (s->tokens.size() + bs - 1) / bs * bs * full_bytes_per_token_;
    }
    return u;
}

KvUsage PagedKv::usage(SeqId seq) const {
    KvUsage u;
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return u;
    const Sequence& s = *it->second;
    const uint64_t per_block = manager_->bytes_per_block() + aux_block_bytes();
    u.bytes_in_use = static_cast<uint64_t>(manager_->n_live_blocks(s.token_id) + manager_->n_live_blocks(s.pooled_id)) * per_block;
    const uint64_t bs = static_cast<uint64_t>(manager_->n_tokens_per_block());
    u.bytes_full = (s.tokens.size() + bs - 1) / bs * bs * full_bytes_per_token_;
    u.bytes_read_last_step = s.read_bytes_last_step;
    u.n_tokens = static_cast<int32_t>(s.tokens.size());
    return u;
}

std::vector<KvBlockUse> PagedKv::block_map(SeqId seq, int32_t& n_blocks) const {
    n_blocks = 0;
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return {};
    const Sequence& s = *it->second;
    const std::span<const BlockId> table = manager_->block_table(s.token_id);
    n_blocks = static_cast<int32_t>(table.size());
    const bool pools = spec_.kind == AttentionKind::compressed || spec_.kind == AttentionKind::heavy;
    std::vector<KvBlockUse> map(static_cast<size_t>(shape_.n_layers) * table.size());
    for (int32_t il = 0; il < shape_.n_layers; ++il) {
        const bool borrowed = owner_[static_cast<size_t>(il)] != il && spec_.merge == LayerMerge::none;
        const std::vector<bool>* read = static_cast<size_t>(il) < s.read_last.size() ? &s.read_last[static_cast<size_t>(il)] : nullptr;
        for (size_t b = 0; b < table.size(); ++b) {
            KvBlockUse u = KvBlockUse::live;
            if (table[b] == kNullBlock) u = pools ? KvBlockUse::compressed : KvBlockUse::evicted;
            else if (borrowed) u = KvBlockUse::borrowed;
            else if (read && b < read->size() && !(*read)[b]) u = KvBlockUse::skipped;
            else if (manager_->pool().ref_count(table[b]) > 1) u = KvBlockUse::shared;
            map[static_cast<size_t>(il) * table.size() + b] = u;
        }
    }
    return map;
}

std::vector<uint64_t> PagedKv::layer_bytes(SeqId seq) const {
    std::vector<uint64_t> out(static_cast<size_t>(shape_.n_layers), 0);
    const auto it = seqs_.find(seq);
    if (it == seqs_.end()) return out;
    const uint64_t per_layer_block = (manager_->bytes_per_block() + aux_block_bytes()) / members_.size();
    const uint64_t blocks = static_cast<uint64_t>(manager_->n_live_blocks(it->second->token_id) +
                                                  manager_->n_live_blocks(it->second->pooled_id));
    for (const auto& group : members_) out[static_cast<size_t>(group.front())] = blocks * per_layer_block;
    return out;
}

}  // namespace workbench
