// Small value types shared by the engine API and its callers.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace workbench {

using TokenId = int32_t;

// A function call a model made (workbench/chat_reply.h reads them from its reply).
struct ToolCall {
    std::string id;          // "call_…" (Mistral: nine letters and digits, as its template demands)
    std::string name;
    std::string arguments;   // a JSON object's text
};

struct ChatMessage {
    ChatMessage() = default;
    ChatMessage(std::string role_, std::string content_) : role(std::move(role_)), content(std::move(content_)) {}
    std::string role;     // "system", "user", "assistant", "tool" (a call's result)
    std::string content;
    std::string reasoning;               // assistant: its thinking, apart from the answer
    std::vector<ToolCall> tool_calls;    // assistant: the calls it made
    std::string tool_call_id;            // tool: the call this answers
};

}  // namespace workbench
