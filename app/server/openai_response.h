// OpenAI response bodies: whole completions (text_completion, chat.completion), stream chunks
// (server-sent events), usage and log-probability entries, from what the channel delivered.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workbench/chat_reply.h"

#include "openai_request.h"
#include "request_channel.h"
#include "workbench/json.h"

namespace wbserver {

// What every object of one response shares.
struct ResponseHeader {
    std::string id;          // "cmpl-…" / "chatcmpl-…"
    int64_t created = 0;     // Unix seconds
    std::string model;
    Endpoint endpoint = Endpoint::completions;
};

// One choice as it accumulates (non-streamed responses).
struct ChoiceState {
    std::string text;
    std::vector<ChannelEvent> tokens;    // token events carrying log-probabilities (echo: the prompt's first)
    std::string finish_reason;           // empty while running
    int32_t n_output_tokens = 0;
    // chat: the text read as the model's format (thinking, answer, tool calls with their ids).
    std::optional<workbench::ChatReply> reply;
};

const char* finish_reason(workbench::StopReason reason);
std::string new_response_id(Endpoint endpoint);

workbench::Json usage_json(int32_t n_prompt, int32_t n_completion);
// A choice's "logprobs" for these token events (null when none were asked).
workbench::Json logprobs_json(Endpoint endpoint, const std::vector<const ChannelEvent*>& tokens, bool asked, size_t text_offset);
// `n_completion_all` ≥ 0: the tokens generated for every choice, also those best_of left out.
workbench::Json completion_json(const ResponseHeader& h, const std::vector<ChoiceState>& choices, bool logprobs, int32_t n_prompt,
                                int32_t n_completion_all = -1);
// One stream chunk for choice `index`: a text delta (chat: with the role on the first), or the
// finish reason. `usage_null` adds "usage": null (OpenAI does when usage was asked for).
workbench::Json chunk_json(const ResponseHeader& h, int32_t index, const std::string* delta_text, bool with_role,
                           const workbench::Json& logprobs, const std::string& finish, bool usage_null);
// A chat stream chunk whose delta is given whole (reasoning_content, tool_calls, content).
workbench::Json delta_chunk_json(const ResponseHeader& h, int32_t index, workbench::Json delta, const workbench::Json& logprobs,
                                 bool usage_null);
// A call as a message's tool_calls entry (a delta's, with "index", when index >= 0).
workbench::Json tool_call_json(const workbench::ToolCall& call, int32_t index = -1);
workbench::Json usage_chunk_json(const ResponseHeader& h, int32_t n_prompt, int32_t n_completion);
// "data: <json>\n\n"
std::string sse(const workbench::Json& value);

}  // namespace wbserver
