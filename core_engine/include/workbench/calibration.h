// Calibration of cross-layer sharing: which neighbouring layers may share one KV is measured on
// a calibration text rather than assumed (MiniCache merges "from the middle of the model";
// KVSharer searches the pairs): each pair merged alone is scored against full attention, and the
// cheapest pairs share until the cache is small enough. The result is an attention layout, so a
// calibrated configuration is stored and reloaded as its spec string.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "workbench/attention.h"
#include "workbench/config.h"
#include "workbench/measure.h"

namespace workbench {

// The text calibrations run on by default (resources/eval/paradise_lost.txt: the source tree's
// copy, else the installed package's), never the evaluation text.
std::string default_calibration_text_path();

struct LayerPairCost {
    int32_t first_layer = 0;     // layers first_layer and first_layer + 1 merged
    double kl_mean = 0;          // against full attention with f16 KV, on the calibration text
    double delta_ppl_pct = 0;
};

struct LayerSharingCalibration {
    std::vector<LayerPairCost> pairs;   // every pair of neighbouring layers, in layer order
    std::vector<int32_t> chosen;        // first layers of the pairs that share, ascending
    std::string attention;              // the layout: one cross_layer term per run of chosen pairs
    int32_t n_layers = 0;
    double kv_share = 1;                // layers stored ÷ model layers
};

// config: the model, threads, backend, KV types (its attention is ignored). merge: the
// cross_layer spec each pair runs with (its merge and sinks; group and layers are set here).
// Pairs are chosen by KL, cheapest first, never two overlapping, until the stored layers are at
// most max_kv_share of the model's (near 0.5, overlaps may leave no pair to take: kv_share then
// stays above it). Errors: invalid_argument when max_kv_share is below 0.5 (a
// pair stores one layer of two) or merge is not a cross_layer spec; the engine's and
// evaluate_quality's errors (a text shorter than one window names both lengths); cancelled.
Result<LayerSharingCalibration> calibrate_layer_sharing(const EngineConfig& config, const AttentionSpec& merge,
                                                        const std::vector<TokenId>& text, const QualityOptions& options,
                                                        double max_kv_share, const ProgressCallback& progress = {},
                                                        const std::atomic<bool>* cancel = nullptr);

}  // namespace workbench
