// predict_kv: each group's policy formula (AttentionPolicy::footprint) priced with the block and
// row bytes the engine's store would use for that group; and the KV type names the forms offer.
#include <algorithm>

#include "attention/attention_policy.h"
#include "kv_blocks/kv_dtype.h"

namespace workbench {

const std::vector<std::string>& kv_type_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (KvDType t : {KvDType::f32, KvDType::f16, KvDType::bf16, KvDType::q8_0, KvDType::q4_0, KvDType::fp8})
            out.emplace_back(kv_dtype_name(t));
        return out;
    }();
    return names;
}

Result<std::pair<std::string, std::string>> split_kv_types(std::string_view spec) {
    WB_ASSIGN_OR_RETURN(const KvTypes t, parse_kv_types(spec));
    return std::pair{std::string(kv_dtype_name(t.k)), std::string(kv_dtype_name(t.v))};
}

std::string kv_types_spec(std::string_view k_type, std::string_view v_type) {
    return k_type == v_type ? std::string(k_type) : "k=" + std::string(k_type) + ",v=" + std::string(v_type);
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
    const int64_t bs = g.block_tokens;
    const int64_t n = std::max<int64_t>(0, n_tokens);
    KvPrediction out;
    const uint64_t full_row = kv_bytes(types.k, static_cast<uint64_t>(g.head_dim)) + kv_bytes(types.v, static_cast<uint64_t>(g.head_dim));
    out.bytes_full = static_cast<uint64_t>((n + bs - 1) / bs * bs) * full_row * static_cast<uint64_t>(g.n_kv_heads * g.n_layers);
    out.bytes_full_read = static_cast<uint64_t>(n) * full_row * static_cast<uint64_t>(g.n_kv_heads * g.n_layers);
    for (const LayerGroupPlan& plan : groups) {
        const std::unique_ptr<AttentionPolicy> policy = make_attention_policy(plan.spec);
        WB_RETURN_IF_ERROR(policy->check(model, types));
        // The group's storage as KvGroup::create lays it out: one storage layer per owner.
        KvArena arena;
        arena.types = types;
        arena.shape = policy->stored_shape(model);
        int64_t n_model_layers = 0;
        for (int32_t il = 0; il < g.n_layers; ++il) {
            if (!plan.layers.empty() && std::find(plan.layers.begin(), plan.layers.end(), il) == plan.layers.end()) continue;
            ++n_model_layers;
            if (policy->owner_layer(il, g.n_layers) == il) arena.members.push_back({il});
        }
        const uint64_t n_kv = static_cast<uint64_t>(arena.shape.n_kv_heads);
        const uint64_t k_row = kv_bytes(types.k, static_cast<uint64_t>(arena.shape.head_dim));
        const uint64_t v_row = kv_bytes(types.v, static_cast<uint64_t>(arena.shape.head_dim));
        const uint64_t block_bytes = static_cast<uint64_t>(bs) * n_kv * (k_row + v_row) * arena.members.size() +
                                     policy->aux_bytes_per_block(arena);
        const AttentionPolicy::Footprint f = policy->footprint(n, static_cast<int32_t>(bs));
        out.blocks_held += f.token_blocks + f.pooled_blocks;
        out.bytes_held += static_cast<uint64_t>(f.token_blocks + f.pooled_blocks) * block_bytes;
        const uint64_t index_row = f.index_rows_are_keys ? k_row : 2 * static_cast<uint64_t>(arena.shape.head_dim) * 2;
        const uint64_t read_per_layer = static_cast<uint64_t>(f.entries_read) * (k_row + v_row) * n_kv +
                                        static_cast<uint64_t>(f.index_rows_read) * index_row * n_kv;
        out.bytes_read += read_per_layer * static_cast<uint64_t>(n_model_layers);
        if (!f.note.empty() && out.note.find(f.note) == std::string::npos) out.note += (out.note.empty() ? "" : "; ") + f.note;
    }
    return out;
}

}  // namespace workbench
