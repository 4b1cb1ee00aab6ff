// The OpenAI request bodies the server accepts (/v1/completions, /v1/chat/completions), read and
// checked without the model: a body is either an ApiRequest or an ApiError naming the field, its
// HTTP status and OpenAI's error type. Nothing out of range is clamped. Limits that need the
// model (prompt and max_tokens against the context) are checked by the server after tokenizing.
// Pure functions: safe on any input, on any thread (the fuzz target calls them directly).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "workbench/config.h"
#include "workbench/json.h"
#include "workbench/types.h"

namespace wbserver {

// An OpenAI-style error: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
    int http_status = 400;
    std::string message;
    std::string type = "invalid_request_error";
    std::string param;   // the field, "" when none
    std::string code;    // "" → null
};
workbench::Json error_json(const ApiError& error);

struct RequestLimits {
    int32_t max_messages = 1024;
    int32_t max_n = 16;
    int32_t max_stop_strings = 16;
    int32_t max_stop_bytes = 1024;      // each stop string
    int32_t max_top_logprobs = 20;
    int32_t max_prompt_token_ids = 1 << 20;
};

enum class Endpoint { completions, chat_completions };

struct ApiRequest {
    Endpoint endpoint = Endpoint::completions;
    std::string model;                                 // empty: the loaded one
    std::vector<workbench::ChatMessage> messages;      // chat
    // chat: the messages as the model's template reads them ({"role", "content"} with content
    // as one string, "developer" as "system"), and the template's own variables
    // (chat_template_kwargs, vLLM's field: e.g. {"enable_thinking": false}).
    workbench::Json template_messages = workbench::Json::array();
    workbench::Json template_kwargs = workbench::Json::object();
    // Structured output: the GBNF grammar the reply must follow, from response_format
    // (json_object, json_schema) or our "grammar" field (llama.cpp's); empty: free text.
    std::string grammar;
    // Tools (chat): the functions offered ({"type": "function", "function": {"name", "description",
    // "parameters"}}), whether the model may, must or must not call one, or which one it must.
    workbench::Json tools = workbench::Json::array();
    enum class ToolChoice { none, automatic, required, named } tool_choice = ToolChoice::automatic;
    std::string tool_name;                             // ToolChoice::named
    bool parallel_tool_calls = true;
    std::string prompt_text;                           // completions, when a string
    std::optional<std::vector<workbench::TokenId>> prompt_tokens;   // completions, when token ids
    std::optional<int32_t> max_tokens;                 // unset: what the context leaves
    int32_t n = 1;
    workbench::SamplingParams sampling;                // OpenAI's defaults: temperature 1, top_p 1, no top-k/min-p
    std::vector<std::string> stop;
    bool ignore_eos = false;
    // Log-probabilities: chat's logprobs (bool) + top_logprobs, completions' logprobs (int).
    bool logprobs = false;
    int32_t top_logprobs = 0;
    bool stream = false;
    bool include_usage = false;                        // stream_options.include_usage
    // Speculative decoding, our extension: "speculative": {"draft": "off"|"lookup"|"model",
    // "draft_max": N, "ngram": N}; what is absent stays the server's default (serve --draft...).
    std::optional<workbench::DraftKind> draft;
    std::optional<int32_t> draft_max, draft_ngram;
    // Completions only: the prompt's text (and, with logprobs, its tokens' logprobs) before the
    // output; best_of completions generated, the n with the highest mean logprob returned.
    bool echo = false;
    int32_t best_of = 1;
};

// Reads and checks a request body. Unknown fields are ignored, but a known one that would change
// the answer and is not implemented ("suffix", "tools", a JSON Schema keyword outside the
// supported subset, ...) is refused naming it; null counts as absent. logit_bias ids are checked against the vocabulary
// later, with the model.
std::variant<ApiRequest, ApiError> parse_api_request(std::string_view body, Endpoint endpoint,
                                                     const RequestLimits& limits = {});

}  // namespace wbserver
