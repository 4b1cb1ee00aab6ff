// Cross-layer sharing's calibration: every pair of neighbouring layers merged alone, scored
// against full attention; the cheapest pairs, never overlapping, share.
#include "workbench/calibration.h"

#include <algorithm>
#include <numeric>

#include "workbench/engine.h"

namespace workbench {
namespace {

// Chosen pairs as cross_layer terms: a run of pairs back to back (l, l+2, ...) is one range.
std::string sharing_layout(const AttentionSpec& merge, const std::vector<int32_t>& chosen) {
    AttentionLayout layout;
    for (size_t i = 0; i < chosen.size();) {
        size_t j = i;
        while (j + 1 < chosen.size() && chosen[j + 1] == chosen[j] + 2) ++j;
        AttentionTerm term;
        term.spec = merge;
        term.spec.first_layer = chosen[i];
        term.spec.last_layer = chosen[j] + 1;
        term.layers = {{term.spec.first_layer, term.spec.last_layer}};
        layout.push_back(term);
        i = j + 1;
    }
    return attention_layout_name(layout);
}

}  // namespace

Result<LayerSharingCalibration> calibrate_layer_sharing(const EngineConfig& config, const AttentionSpec& merge,
                                                        const std::vector<TokenId>& text, const QualityOptions& options,
                                                        double max_kv_share, const ProgressCallback& progress,
                                                        const std::atomic<bool>* cancel) {
    if (merge.kind != AttentionKind::cross_layer)
        return error(StatusCode::invalid_argument, "calibration: " + attention_spec_name(merge) + " is not a cross_layer spec");
    if (!(max_kv_share >= 0.5 && max_kv_share <= 1.0))
        return error(StatusCode::invalid_argument, "calibration: a KV share of " + std::to_string(max_kv_share) +
                                                       " cannot be reached by pairs of layers sharing one KV (0.5 to 1)");
    EngineConfig base_config = config;
    base_config.attention = "full";
    base_config.kv_types = "f16";
    WB_ASSIGN_OR_RETURN(auto baseline_engine, Engine::load(base_config));
    QualityBaseline baseline(*baseline_engine);   // full attention runs once, beside the first pair
    LayerSharingCalibration out;
    out.n_layers = baseline_engine->model_info().n_layer;
    AttentionSpec pair = merge;
    pair.group = 2;
    for (int32_t l = 0; l + 1 < out.n_layers; ++l) {
        if (cancel && cancel->load()) return error(StatusCode::cancelled, "calibration cancelled");
        pair.first_layer = l;
        pair.last_layer = l + 1;
        EngineConfig c = config;
        c.attention = attention_spec_name(pair);
        WB_ASSIGN_OR_RETURN(auto engine, Engine::load(c));
        WB_ASSIGN_OR_RETURN(QualityReport q, evaluate_quality(*engine, baseline, text, options, {}, cancel));
        out.pairs.push_back({l, q.kl_mean, q.delta_ppl_pct});
        if (progress) progress(l + 1, out.n_layers - 1);
    }

    std::vector<size_t> order(out.pairs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return out.pairs[a].kl_mean < out.pairs[b].kl_mean; });
    std::vector<bool> taken(static_cast<size_t>(out.n_layers), false);
    auto share = [&] { return static_cast<double>(out.n_layers - static_cast<int32_t>(out.chosen.size())) / out.n_layers; };
    for (size_t i : order) {
        if (share() <= max_kv_share) break;
        const int32_t l = out.pairs[i].first_layer;
        if (taken[static_cast<size_t>(l)] || taken[static_cast<size_t>(l + 1)]) continue;
        taken[static_cast<size_t>(l)] = taken[static_cast<size_t>(l + 1)] = true;
        out.chosen.push_back(l);
    }
    std::sort(out.chosen.begin(), out.chosen.end());
    out.kv_share = share();
    out.attention = out.chosen.empty() ? "full" : sharing_layout(pair, out.chosen);
    return out;
}

}  // namespace workbench
