// bench_row_json: llama-bench's JSON row (tools/llama-bench: its test record's fields) for our
// measurements; evaluation_row_json: a quality report's. Knobs llama.cpp has and this CPU engine does not (GPU layers, split mode, CPU
// masks, polling) carry the values llama-bench prints for a CPU-only run with its defaults.
#include "workbench/bench_row.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "attention/paged_kv.h"
#include "kv_blocks/kv_dtype.h"
#include "workbench/metrics.h"
#include "workbench/store.h"

namespace workbench {

namespace {

// "2025-03-04T05:06:07Z", as llama-bench writes test_time.
std::string iso_utc_seconds(int64_t unix_ms) {
    const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char text[64];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

Json optional_count(const std::optional<uint64_t>& value) { return value ? Json(*value) : Json(nullptr); }

}  // namespace

int64_t unix_time_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string bench_model_type(const ModelInfo& info) {
    char params[32];
    if (info.n_params >= 1000000000ull) std::snprintf(params, sizeof params, "%.1fB", static_cast<double>(info.n_params) / 1e9);
    else std::snprintf(params, sizeof params, "%.0fM", static_cast<double>(info.n_params) / 1e6);
    std::string weights = info.weight_type;
    for (char& c : weights) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return info.arch + " " + params + " " + weights;
}

int64_t bench_row_tokens(const BenchRow& row) {
    return static_cast<int64_t>(row.batch) * (static_cast<int64_t>(row.n_prompt) + row.n_gen);
}

Json bench_row_json(const BenchRow& row, const ModelInfo& info) {
    const RunProvenance machine = app_provenance();
    std::string type_k = info.kv_types, type_v = info.kv_types;
    if (auto kv = parse_kv_types(info.kv_types); kv.ok()) {
        type_k = kv_dtype_name(kv->k);
        type_v = kv_dtype_name(kv->v);
    }
    const double tokens = static_cast<double>(bench_row_tokens(row));
    std::vector<double> samples_ns;
    for (double ts : row.samples_ts) samples_ns.push_back(ts > 0 ? tokens * 1e9 / ts : 0.0);
    const MeanStddev ts = mean_stddev(row.samples_ts), ns = mean_stddev(samples_ns);
    Json samples_ts = Json::array(), samples_ns_json = Json::array();
    for (double v : row.samples_ts) samples_ts.push_back(json_rounded(v));
    for (double v : samples_ns) samples_ns_json.push_back(static_cast<int64_t>(v + 0.5));
    const int32_t n_batch = row.n_batch > 0 ? row.n_batch : 1;

    Json j;
    // llama-bench's fields.
    j["build_commit"] = machine.app_commit;
    j["build_number"] = WB_BUILD_NUMBER;
    j["cpu_info"] = machine.cpu_model;
    j["gpu_info"] = "";
    std::string backend = info.backend;   // llama-bench writes "CPU", "CUDA"
    for (char& c : backend) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    j["backends"] = backend;
    j["model_filename"] = info.path;
    j["model_type"] = bench_model_type(info);
    j["model_size"] = info.weight_bytes;
    j["model_n_params"] = info.n_params;
    j["n_batch"] = n_batch;
    j["n_ubatch"] = std::min<int32_t>(n_batch, PagedKv::kMaxStepTokens);  // the model runs prompts in steps of this many
    j["n_threads"] = info.n_threads;
    j["cpu_mask"] = "0x0";
    j["cpu_strict"] = false;
    j["poll"] = 0;
    j["type_k"] = type_k;
    j["type_v"] = type_v;
    j["n_gpu_layers"] = 0;
    j["split_mode"] = "layer";
    j["main_gpu"] = 0;
    j["no_kv_offload"] = false;
    j["flash_attn"] = true;  // attention runs block by block with an online softmax, never a full score matrix
    j["tensor_split"] = "0.00";
    j["use_mmap"] = true;
    j["embeddings"] = false;
    j["n_prompt"] = row.n_prompt;
    j["n_gen"] = row.n_gen;
    j["n_depth"] = row.n_depth;
    j["test_time"] = iso_utc_seconds(row.test_time_unix_ms ? row.test_time_unix_ms : unix_time_ms());
    j["avg_ns"] = static_cast<int64_t>(ns.mean + 0.5);
    j["stddev_ns"] = static_cast<int64_t>(ns.stddev + 0.5);
    j["avg_ts"] = json_rounded(ts.mean);
    j["stddev_ts"] = json_rounded(ts.stddev);
    j["samples_ns"] = std::move(samples_ns_json);
    j["samples_ts"] = std::move(samples_ts);
    // The workbench's own.
    j["test"] = row.test;
    j["batch"] = row.batch;
    j["attention"] = info.attention;
    j["kv_type"] = info.kv_types;
    j["cpu_features"] = info.cpu_features;
    j["kernels"] = info.cpu_kernels;
    j["app_version"] = machine.app_version;
    j["pp_tok_s"] = json_rounded(row.pp_tok_s);
    j["tg_tok_s"] = json_rounded(row.tg_tok_s);
    j["tpot_ms_p50"] = json_rounded(row.tpot_ms_p50);
    j["gb_s"] = json_rounded(row.gb_s);
    j["roofline_pct"] = json_rounded(row.roofline_pct);
    j["kv_bytes_peak"] = optional_count(row.kv_bytes_peak);
    j["rss_bytes"] = optional_count(row.rss_bytes);
    return j;
}

Json evaluation_row_json(const QualityReport& report, const ModelInfo& info, int32_t n_ctx) {
    Json row = {{"ctx", n_ctx},
            {"windows", report.n_windows},
            {"tokens_scored", report.n_tokens_scored},
            {"attention", info.attention},
            {"kv_type", info.kv_types},
            {"weights", info.weight_type},
            {"ppl", json_rounded(report.perplexity)},
            {"ppl_baseline", json_rounded(report.perplexity_baseline)},
            {"delta_ppl_pct", json_rounded(report.delta_ppl_pct)},
            {"kl_mean", json_rounded(report.kl_mean)},
            {"top1_agreement", json_rounded(report.top1_agreement)},
            {"kv_bytes_peak", report.kv_bytes_peak},
            {"kv_bytes_full", report.kv_bytes_full}};
    // Ranks the load measured per layer: what a rerun should find again.
    if (info.attention.find("ranks=measured") != std::string::npos) row["latent_ranks"] = info.latent_ranks;
    return row;
}

}  // namespace workbench
