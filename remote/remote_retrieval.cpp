// Remote rows of the variants map: the suite's prompts as token ids over /v1/completions, and
// the row's KV bytes predicted from the configuration the server reports or the user declares.
#include "remote_retrieval.h"

#include "remote_kv_metrics.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>

#include "workbench/attention.h"

namespace wbremote {

using workbench::Json;
using workbench::Result;
using workbench::StatusCode;

workbench::RetrievalResponder remote_retrieval_responder(const RemoteEndpoint& endpoint, const std::string& model, RemoteAnswerTally* tally,
                                                         const std::atomic<bool>* cancel) {
    return [endpoint, model, tally, cancel](const workbench::RetrievalPrompt& p, int32_t max_tokens) -> Result<std::string> {
        RemoteRequest r;
        r.model = model;
        r.chat = false;
        r.prompt_tokens.assign(p.tokens.begin(), p.tokens.end());
        r.generation.max_tokens = max_tokens;
        r.generation.sampling.temperature = 0;
        const RemoteCompletion got = stream_completion(endpoint, r, {}, cancel);
        if (cancel && cancel->load()) return workbench::error(StatusCode::cancelled, "retrieval: cancelled");
        if (!got.ok) return workbench::error(StatusCode::unavailable, got.error);
        const int32_t counted = got.metrics.n_prompt_tokens;
        if (counted > 0 && counted != static_cast<int32_t>(p.tokens.size()))
            return workbench::error(StatusCode::unsupported, "the server counted " + std::to_string(counted) + " prompt tokens for the " +
                                                              std::to_string(p.tokens.size()) +
                                                              " token ids sent (it does not read them as given), so its answers would not pair "
                                                              "with the local rows'");
        if (tally) {
            ++tally->n_requests;
            tally->n_output_tokens += got.metrics.n_output_tokens;
            if (got.metrics.n_output_tokens > 1) {
                tally->decode_ms += got.metrics.e2e_ms - got.metrics.ttft_ms;
                tally->n_decoded += got.metrics.n_output_tokens - 1;
            }
        }
        return got.text;
    };
}

namespace {

// Whether the server splits a sentence into as many tokens as the GGUF does (with or without
// its BOS): nullopt when it has no /tokenize to ask, else the two counts when they differ.
std::optional<std::string> tokenizer_mismatch(const RemoteEndpoint& endpoint, const std::string& model, const workbench::Engine& local) {
    const std::string sample = "The pass key is 71432. Remember it: the grass is green, the sky is blue, and 9 + 17 = 26.";
    const std::optional<int32_t> theirs = remote_token_count(endpoint, model, sample);
    if (!theirs) return std::nullopt;
    const auto with_bos = static_cast<int32_t>(local.tokenize(sample, true, false).size());
    const auto without = static_cast<int32_t>(local.tokenize(sample, false, false).size());
    if (*theirs == with_bos || *theirs == without) return std::nullopt;
    return std::to_string(*theirs) + " tokens where " + local.model_info().name + " makes " + std::to_string(without);
}

// The peak /metrics showed: bytes where the server counts them (ours), else its tokens at the
// bytes a token of its KV type takes (llama.cpp, vLLM, SGLang count tokens or blocks).
void put_measured_kv(Json& row, const KvMetricsReading& peak, const workbench::AttentionLayout& layout, const std::string& kv_types,
                     const workbench::Engine& local) {
    if (peak.bytes) {
        row["kv_bytes_measured_peak"] = static_cast<uint64_t>(*peak.bytes);
        row["kv_measured_from"] = "metrics bytes";
    } else if (peak.tokens) {
        const auto tokens = static_cast<int64_t>(*peak.tokens + 0.5);
        row["kv_tokens_measured_peak"] = tokens;
        if (auto bytes = workbench::predict_kv(layout, kv_types, workbench::kv_geometry(local.model_info()), tokens); bytes.ok()) {
            row["kv_bytes_measured_peak"] = bytes->bytes_held;
            row["kv_measured_from"] = "metrics tokens";
        }
    }
}

}  // namespace

std::string remote_sweep_row_key(const RemoteEndpoint& endpoint, const RemoteRowOptions& options) {
    std::string url = endpoint.base_url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    std::string key = "remote " + url;
    if (!options.model.empty()) key += " --model " + options.model;
    if (!options.attention.empty()) key += " --attention " + options.attention;
    if (!options.kv_types.empty()) key += " --kv-type " + options.kv_types;
    return key;
}

Json measure_remote_sweep_row(const RemoteEndpoint& endpoint, const RemoteRowOptions& options, const workbench::Engine& local,
                              const workbench::SweepSettings& settings, const workbench::ProgressCallback& progress,
                              const std::atomic<bool>* cancel) {
    Json row = {{"config", remote_sweep_row_key(endpoint, options)}, {"backend", "remote"}, {"base_url", endpoint.base_url},
                {"model", std::filesystem::path(local.model_info().path).filename().string()}};
    auto failed = [&](const std::string& why, bool cancelled = false) {
        row["status"] = cancelled || (cancel && cancel->load()) ? "cancelled" : "failed";
        row["error"] = why;
        return row;
    };
    // What the user declared is checked before anything is sent.
    if (!options.attention.empty())
        if (auto layout = workbench::parse_attention_layout(options.attention); !layout.ok())
            return failed("attention '" + options.attention + "': " + layout.status().message());
    if (!options.kv_types.empty())
        if (auto kv = workbench::split_kv_types(options.kv_types); !kv.ok()) return failed("KV '" + options.kv_types + "': " + kv.status().message());
    auto models = list_models(endpoint);
    if (!models.ok()) return failed(models.status().message());
    if (models->empty()) return failed(endpoint.base_url + " lists no models");
    const RemoteModel* served = &models->front();
    if (!options.model.empty()) {
        auto it = std::find_if(models->begin(), models->end(), [&](const RemoteModel& m) { return m.id == options.model; });
        if (it == models->end()) return failed(endpoint.base_url + " does not serve '" + options.model + "' (it lists '" + models->front().id + "')");
        served = &*it;
    }
    row["remote_model"] = served->id;
    row["server"] = server_kind_name(detect_server_kind(endpoint, *models));
    const std::string attention = !options.attention.empty() ? options.attention : !served->attention.empty() ? served->attention : "full";
    // Its KV type as declared, else as /v1/models (ours) or /metrics (vLLM's cache_dtype) says.
    const std::optional<std::string> metrics_text = fetch_metrics(endpoint);
    const KvMetricsReading at_start = metrics_text ? parse_kv_metrics(*metrics_text) : KvMetricsReading{};
    const std::string kv_types = !options.kv_types.empty() ? options.kv_types
                                 : !served->kv_types.empty() ? served->kv_types
                                                             : kv_type_of_cache_dtype(at_start.cache_dtype);
    if (kv_types.empty())
        return failed("the server does not report its KV cache type: declare it (--remote-kv-type, what the server was started with: "
                      "llama-server's -ctk/-ctv, vLLM's --kv-cache-dtype; f16 when it was given none)");
    row["attention"] = attention;
    row["kv_type"] = kv_types;
    row["kv_source"] = options.kv_types.empty() ? "reported" : "declared";
    if (auto mismatch = tokenizer_mismatch(endpoint, served->id, local))
        return failed("the server tokenizes a test sentence into " + *mismatch + ": it does not run this GGUF's model, so the prompts would "
                      "not mean the same to it");
    auto layout = workbench::parse_attention_layout(attention);
    if (!layout.ok()) return failed("attention '" + attention + "': " + layout.status().message());
    const int64_t n_tokens = settings.ctx + settings.n_decode;
    auto bytes = workbench::predict_kv(*layout, kv_types, workbench::kv_geometry(local.model_info()), n_tokens);
    if (!bytes.ok()) return failed("KV '" + kv_types + "': " + bytes.status().message());
    row["kv_bytes"] = bytes->bytes_held;
    row["kv_bytes_full"] = bytes->bytes_full;
    const workbench::RetrievalOptions ro = workbench::sweep_retrieval_options(settings);
    RemoteAnswerTally tally;
    // A server whose /metrics reports the KV it holds is watched while it answers: the peak it held.
    std::optional<KvMetricsProbe> probe;
    if (at_start.any()) probe.emplace(endpoint);
    auto report = workbench::evaluate_retrieval(local, ro, remote_retrieval_responder(endpoint, served->id, &tally, cancel), progress, cancel);
    if (!report.ok()) return failed(report.status().message(), report.status().code() == StatusCode::cancelled);
    workbench::put_retrieval_figures(row, *report, ro);
    if (probe) put_measured_kv(row, probe->stop(), *layout, kv_types, local);
    if (tally.n_decoded > 0) row["remote_tpot_ms"] = workbench::json_rounded(tally.decode_ms / static_cast<double>(tally.n_decoded));
    row["ctx"] = settings.ctx;
    row["status"] = "ok";
    return row;
}

}  // namespace wbremote
