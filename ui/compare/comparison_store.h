// How a comparison goes into the session database and comes back: the prompt as a session
// ("Compare: …") holding the user message and each configuration's output as an assistant message
// tied to its run (so outputs are searchable and reopen with the runs), a comparison row listing
// the configurations and runs, and per configuration its latest quality evaluation. These
// functions run on the store thread (StoreClient tasks); the structs are plain values.
#pragma once

#include <QString>
#include <map>
#include <optional>
#include <vector>

#include "ui/bridge/measure_types.h"
#include "workbench/store.h"

// One configuration's part of a finished comparison, as the Compare page measured it.
struct ComparisonColumn {
    workbench::EngineConfig config;
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
    std::map<workbench::RowId, workbench::RunRecord> runsByConfiguration;
    std::map<workbench::RowId, std::string> outputsByConfiguration;
    std::map<workbench::RowId, workbench::EvaluationRecord> evaluationsByConfiguration;  // the latest of each
};

namespace comparisons {

// The baseline a quality evaluation compares against: `config`'s model, threads and context with
// full attention, f16 KV and the file's weights.
workbench::EngineConfig referenceConfig(const workbench::EngineConfig& config);

workbench::Result<SavedComparison> save(workbench::Store& store, const std::string& prompt,
                                        std::vector<ComparisonColumn> columns);
// Saves each figure's evaluation under its configuration (figures[i].index into `configs`),
// against the reference configuration. Equal configurations share a row with the comparison's.
workbench::Result<bool> saveEvaluations(workbench::Store& store, const std::vector<workbench::EngineConfig>& configs,
                                        const std::vector<QualityFigures>& figures);
workbench::Result<LoadedComparison> load(const workbench::Store& store, workbench::RowId comparisonId);
// The baseline perplexity recorded in an evaluation's JSON ("ppl_baseline"), when there is one.
std::optional<double> baselinePerplexity(const workbench::EvaluationRecord& evaluation);

}  // namespace comparisons
