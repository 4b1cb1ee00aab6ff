// How a comparison goes into the session database and comes back: its prompts as a session
// ("Compare: …") holding, per prompt, the user message followed by each configuration's output as
// an assistant message tied to its run (so outputs are searchable and reopen with the runs), a
// comparison row listing the configurations and runs, and per configuration its latest quality
// evaluation. A remote server's column is stored as its remote configuration (backend "remote")
// and loads as such. Comparisons saved before prompt sets (one user message) load as one prompt. These
// functions run on the store thread (StoreClient tasks); the structs are plain values.
#pragma once

#include <QString>
#include <map>
#include <optional>
#include <vector>

#include "ui/bridge/measure_types.h"
#include "workbench/store.h"

// One prompt under one configuration of a finished comparison, as the Compare page measured it.
struct ComparisonCell {
    int prompt = 0;                               // index into the comparison's prompts
    int column = 0;                               // index into its configurations
    std::string output;                           // the generated text
    workbench::RunRecord run;                     // metrics, ITL p90/p99, provenance; ids filled on save
    std::vector<workbench::MetricSample> samples;
};

struct SavedComparison {
    workbench::RowId id = 0, sessionId = 0;
    std::vector<workbench::RowId> configurationIds;  // in column order
    workbench::RowId referenceConfigurationId = 0;   // the quality baseline's configuration
};

struct LoadedComparison {
    workbench::ComparisonRecord record;
    std::vector<workbench::ConfigurationRecord> configurations;  // in column order
    std::vector<std::string> prompts;                            // in order; at least one
    std::vector<std::string> errors;                             // per column: why it failed ("" : it ran)
    // [prompt][column]: that cell's run and output, when it has one (its session may be deleted).
    std::vector<std::vector<std::optional<workbench::RunRecord>>> runs;
    std::vector<std::vector<std::optional<std::string>>> outputs;
    // Per configuration, the first quality evaluation made after the comparison ran (none: not evaluated).
    std::map<workbench::RowId, workbench::EvaluationRecord> evaluationsByConfiguration;
};

namespace comparisons {

// The baseline a quality evaluation compares against: `config`'s model, threads and context with
// full attention, f16 KV and the file's weights.
workbench::EngineConfig referenceConfig(const workbench::EngineConfig& config);

// Saves the configurations that have at least one cell or a failure in `errors` (per column:
// why it, or some of its prompts, failed; empty: none) in column order (SavedComparison's ids
// follow that order) with their errors, and every prompt, answered or not. A column with a
// record in `stored` (a remote server's: backend "remote") is saved as that record instead of
// its EngineConfig; the quality baseline follows the first local column.
workbench::Result<SavedComparison> save(workbench::Store& store, const std::vector<std::string>& prompts,
                                        const std::vector<workbench::EngineConfig>& configs,
                                        std::vector<ComparisonCell> cells,
                                        const std::vector<std::optional<workbench::ConfigurationRecord>>& stored = {},
                                        const std::vector<std::string>& errors = {});
// Saves each figure's evaluation under its configuration (figures[i].index into `configs`),
// against the reference configuration. Equal configurations share a row with the comparison's.
workbench::Result<bool> saveEvaluations(workbench::Store& store, const std::vector<workbench::EngineConfig>& configs,
                                        const std::vector<QualityFigures>& figures);
workbench::Result<LoadedComparison> load(const workbench::Store& store, workbench::RowId comparisonId);
// The baseline perplexity recorded in an evaluation's JSON ("ppl_baseline"), when there is one.
std::optional<double> baselinePerplexity(const workbench::EvaluationRecord& evaluation);

}  // namespace comparisons
