// predict_kv: each group's policy formula (AttentionPolicy::footprint) priced with the block and
// row bytes the engine's store would use for that group; and the KV type names the forms offer.
#include <algorithm>

#include "attention/attention_policy.h"
#include "kernels/cpu/token_codes.h"
#include "kv_blocks/kv_dtype.h"

namespace workbench {

const std::vector<std::string>& kv_type_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (KvDType t : {KvDType::f32, KvDType::f16, KvDType::bf16, KvDType::q8_0, KvDType::q4_0, KvDType::fp8, KvDType::q2_0})
            out.emplace_back(kv_dtype_name(t));
        return out;
    }();
    return names;
}

Result<KvTypesParts> split_kv_types(std::string_view spec) {
    WB_ASSIGN_OR_RETURN(const KvTypes t, parse_kv_types(spec));
    return KvTypesParts{std::string(kv_dtype_name(t.k)), std::string(kv_dtype_name(t.v)), t.recent};
}

std::string kv_types_spec(std::string_view k_type, std::string_view v_type, int32_t recent) {
    std::string spec = k_type == v_type ? std::string(k_type) : "k=" + std::string(k_type) + ",v=" + std::string(v_type);
    if (recent > 0) spec += ",recent=" + std::to_string(recent);
    return spec;
}

bool kv_type_is_quantized(std::string_view type) {
    const Result<KvTypes> t = parse_kv_types(type);
    return t.ok() && kv_dtype_layout(t->k).block_values > 1;
}

Result<KvPrediction> predict_kv(const AttentionLayout& layout, std::string_view kv_types, const KvGeometry& g, int64_t n_tokens) {
    WB_ASSIGN_OR_RETURN(const KvTypes types, parse_kv_types(kv_types.empty() ? "f16" : kv_types));
    if (g.n_layers < 1 || g.n_kv_heads < 1 || g.head_dim < 1 || g.block_tokens < 1)
        return error(StatusCode::invalid_argument, "KV geometry: layers, KV heads, head_dim and block must be positive");
    if (layout.empty()) return error(StatusCode::invalid_argument, "--attention: no policy given");
    WB_ASSIGN_OR_RETURN(const AttentionLayout runs, apply_native_attention(layout, g.native, g.n_layers));
    WB_ASSIGN_OR_RETURN(const std::vector<LayerGroupPlan> groups, resolve_attention_layout(runs, g.n_layers));
    PagedKvShape model;
    model.n_layers = g.n_layers;
    model.n_kv_heads = g.n_kv_heads;
    model.head_dim = g.head_dim;
    model.n_head = g.n_head > 0 ? g.n_head : g.n_kv_heads;
    model.rope.n_rot = g.n_rot > 0 ? g.n_rot : g.head_dim;
    model.values_in_keys = g.values_in_keys;
    model.head_dim_v = g.head_dim_v;
    model.rope_offset = g.rope_offset;
    if (g.values_in_keys && types.k != types.v)
        return error(StatusCode::invalid_argument, "--kv-type: this model's values are part of its keys (latent attention), so K and V take one type");
    const uint64_t v_share = g.values_in_keys ? 0 : 1;   // V rows stored apart from K rows
    const int64_t bs = g.block_tokens;
    const int64_t n = std::max<int64_t>(0, n_tokens);
    KvPrediction out;
    const uint64_t full_row = kv_bytes(types.k, static_cast<uint64_t>(g.head_dim)) +
                              v_share * kv_bytes(types.v, static_cast<uint64_t>(g.head_dim_v > 0 ? g.head_dim_v : g.head_dim));
    out.bytes_full = static_cast<uint64_t>((n + bs - 1) / bs * bs) * full_row * static_cast<uint64_t>(g.n_kv_heads * g.n_layers);
    // Full attention at the same --kv-type reads its recent window's tokens in f16.
    const int64_t n_recent = std::min<int64_t>(types.recent, n);
    out.bytes_full_read = (static_cast<uint64_t>(n - n_recent) * full_row + static_cast<uint64_t>(n_recent) * 4 * static_cast<uint64_t>(g.head_dim)) *
                          static_cast<uint64_t>(g.n_kv_heads * g.n_layers);
    for (const LayerGroupPlan& plan : groups) {
        const std::unique_ptr<AttentionPolicy> policy = make_attention_policy(plan.spec);
        WB_RETURN_IF_ERROR(check_value_rows(*policy, model, types));
        WB_RETURN_IF_ERROR(policy->check(model, types));
        WB_RETURN_IF_ERROR(check_rotated_rows(*policy, model, types));
        WB_RETURN_IF_ERROR(check_recent_window(*policy, types));
        // The group's storage as KvGroup::create lays it out: one storage layer per owner.
        KvArena arena;
        arena.types = types;
        arena.shape = policy->stored_shape(model);
        arena.tokens_per_block = static_cast<int32_t>(bs);
        int64_t n_model_layers = 0;
        for (int32_t il = 0; il < g.n_layers; ++il) {
            if (!plan.layers.empty() && std::find(plan.layers.begin(), plan.layers.end(), il) == plan.layers.end()) continue;
            ++n_model_layers;
            if (policy->owner_layer(il, g.n_layers) == il) arena.members.push_back({il});
        }
        const uint64_t n_kv = static_cast<uint64_t>(arena.shape.n_kv_heads);
        const uint64_t k_row = kv_bytes(types.k, static_cast<uint64_t>(arena.shape.head_dim));
        // The group's own rows may hold their values inside the keys (the absorbed latent) where the model's do not.
        const uint64_t v_row = (arena.shape.values_in_keys ? 0 : 1) * kv_bytes(types.v, static_cast<uint64_t>(arena.shape.value_dim_of(0)));
        const uint64_t block_bytes = static_cast<uint64_t>(bs) * n_kv * (k_row + v_row) * arena.members.size() +
                                     policy->aux_bytes_per_block(arena);
        const AttentionPolicy::Footprint f = policy->footprint(n, static_cast<int32_t>(bs));
        out.blocks_held += f.token_blocks + f.pooled_blocks;
        out.bytes_held += static_cast<uint64_t>(f.token_blocks + f.pooled_blocks) * block_bytes;
        // The recent window: a ring per sequence and storage layer, from its first token; the last
        // query reads its last tokens from it in f16 (where the policy reads them at all).
        if (n > 0) out.bytes_held += recent_ring_bytes_per_layer(types, arena.shape) * arena.members.size();
        const int64_t f16_entries = std::min<int64_t>({types.recent, f.entries_read, n});
        using IndexRow = AttentionPolicy::Footprint::IndexRow;
        const uint64_t index_row = f.index_row == IndexRow::key          ? k_row
                                   : f.index_row == IndexRow::token_code ? static_cast<uint64_t>(token_code_bytes(arena.shape.head_dim))
                                                                         : 2 * static_cast<uint64_t>(arena.shape.head_dim) * 2;
        const uint64_t read_per_layer = static_cast<uint64_t>(f.entries_read - f16_entries) * (k_row + v_row) * n_kv +
                                        static_cast<uint64_t>(f16_entries) * 4 * static_cast<uint64_t>(arena.shape.head_dim) * n_kv +
                                        static_cast<uint64_t>(f.index_rows_read) * index_row * n_kv;
        out.bytes_read += read_per_layer * static_cast<uint64_t>(n_model_layers);
        if (!f.note.empty() && out.note.find(f.note) == std::string::npos) out.note += (out.note.empty() ? "" : "; ") + f.note;
    }
    return out;
}

}  // namespace workbench
