// The long-context suite against a remote OpenAI-compatible server, for the KV map's remote rows:
// the very prompts the local rows read (built with the local GGUF's tokenizer, the model the
// server runs), sent as token ids to /v1/completions and answered greedily, so a remote row pairs
// prompt by prompt with the local presses and variants. A remote row's KV bytes are what a cache
// of the server's KV configuration holds at the sweep's context, predicted from the model's
// geometry (predict_kv): the configuration as the server reports it (ours, in /v1/models; vLLM's
// fp8 in /metrics) or as the user declares it (llama-server's -ctk/-ctv, vLLM's
// --kv-cache-dtype), never guessed; beside it, what the server's /metrics says it held.
#pragma once

#include <atomic>
#include <string>

#include "openai_client.h"
#include "workbench/engine.h"
#include "workbench/json.h"
#include "workbench/retrieval.h"
#include "workbench/sweep.h"

namespace wbremote {

// What the answers cost the server, client-side: decode time after each first token.
struct RemoteAnswerTally {
    int64_t n_requests = 0, n_output_tokens = 0;
    double decode_ms = 0;   // Σ (e2e − ttft) over requests with more than one token
    int64_t n_decoded = 0;  // Σ (n_output − 1) over the same requests
};

// One /v1/completions request per prompt, its token ids as the prompt, temperature 0, streamed.
// Errors: the request's (unreachable, HTTP status with the server's message, a broken stream),
// and unsupported when the server counts the prompt differently from the ids sent (it is not reading
// them as given). `tally` and `cancel`, when given, must outlive the responder; `cancel` ends the
// request in flight within ~20 ms (stream_completion's).
workbench::RetrievalResponder remote_retrieval_responder(const RemoteEndpoint& endpoint, const std::string& model,
                                                         RemoteAnswerTally* tally = nullptr, const std::atomic<bool>* cancel = nullptr);

struct RemoteRowOptions {
    std::string model;       // empty: the first of /v1/models
    std::string kv_types;    // declared ("q8_0", "k=q8_0,v=q4_0", "fp8"); empty: as the server reports them
    std::string attention;   // declared; empty: as the server reports it, else full attention
};

// A remote row's "config": "remote URL [--model M] [--attention A] [--kv-type T]", what it was
// asked with, the URL without a trailing '/' (a rerun into the same -o skips it).
std::string remote_sweep_row_key(const RemoteEndpoint& endpoint, const RemoteRowOptions& options);

// One row of the variants map for a remote server, after settings' retrieval grid (every local
// row's): {"config" (remote_sweep_row_key), "backend": "remote",
// "server", "base_url", "remote_model", "model" (the local GGUF's file name), "attention",
// "kv_type", "kv_source" ("reported" or "declared"), "kv_bytes" and "kv_bytes_full" (a sequence of
// ctx + n_decode tokens, as local rows hold), the retrieval figures (put_retrieval_figures),
// "remote_tpot_ms", "ctx", "status": "ok"}, and where the server's /metrics reports the KV it holds
// (remote_kv_metrics.h), the peak seen while it answered: "kv_bytes_measured_peak" with
// "kv_measured_from" ("metrics bytes", or "metrics tokens" with "kv_tokens_measured_peak" at the
// KV type's bytes a token). vLLM's cache_dtype there counts as a reported KV type. Always comes back: "failed" with "error" when the
// server cannot be reached, tokenizes differently from the GGUF (another model), reports no KV
// configuration and none was declared, or a request fails; "cancelled" when `cancel` was set.
workbench::Json measure_remote_sweep_row(const RemoteEndpoint& endpoint, const RemoteRowOptions& options, const workbench::Engine& local,
                                         const workbench::SweepSettings& settings, const workbench::ProgressCallback& progress = {},
                                         const std::atomic<bool>* cancel = nullptr);

}  // namespace wbremote
