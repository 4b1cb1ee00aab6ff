// A load generator for a remote OpenAI-compatible server with `vllm bench serve`'s definitions:
// prompts sent at a Poisson request rate (or all at once) under a concurrency cap, each streamed
// and timed client-side, aggregated into the same BatchMetrics the local batch runner reports.
// A failed request is counted, never fatal: a server that disappears mid-run ends the run with
// its failures.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "openai_client.h"
#include "workbench/engine.h"

namespace wbremote {

struct ServeBenchmarkOptions {
    std::string model;                  // empty: the first of /v1/models
    int32_t num_prompts = 100;
    int32_t concurrency = 0;            // requests in flight at most; 0: no cap
    double request_rate = std::numeric_limits<double>::infinity();   // requests/s (Poisson); inf: all at once
    int32_t input_len = 512, output_len = 128;   // random prompts (ignored when `prompts` is given)
    std::vector<RemoteRequest> prompts; // from a file: used in order, cycling
    uint64_t seed = 0;
};

struct ServeBenchmarkResult {
    std::string model;
    ServerKind server = ServerKind::unknown;
    bool tokens_from_tokenize = false;  // random prompts sized by the server's /tokenize (else by its usage counts)
    workbench::BatchResult batch;       // one completion per prompt (request = its index), the aggregates
    std::vector<std::string> errors;    // the failed requests' reasons, in order
};

// Errors: the endpoint cannot list its models (nothing was sent), or bad options.
workbench::Result<ServeBenchmarkResult> run_serve_benchmark(const RemoteEndpoint& endpoint, const ServeBenchmarkOptions& options,
                                                            const std::function<void(int32_t n_done, int32_t n_total)>& on_progress = {});

// Random words that the server counts as about `n_tokens` prompt tokens: the word count is
// calibrated with `count` (the server's tokenizer) and refined once.
std::string sized_prompt(int32_t n_tokens, uint64_t seed, const std::function<std::optional<int32_t>(const std::string&)>& count);

}  // namespace wbremote
