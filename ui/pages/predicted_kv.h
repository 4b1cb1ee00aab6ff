// What the configuration panel says of the KV cache before a reload: the engine's own prediction
// (workbench/attention.h, predict_kv) on the loaded model's geometry, in the panel's words. The
// engine's KvUsage reports the same figures for one sequence of the same length, so what the
// panel shows before Apply is what the metrics show after it, except where the note says.
#pragma once

#include <QString>
#include <QStringList>
#include <cstdint>
#include <string>
#include <vector>

#include "workbench/attention.h"
#include "workbench/engine.h"

namespace predictedkv {

QStringList toStringList(const std::vector<std::string>& names);

// What one sequence of `nTokens` holds and reads on `info`'s model with `attention` (a layout
// spec, "sliding:window=64,sinks=4,layers=0-9") and `kvTypes` ("f16", "k=q8_0,v=q4_0"; empty:
// f16). invalid_argument, in the parser's or the engine's words, when either does not parse or
// the model cannot run it (a latent rank, a layer it lacks). `mlaCache`: a latent-attention
// model's cache form for the reload (EngineConfig::mla_cache); empty: the form it is loaded with.
workbench::Result<workbench::KvPrediction> forConfig(const std::string& attention, const std::string& kvTypes,
                                                     const workbench::ModelInfo& info, int64_t nTokens,
                                                     const std::string& mlaCache = {});

// Rich text: the bytes held at `nTokens` beside full attention's, what each new token reads beside
// full attention's, which layers `info`'s model trained local and global (where it has such a
// pattern), and, in small print, where a measured figure can differ (the note).
QString describe(const workbench::KvPrediction& prediction, int64_t nTokens, const workbench::ModelInfo& info);

}  // namespace predictedkv
