// What every policy starts from: full attention's behaviour (each query reads tokens [0, t], each
// layer writes its own rows, nothing is released), and the store helpers policies share.
#include "attention/attention_policy.h"

#include <algorithm>

#include "kv_blocks/kv_row_codec.h"

namespace workbench {

KvStreamView KvArena::token_stream(int32_t storage, const KvSequence& s) const {
    KvStreamView v;
    v.k_base = store->k_base(storage);
    v.v_base = store->v_base(storage);
    v.blocks = manager->block_table(s.token_id).data();
    v.block_tokens = manager->n_tokens_per_block();
    v.k = store->k_layout(storage);
    v.v = store->v_layout(storage);
    return v;
}

KvStreamView KvArena::pooled_stream(int32_t storage, const KvSequence& s, float score_bias) const {
    KvStreamView v = token_stream(storage, s);
    v.blocks = manager->block_table(s.pooled_id).data();
    v.score_bias = score_bias;
    return v;
}

KvStreamView KvArena::f32_stream(const float* k, const float* v, int32_t n_rows) const {
    return flat_f32_stream(k, v, n_rows, shape.n_kv_heads, shape.head_dim);   // policies with per-layer widths build none
}

void write_token_rows(KvArena& arena, int32_t storage, const KvSequence& s, int32_t first_token, const float* k,
                      const float* v, int64_t n, bool rotate, KeyRowObserver* observer) {
    write_rows(arena, storage, arena.token_table(s), first_token, k, v, n, rotate, observer);
}

void write_rows(KvArena& arena, int32_t storage, std::span<const BlockId> table, int32_t first, const float* k, const float* v,
                int64_t n, bool rotate, KeyRowObserver* observer) {
    const int32_t bs = arena.block_tokens();
    const int64_t hd = arena.shape.head_dim_of(storage), hdv = arena.shape.value_dim_of(storage), n_kv = arena.shape.n_kv_heads;
    std::vector<float> rot(static_cast<size_t>(hd));
    for (int64_t i = 0; i < n; ++i) {
        const int64_t idx = first + i;
        const BlockId blk = table[static_cast<size_t>(idx / bs)];
        const int32_t slot = static_cast<int32_t>(idx % bs);
        for (int64_t h = 0; h < n_kv; ++h) {
            const float* kr = k + (i * n_kv + h) * hd;
            if (rotate) {
                std::copy(kr, kr + hd, rot.begin());
                hadamard_rotate(rot.data(), hd);
                kr = rot.data();
            }
            kv_encode_row(arena.types.k, kr, arena.store->k_row(storage, blk, slot, static_cast<int32_t>(h)), hd);
            if (!arena.store->values_in_keys())
                kv_encode_row(arena.types.v, v + (i * n_kv + h) * hdv, arena.store->v_row(storage, blk, slot, static_cast<int32_t>(h)), hdv);
            if (observer) observer->key_row(storage, blk, slot, static_cast<int32_t>(h), kr);
        }
        arena.store->note_written(storage, blk);
    }
}

Status AttentionPolicy::check(const PagedKvShape&, KvTypes) const { return Status::ok_status(); }

Status check_recent_window(const AttentionPolicy& policy, KvTypes types) {
    if (types.recent == 0 || policy.reads_token_rows()) return Status::ok_status();
    return error(StatusCode::invalid_argument, "--kv-type recent=" + std::to_string(types.recent) + ": " +
                                                   std::string(attention_kind_name(policy.spec().kind)) +
                                                   " attention stores rows that are not the layer's own tokens, so they cannot "
                                                   "be kept in f16 beside the cache; drop recent=");
}

Status check_rotated_rows(const AttentionPolicy& policy, const PagedKvShape& shape, KvTypes types) {
    const bool k = kv_type_rotates_rows(types.k), v = kv_type_rotates_rows(types.v);
    const int64_t hd = shape.head_dim;
    if (!(k || v) || !policy.rotates_low_bit_rows() || (hd > 0 && (hd & (hd - 1)) == 0)) return Status::ok_status();
    return error(StatusCode::invalid_argument, "--kv-type " + kv_types_name(types) + ": " + std::string(kv_dtype_name(k ? types.k : types.v)) +
                                                   " rows are rotated with a Hadamard transform, which needs a power-of-two head_dim; "
                                                   "this model's is " + std::to_string(hd));
}

Status check_value_rows(const AttentionPolicy& policy, const PagedKvShape& shape, KvTypes types) {
    if (shape.head_dim_v == 0 || (shape.head_dim_v == shape.head_dim && !shape.values_in_keys)) return Status::ok_status();
    const AttentionSpec& spec = policy.spec();
    const std::string kind(attention_kind_name(spec.kind));
    const std::string why = shape.values_in_keys ? "this model's values are part of its keys (latent attention)"
                                                 : "this model's values are narrower than its keys (latent attention expanded per head)";
    if (spec.kind == AttentionKind::latent)
        return error(StatusCode::invalid_argument, "latent: this model's attention is latent already (its KV rows are " +
                                                       std::to_string(shape.head_dim_v) + "-value latents and a RoPE key); use full attention");
    if (spec.kind == AttentionKind::cross_layer && spec.merge != LayerMerge::none)
        return error(StatusCode::invalid_argument, "cross_layer:merge: " + why + ", and a merge blends rows of one width; use merge=none");
    if (shape.values_in_keys && (spec.kind == AttentionKind::compressed || spec.kind == AttentionKind::heavy) && spec.pool == PoolMode::max)
        return error(StatusCode::invalid_argument, kind + ":pool=max: " + why + ", and the largest key per channel is no value; "
                                                          "use pool=mean or pool=weighted");
    if (types.recent > 0)
        return error(StatusCode::invalid_argument, "--kv-type recent=" + std::to_string(types.recent) + ": " + why +
                                                       ", which the f16 window does not hold; drop recent=");
    return Status::ok_status();
}

uint64_t recent_ring_bytes_per_layer(KvTypes types, const PagedKvShape& stored) {
    if (types.recent == 0) return 0;
    // K and V, f16.
    return static_cast<uint64_t>(types.recent + kRecentRollback) * static_cast<uint64_t>(stored.n_kv_heads) *
           static_cast<uint64_t>(stored.head_dim) * 2 * 2;
}

void AttentionPolicy::begin_part(const KvArena&, StepPart& part) {
    AttendPlan& p = part.token_plan;
    p.clear();
    for (int32_t i = 0; i < part.n; ++i) {
        p.add({kTokenStream, 0, part.t0 + i + 1});
        p.close_list();
    }
}

void AttentionPolicy::write(KvArena& arena, int32_t layer, StepPart& part, const float* k, const float* v) {
    if (arena.owner[static_cast<size_t>(layer)] != layer) return;  // it reads another layer's KV
    write_token_rows(arena, arena.storage_of[static_cast<size_t>(layer)], *part.s, part.t0, k, v, part.n, arena.rotate_k);
}

AttentionPolicy::Footprint AttentionPolicy::footprint(int64_t n_tokens, int32_t block_tokens) const {
    const int64_t bs = block_tokens;
    Footprint f;
    f.token_blocks = (n_tokens + bs - 1) / bs;
    f.entries_read = n_tokens;
    return f;
}

}  // namespace workbench
