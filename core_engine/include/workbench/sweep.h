// Sweeps: the Variants map's rows. A list of configurations (the standard preset, or lines of
// "SPEC [--kv-type T] [--weights W]") is measured one by one the same way — KV bytes held and
// read, prefill and decode speed at the context, perplexity with KL and top-1 against a baseline
// (the same model with full attention, f16 KV, the file's weights, loaded once beside), and
// optionally passkey + multi-key retrieval — each row a JSON object (the format of
// `workbench-cli sweep -o`). The CLI's `sweep` and the GUI's Variants map page both run it; the
// session database keeps a sweep as a unit (Store::create_sweep). Runs on the calling thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "workbench/engine.h"
#include "workbench/json.h"
#include "workbench/measure.h"
#include "workbench/retrieval.h"
#include "workbench/store.h"

namespace workbench {

struct SweepConfig {
    std::string line;                   // as written (comments cut): the row's key for resuming
    std::string attention, kv_types = "f16", weights;   // weights empty: as stored
    std::string mla_cache = "latent";   // latent-attention models' cache form (EngineConfig::mla_cache)
};

// The built-in presets and a spread of each variant's main parameter, as configuration lines.
const std::vector<std::string>& standard_sweep_preset();
// The eviction presses at kvpress's ratios 0.75 and 0.5 (keep 0.25 and 0.5) beside full attention.
const std::vector<std::string>& presses_sweep_preset();

// Blank lines and '#' comments are skipped. Errors (invalid_argument): a word that is not
// --kv-type T, --weights W or --mla-cache F (names the line and the word), a configuration the engine refuses
// (names the line), or no configuration at all.
Result<std::vector<SweepConfig>> parse_sweep_configs(const std::vector<std::string>& lines);

struct SweepSettings {
    int32_t ctx = 4096;         // the scored window and the context speed is measured at
    int32_t windows = 1;        // ctx-long windows of the text scored per row
    int32_t n_decode = 32;      // tokens decoded after the window (decode speed)
    bool retrieval = false;
    // Lengths beyond ctx are left out (ctx itself when none fits). Two trials a cell (eval
    // --retrieval runs four) keep the standard sweep with retrieval within 90 minutes on 2 cores.
    RetrievalOptions retrieval_options = {.trials = 2};
    // The read bandwidth full attention achieves decoding at 512 tokens of context, measured on
    // the baseline at the start of a run (measure_decode_reference). Nonzero asks each row for its
    // decode time predicted from its bytes at the bandwidth measured again just before that row's
    // decode (this one when that fails). 0: rows carry no prediction.
    double reference_gb_s = 0;
};

// The baseline (full attention, f16 KV) decoding n_decode tokens after the text's first 512 (or
// ctx, when smaller), the median of three runs after one that touches the pages: weight bytes
// plus the KV its last step read, times its decode rate. Errors: the engine's, or
// invalid_argument for a text shorter than that window.
struct DecodeReference {
    int32_t ctx = 512;
    uint64_t bytes_per_token = 0;
    double decode_tok_s = 0, gb_s = 0;
};
Result<DecodeReference> measure_decode_reference(Engine& baseline, const std::vector<TokenId>& text, const SweepSettings& settings);

// What a stored sweep keeps of its settings (SweepRecord::settings): ctx, windows, retrieval,
// trials and the number of configurations.
Json sweep_settings_json(const SweepSettings& settings, size_t configurations);

// The retrieval grid a row runs: settings.retrieval_options with lengths beyond ctx left out (ctx
// itself when none fits). Local and remote rows run the same one, so they pair prompt by prompt.
RetrievalOptions sweep_retrieval_options(const SweepSettings& settings);
// A row's retrieval figures: "retrieval_accuracy", "_trials", "_interval", "_score", "_cells"
// (retrieval_report_json's), "question" (aware or agnostic) and "follow_up" when asked.
void put_retrieval_figures(Json& row, const RetrievalReport& report, const RetrievalOptions& options);

// The engine configuration a row loads: `base` (model, threads) with the row's attention, KV and
// weight types and a context for the window and the decoded tokens.
EngineConfig sweep_engine_config(const SweepConfig& config, const EngineConfig& base, const SweepSettings& settings);
// The baseline's configuration: `base` with full attention, f16 KV, the file's weights.
EngineConfig sweep_baseline_config(const EngineConfig& base, const SweepSettings& settings);

// One configuration, loaded, measured and freed. With settings.reference_gb_s, the row also has
// its decode time predicted from the bytes a step reads (weights + KV, indexer included) at the
// reference bandwidth measured on the baseline just before it (reference_gb_s) beside the measured one, and the last decode step split into matmuls, attention and
// the indexer. The row always comes back: "status" is "ok", or
// "failed" with "error" (a configuration that does not load, say) — the sweep goes on — or, when
// `cancel` was set, "cancelled" (not a result: drop it). `text` must hold ctx · windows tokens.
// progress(done, total): windows scored, the timed run, retrieval trials. One `baseline` serves
// the whole sweep: its logits are kept after the first row (QualityBaseline).
Json measure_sweep_row(const SweepConfig& config, const EngineConfig& base, QualityBaseline& baseline, const std::vector<TokenId>& text,
                       const SweepSettings& settings, const ProgressCallback& progress = {},
                       const std::atomic<bool>* cancel = nullptr);

// Keeps one measured row in the session database under `sweep_id`: the row itself (failed rows
// too) and, for a row that ran, an evaluation of its configuration against `baseline_configuration_id`
// (0: none recorded) so it also lists with the other evaluations. The evaluation's id waits for its batch.
Status record_sweep_row(Store& store, RowId sweep_id, RowId baseline_configuration_id, const EngineConfig& row_config,
                        const Json& row, const std::string& text_name);

// A row's short description for lists: "sliding:window=64 · KV q8_0 · W q8_0"; a remote row
// "llama.cpp server · KV q8_0".
std::string sweep_row_label(const Json& row);

}  // namespace workbench
