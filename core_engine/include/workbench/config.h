// What a caller chooses: the model and threads (EngineConfig, fixed at load) and how tokens are
// drawn and when generation stops (SamplingParams, GenerationRequest; per request).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/status.h"
#include "workbench/types.h"

namespace workbench {

struct EngineConfig {
    std::string model_path;
    int32_t n_threads = 0;   // 0: one per core
    int32_t n_ctx = 0;       // context length; 0: the model's trained length, capped at 8192
    std::string weight_type; // convert weight matrices at load ("q8_0", "f16", ...); empty: as stored
    std::string attention = "full";  // attention variant spec: "sliding:window=1020,sinks=4", ...
    std::string kv_types = "f16";    // KV element types: "q8_0", or "k=q8_0,v=q4_0"
    uint64_t kv_budget_bytes = 0;    // KV pool size; 0: what n_seq_max sequences of the full context need
    int32_t n_seq_max = 1;           // sequences the pool holds at full context when no budget is given
    // Called on the loading thread while load converts weights (--weights) or factors the latent
    // variant: the step ("converting weights", "latent factors") and its progress in [0, 1].
    std::function<void(const std::string& step, float fraction)> on_load_progress;
    std::string calibration_text;    // latent: text whose attention inputs weight the factorization;
                                     // empty: the last 512 tokens of resources/eval/paradise_lost.txt
    // How a calibration chose `attention` (`workbench-cli calibrate` writes it), shown beside the
    // layout wherever it is loaded; empty: chosen by hand. The engine does not read it.
    std::string calibrated_by;
    // Speculative decoding's draft model (same vocabulary), loaded beside the model; empty: none.
    // Requests choose per request whether to draft with it (SpeculationParams).
    std::string draft_model_path;
    std::string backend = "cpu";     // where the model runs: "cpu" or "cuda" (workbench/backends.h)
    // Latent-attention models (DeepSeek's MLA): "latent" caches one row [c | RoPE key] per token
    // and layer (the absorbed form); "expanded" caches each head's K and V, as plain multi-head
    // attention does — to see what the latent form saves.
    std::string mla_cache = "latent";
};

// EngineConfig as JSON, the one schema the CLI's --config, the GUI's --config and the session
// database share: {"model_path", "n_threads", "n_ctx", "weight_type", "attention", "kv_types",
// "kv_budget_bytes", "n_seq_max", "calibration_text", "calibrated_by", "draft_model_path", "backend", "mla_cache"} (callbacks
// are not saved).
std::string engine_config_json(const EngineConfig& config);
// What can be checked without the model file: the attention spec, the K/V types, the weight
// type and the backend's name parse. invalid_argument naming the field and what is wrong; model-dependent limits (a
// latent rank, a layer range) are checked at load.
Status check_engine_config(const EngineConfig& config);
// Reads that JSON; absent fields keep their defaults. invalid_argument naming the field for an
// unknown field or a wrong type or range, and the byte offset for malformed JSON.
Result<EngineConfig> engine_config_from_json(std::string_view json);

// Added to a token's logit before anything else reads the row (OpenAI's logit_bias: -100 bans
// the token, +100 all but forces it).
struct LogitBias {
    TokenId token = -1;
    float bias = 0;
};

struct SamplingParams {
    float temperature = 0.7f;        // 0: greedy
    int32_t top_k = 40;              // 0: off
    float top_p = 0.95f;             // 1: off
    float min_p = 0.05f;             // 0: off
    float repeat_penalty = 1.0f;     // 1: off (llama.cpp semantics: divide positive logits, multiply negative)
    float frequency_penalty = 0.0f;  // subtract count * value
    float presence_penalty = 0.0f;   // subtract value if present
    int32_t penalty_last_n = 64;     // window of recent tokens the penalties look at
    uint64_t seed = 0;
    std::vector<LogitBias> logit_bias;   // ids in the vocabulary (checked by the caller)
};

// Speculative decoding: drafted tokens are verified in one batched step of the model and the
// rejected ones rolled back, so the output is the model's own (token for token when greedy,
// the same distribution when sampling: accept with min(1, p/q), else draw from the residual).
enum class DraftKind { off, lookup, model };
const char* draft_kind_name(DraftKind kind);
struct SpeculationParams {
    DraftKind kind = DraftKind::off;  // lookup: n-grams of the prompt and text so far; model: EngineConfig::draft_model_path
    int32_t draft_max = 8;            // most tokens drafted per step (≥ 1); the length adapts to what is accepted
    int32_t ngram = 3;                // lookup: longest n-gram matched (shorter ones down to 2 after it; 1: single tokens)
};
// invalid_argument naming the field for a draft_max or ngram out of range.
Status check_speculation(const SpeculationParams& params);

struct GenerationRequest {
    int32_t max_tokens = 256;
    SamplingParams sampling;
    SpeculationParams speculation;
    std::vector<std::string> stop_strings;  // generation ends when the text ends with one (it is cut off)
    bool ignore_eos = false;                // keep going past end-of-generation tokens
    // Token events carry the logits each token was drawn from. Off, a token whose sampler reads
    // only a row's best logits (greedy, or a top_k of at most 64, without penalties) comes with
    // none: the backend hands back those few (a device copies back bytes, not the vocabulary).
    bool token_logits = false;
    // A GBNF grammar the reply follows (workbench/structured_output.h makes one of a JSON Schema):
    // each token is checked against it and, when the draw falls outside, drawn again from the
    // allowed tokens only. Such a request does not speculate.
    std::string grammar;
    // The text streamed includes control tokens (gpt-oss's <|channel|>, Mistral's [TOOL_CALLS]):
    // what a reply parser needs for formats marked by them. End-of-generation tokens never show.
    bool render_special = false;
};

// One request of a batch (Engine::run_batch): a prompt, how to generate, how many samples.
struct BatchRequest {
    std::vector<TokenId> prompt;     // token ids (render and tokenize first)
    GenerationRequest generation;
    int32_t n_samples = 1;           // completions of this prompt; they share its KV blocks where the variant allows
    double arrival_ms = 0;           // when it arrives, after the batch starts
};

struct BatchOptions {
    int32_t max_batch_tokens = 256;  // tokens per step: running decodes plus prompt chunks
    int32_t max_running = 32;        // sequences decoding together (the concurrency)
    // Benchmark phases as llama-batched-bench runs them: every prompt first, then decode.
    bool prefill_before_decode = false;
    // Prompt chunks are sized from the measured cost of recent steps so a step that carries them
    // stays under this many ms while others decode (at least one prompt token per step). 0: off
    // (max_batch_tokens alone); < 0: twice the recent decode-only step.
    double max_step_ms = 0;
};

}  // namespace workbench
