// A model's trained local/global layers under a caller's layout: the local layers keep their
// window, the caller's terms run on the global layers (see workbench/attention.h).
#include <algorithm>

#include "attention/attention_policy.h"

namespace workbench {
namespace {

using LayerRanges = std::vector<std::pair<int32_t, int32_t>>;

LayerRanges ranges_of(const std::vector<int32_t>& layers) {
    LayerRanges out;
    for (int32_t il : layers) {
        if (!out.empty() && out.back().second + 1 == il) out.back().second = il;
        else out.emplace_back(il, il);
    }
    return out;
}

std::string ranges_name(const LayerRanges& ranges) {
    std::string out;
    for (const auto& [a, b] : ranges)
        out.append(out.empty() ? "" : "+").append(a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b));
    return out;
}

std::vector<int32_t> global_layers(const NativeAttention& native, int32_t n_layers) {
    std::vector<int32_t> out;
    for (int32_t il = 0; il < n_layers; ++il)
        if (!std::binary_search(native.local_layers.begin(), native.local_layers.end(), il)) out.push_back(il);
    return out;
}

}  // namespace

std::string native_attention_name(const NativeAttention& native, int32_t n_layers) {
    if (native.local_layers.empty()) return {};
    return std::string("local layers ").append(ranges_name(ranges_of(native.local_layers)))
        .append(" (window ").append(std::to_string(native.window)).append("), global ")
        .append(ranges_name(ranges_of(global_layers(native, n_layers))));
}

Result<AttentionLayout> apply_native_attention(const AttentionLayout& layout, const NativeAttention& native, int32_t n_layers) {
    if (native.local_layers.empty()) return layout;
    const std::string pattern = native_attention_name(native, n_layers);
    auto refuse = [&](const AttentionTerm& t, const std::string& why) {
        return error(StatusCode::invalid_argument, "--attention '" + attention_layout_name(layout) + "': " +
                                                       attention_kind_name(t.spec.kind) + " " + why + " (this model: " + pattern + ")");
    };
    std::vector<int32_t> named;  // global layers that terms name explicitly
    for (const AttentionTerm& t : layout) {
        if (t.spec.kind == AttentionKind::latent) return refuse(t, "runs on every layer or none, and the local layers keep their trained window");
        if (t.spec.kind == AttentionKind::cross_layer)
            return refuse(t, "shares one cache between neighbouring layers, which attend differently here");
        for (const auto& [a, b] : t.layers)
            for (int32_t il = a; il <= b; ++il) {
                if (std::binary_search(native.local_layers.begin(), native.local_layers.end(), il))
                    return refuse(t, "names layer " + std::to_string(il) + ", a trained local layer; variants apply to the global layers");
                named.push_back(il);
            }
    }
    std::vector<int32_t> rest;
    for (int32_t il : global_layers(native, n_layers))
        if (std::find(named.begin(), named.end(), il) == named.end()) rest.push_back(il);
    AttentionLayout out;
    for (const AttentionTerm& t : layout) {
        if (t.spec.kind == AttentionKind::full) continue;  // global layers no term takes run full attention
        AttentionTerm term = t;
        if (term.layers.empty()) {
            if (rest.empty()) return refuse(t, "is left no global layer: the others name them all");
            term.layers = ranges_of(rest);
        }
        out.push_back(std::move(term));
    }
    AttentionSpec local = default_attention_spec(AttentionKind::sliding);
    local.window = native.window;
    local.sinks = 0;
    out.push_back({local, ranges_of(native.local_layers)});
    return out;
}

}  // namespace workbench
