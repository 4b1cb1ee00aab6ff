// The measurements through workbench/measure.h, turned into the pages' value types and the JSON
// rows the CLI prints (benchmark rows from workbench/bench_row.h, the one builder both use). Where an engine lacks the header (an older checkout), the calls say so
// instead and the pages show the message.

#include "ui/bridge/measure_types.h"

#if __has_include("workbench/measure.h")
#include "workbench/bench_row.h"
#include "workbench/measure.h"
#include "workbench/retrieval.h"
#define WB_HAVE_MEASURE 1
#else
#define WB_HAVE_MEASURE 0
#endif

namespace measure {

#if WB_HAVE_MEASURE

bool available() { return true; }

workbench::Result<QualityFigures> evaluateQuality(workbench::Engine& engine, workbench::Engine& baseline,
                                                  const std::vector<workbench::TokenId>& tokens, int nCtx,
                                                  int maxWindows, const std::function<void(double)>& progress,
                                                  const std::atomic<bool>* cancel) {
    workbench::QualityOptions options;
    options.n_ctx = nCtx;
    options.max_windows = maxWindows;
    // Perplexity takes most of the time; retrieval the last fifth.
    auto report = workbench::evaluate_quality(
        engine, baseline, tokens, options,
        [&progress](int64_t done, int64_t total) {
            if (progress && total > 0) progress(0.8 * static_cast<double>(done) / static_cast<double>(total));
        },
        cancel);
    if (!report.ok()) return report.status();
    workbench::RetrievalOptions grid;
    grid.lengths = {512, 1024};
    grid.depths_pct = {0, 50, 100};
    grid.trials = 1;
    auto retrieval = workbench::evaluate_retrieval(
        engine, grid,
        [&progress](int64_t done, int64_t total) {
            if (progress && total > 0) progress(0.8 + 0.2 * static_cast<double>(done) / static_cast<double>(total));
        },
        cancel);
    if (!retrieval.ok()) return retrieval.status();
    QualityFigures f;
    f.perplexity = report->perplexity;
    f.baselinePerplexity = report->perplexity_baseline;
    f.klMean = report->kl_mean;
    f.top1 = report->top1_agreement;
    f.nTokens = static_cast<int>(report->n_tokens_scored);
    f.retrieval = retrieval->accuracy;
    // The row `workbench-cli eval --json` prints, less its file and decode figures, with retrieval's.
    workbench::Json row = workbench::evaluation_row_json(*report, engine.model_info(), nCtx);
    row["retrieval_accuracy"] = workbench::json_rounded(retrieval->accuracy, 4);
    row["retrieval_cells"] = workbench::retrieval_report_json(*retrieval)["cells"];
    f.json = QString::fromStdString(workbench::dump_json(row));
    return f;
}

workbench::Result<BenchPoint> measureBatch(workbench::Engine& engine, int batch, int nPrompt, int nGen, uint64_t seed,
                                           const std::atomic<bool>* cancel) {
    const int64_t started = workbench::unix_time_ms();
    auto point = workbench::measure_batch_throughput(engine, batch, nPrompt, nGen, static_cast<uint32_t>(seed), cancel);
    if (!point.ok()) return point.status();
    const workbench::ModelInfo& info = engine.model_info();
    BenchPoint p;
    p.batch = point->batch;
    p.nPrompt = point->n_prompt;
    p.nGen = point->n_gen;
    p.nThreads = info.n_threads;
    p.totalTokS = point->total_tok_s;
    p.promptTokS = point->pp_tok_s;
    p.genTokS = point->tg_tok_s;
    // Every prompt is prefilled before the first decode step: a request's first token waits for the whole batch's prefill.
    p.ttftMs = point->pp_tok_s > 0 ? 1000.0 * point->batch * point->n_prompt / point->pp_tok_s : 0;
    p.tpotMs = point->decode_step_ms_p50;
    p.kvBytesPeak = point->kv_bytes_peak;
    // The row `workbench-cli bench -b --json` prints, of one repetition.
    workbench::BenchRow row;
    row.test = "pp" + std::to_string(nPrompt) + "+tg" + std::to_string(nGen);
    row.n_prompt = nPrompt;
    row.n_gen = nGen;
    row.batch = batch;
    row.n_batch = point->max_batch_tokens;
    row.test_time_unix_ms = started;
    row.samples_ts = {point->total_tok_s};
    row.pp_tok_s = point->pp_tok_s;
    row.tg_tok_s = point->tg_tok_s;
    row.tpot_ms_p50 = point->decode_step_ms_p50;
    row.kv_bytes_peak = point->kv_bytes_peak;
    row.rss_bytes = workbench::process_resident_bytes();
    p.json = QString::fromStdString(workbench::dump_json(workbench::bench_row_json(row, info)));
    return p;
}

workbench::Result<BenchPoint> measureSpeed(workbench::Engine& engine, bool prompt, int nTokens, int repetitions,
                                           const std::function<void(double)>& progress, const std::atomic<bool>* cancel) {
    const int64_t started = workbench::unix_time_ms();
    auto test = workbench::measure_speed(
        engine, prompt ? workbench::SpeedTestKind::prompt : workbench::SpeedTestKind::generation, nTokens, repetitions, 1234,
        [&progress](int64_t done, int64_t total) {
            if (progress && total > 0) progress(static_cast<double>(done) / static_cast<double>(total));
        },
        cancel);
    if (!test.ok()) return test.status();
    const workbench::ModelInfo& info = engine.model_info();
    BenchPoint p;
    p.test = QString::fromStdString(test->test);
    p.batch = 1;
    p.nPrompt = test->n_prompt;
    p.nGen = test->n_gen;
    p.nThreads = info.n_threads;
    p.totalTokS = test->avg_tok_s;
    p.stddevTokS = test->stddev_tok_s;
    (prompt ? p.promptTokS : p.genTokS) = test->avg_tok_s;
    // The row `workbench-cli bench --json` prints.
    workbench::BenchRow row;
    row.test = test->test;
    row.n_prompt = test->n_prompt;
    row.n_gen = test->n_gen;
    row.n_batch = prompt ? nTokens : 1;
    row.test_time_unix_ms = started;
    row.samples_ts = test->samples_tok_s;
    row.rss_bytes = workbench::process_resident_bytes();
    p.json = QString::fromStdString(workbench::dump_json(workbench::bench_row_json(row, info)));
    return p;
}

#else

bool available() { return false; }

namespace {
workbench::Status missing() {
    return workbench::error(workbench::StatusCode::unsupported,
                            "this build's engine has no measurements yet (workbench/measure.h)");
}
}  // namespace

workbench::Result<QualityFigures> evaluateQuality(workbench::Engine&, workbench::Engine&,
                                                  const std::vector<workbench::TokenId>&, int, int,
                                                  const std::function<void(double)>&, const std::atomic<bool>*) {
    return missing();
}

workbench::Result<BenchPoint> measureBatch(workbench::Engine&, int, int, int, uint64_t, const std::atomic<bool>*) {
    return missing();
}

workbench::Result<BenchPoint> measureSpeed(workbench::Engine&, bool, int, int, const std::function<void(double)>&,
                                           const std::atomic<bool>*) {
    return missing();
}

#endif

}  // namespace measure
