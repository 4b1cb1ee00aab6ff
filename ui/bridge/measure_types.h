// The measurements the Compare and Benchmark pages ask of the engine (quality against a baseline,
// batch throughput), as GUI value types, and the two calls that produce them. The calls wrap
// workbench/measure.h (evaluate_quality, measure_batch_throughput) so the pages depend on these
// few fields only. They run on a measuring thread (MeasureWorker), never on the GUI thread.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "workbench/engine.h"
#include "workbench/status.h"

// One configuration's quality on a text against the baseline (full attention, f16 KV).
struct QualityFigures {
    int index = -1;                  // the configuration's column
    double perplexity = 0, baselinePerplexity = 0;
    double klMean = 0, top1 = 0;     // top-1 agreement in [0, 1]
    int nTokens = 0;                 // tokens scored
    // Passkey + multi-key retrieval on a small grid (measure::kRetrievalLengths, 3 depths, one
    // trial each): what a window forgets, which perplexity hides.
    std::optional<double> retrieval;
    QString textName, textSha256;
    QString json;                    // every figure, as saved with the evaluation
};

// One batch size of the throughput sweep, or (test non-empty) one llama-bench pp/tg test at
// batch 1: then totalTokS is its mean over the repetitions and stddevTokS their spread.
struct BenchPoint {
    QString test;                    // "pp512", "tg128"; empty for a sweep point
    double stddevTokS = 0;
    int batch = 0, nPrompt = 0, nGen = 0, nThreads = 0;
    double totalTokS = 0;            // (prompt + generated tokens) / s over the batch: the bench's avg_ts
    double promptTokS = 0, genTokS = 0;
    double ttftMs = 0, tpotMs = 0;   // latency a request sees at this batch size
    quint64 kvBytesPeak = 0;
    QString json;                    // the row as saved (and as `workbench-cli bench -b --json` prints it)
};

// A sweep the Variants map page runs (workbench/sweep.h): its configuration lines (the standard
// preset's or a file's), the model and threads to run them with, and the settings.
struct SweepRequest {
    workbench::EngineConfig base;
    QStringList lines;
    int ctx = 4096;
    bool retrieval = false;
    int trials = 2;   // workbench::SweepSettings' default
    bool question_agnostic = false;   // retrieval's context read before its question (workbench::RetrievalOptions)
};

// One measured row of a sweep: where it sits in the list, the row as `sweep -o` writes it
// ("status" ok or failed), and the configuration it loaded (what History records it under).
struct SweepRow {
    int index = 0, total = 0;
    QString json;
    workbench::EngineConfig config;
};

Q_DECLARE_METATYPE(QualityFigures)
Q_DECLARE_METATYPE(BenchPoint)
Q_DECLARE_METATYPE(SweepRequest)
Q_DECLARE_METATYPE(SweepRow)

namespace measure {

// True when this build's engine provides the measurements (workbench/measure.h).
bool available();
// The context an evaluated engine needs for the retrieval grid.
constexpr int kRetrievalContext = 1024 + 16;
// `tokens` scored in windows of nCtx (at most maxWindows) under `engine` and `baseline`, then
// `engine`'s retrieval (prompts of 512 and 1024 tokens, facts at 0, 50 and 100 % depth).
workbench::Result<QualityFigures> evaluateQuality(workbench::Engine& engine, workbench::Engine& baseline,
                                                  const std::vector<workbench::TokenId>& tokens, int nCtx,
                                                  int maxWindows, const std::function<void(double)>& progress,
                                                  const std::atomic<bool>* cancel);
// One batch of `batch` random prompts of nPrompt tokens generating nGen tokens each.
workbench::Result<BenchPoint> measureBatch(workbench::Engine& engine, int batch, int nPrompt, int nGen, uint64_t seed,
                                           const std::atomic<bool>* cancel);
// llama-bench's pp<n> (prompt) or tg<n> test: a warm-up, then `repetitions` timed runs.
workbench::Result<BenchPoint> measureSpeed(workbench::Engine& engine, bool prompt, int nTokens, int repetitions,
                                           const std::function<void(double)>& progress, const std::atomic<bool>* cancel);

}  // namespace measure
