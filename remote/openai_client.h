// A remote OpenAI-compatible endpoint (vLLM, SGLang, TensorRT-LLM, llama.cpp's llama-server, our
// own `serve`) driven and measured from the client side: its models, what kind of server it is,
// and streamed completions timed by the arrival of each server-sent event, with vLLM's
// definitions of TTFT, ITL, TPOT and E2EL. Faults (refused, reset mid-stream, stalls, HTTP
// errors, malformed events) come back as values with the partial text kept; nothing throws.
// Thread-safe: every call makes its own connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/config.h"
#include "workbench/json.h"
#include "workbench/metrics.h"
#include "workbench/status.h"
#include "workbench/store.h"
#include "workbench/types.h"

namespace wbremote {

struct RemoteEndpoint {
    std::string base_url;         // "http://host:port/v1" (the /v1 is added when missing)
    std::string api_key;          // sent as "Authorization: Bearer KEY" when set
    int connect_timeout_s = 5;
    int read_timeout_s = 60;      // a stream silent this long is a stall
};

struct RemoteModel {
    std::string id, owned_by;
    int64_t max_model_len = 0;    // when the server says (vLLM, ours)
    std::string attention, kv_types;   // the KV configuration, when the server says (ours)
};

enum class ServerKind { unknown, workbench, vllm, sglang, trtllm, llamacpp };
const char* server_kind_name(ServerKind kind);

// GET /v1/models. Errors: unavailable (refused, timed out), or the server's status and message.
workbench::Result<std::vector<RemoteModel>> list_models(const RemoteEndpoint& endpoint);
// From the models' owner fields, then /metrics names, /version and /props.
ServerKind detect_server_kind(const RemoteEndpoint& endpoint, const std::vector<RemoteModel>& models);
// GET the server's /metrics (Prometheus text, beside /v1); empty when it has none or did not answer.
std::optional<std::string> fetch_metrics(const RemoteEndpoint& endpoint);
// The server's own token count for `text` (POST /tokenize, as vLLM, SGLang and llama.cpp offer
// it); empty when it has no such endpoint.
std::optional<int32_t> remote_token_count(const RemoteEndpoint& endpoint, const std::string& model, const std::string& text);

// A remote server as the session database records it: a configuration with backend "remote",
// the server's kind as its variant, the model id, and {"base_url", "model", "server"} as its JSON.
workbench::ConfigurationRecord remote_configuration(const std::string& base_url, const std::string& model, const std::string& server);

struct RemoteRequest {
    std::string model;                               // empty: none sent (the server's default)
    bool chat = true;                                // /v1/chat/completions, else /v1/completions
    std::vector<workbench::ChatMessage> messages;    // chat (tool calls and results in OpenAI's form)
    workbench::Json tools;                           // chat: OpenAI's tools array; null: none offered
    bool tool_required = false;                      // chat: tool_choice "required" (with tools)
    std::string prompt;                              // completions
    std::vector<int32_t> prompt_tokens;              // completions: token ids sent instead of `prompt` when given
    workbench::GenerationRequest generation;         // max_tokens, sampling, stop, ignore_eos
};

struct RemoteCompletion {
    bool ok = false;
    std::string text;                 // everything received, also when the stream broke
    bool partial = false;             // the stream ended before its finish (text is what came)
    std::string error;                // why it failed, with the server's own message when it sent one
    int http_status = 0;              // 0: no HTTP response at all
    std::string finish_reason;
    int32_t n_malformed_lines = 0;    // SSE lines that were not SSE, and events that were not JSON
    // Client-side timings from the request's send, vLLM's definitions; token counts from the
    // server's usage when reported (else one per content event).
    workbench::RequestMetrics metrics;
};

// Streams one completion (with stream_options.include_usage). `on_text` sees each piece of text
// as it arrives with its time since the send; `cancel` stops reading within ~20 ms, even while
// the server is silent (the result is partial, error "cancelled").
RemoteCompletion stream_completion(const RemoteEndpoint& endpoint, const RemoteRequest& request,
                                   const std::function<void(std::string_view text, double t_ms)>& on_text = {},
                                   const std::atomic<bool>* cancel = nullptr);

}  // namespace wbremote
