// What a chat model's reply says, read the way its template taught it to speak: the thinking
// (<think>…</think>, gpt-oss's analysis channel) apart from the answer, and tool calls in the
// model's own form — Hermes/Qwen <tool_call>{…}</tool_call>, Llama 3.x's bare JSON
// {"name", "parameters"}, Mistral's [TOOL_CALLS], gpt-oss's commentary channel to=functions.X.
// A template with no tool form of its own gets the Hermes form: the tools described in a system
// message and the calls made and answered in history written as Hermes text, so tool calling
// works on every model. A call that does not parse stays text; nothing here fails on any input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/json.h"
#include "workbench/model_chat_template.h"
#include "workbench/status.h"
#include "workbench/types.h"

namespace workbench {

enum class ToolCallFormat { hermes, llama3_json, mistral, harmony };
const char* tool_call_format_name(ToolCallFormat format);

struct ChatFormat {
    ToolCallFormat tools = ToolCallFormat::hermes;
    bool template_renders_tools = false;   // the template reads `tools` (else we describe them)
    bool think_tags = false;               // the template knows <think>…</think>
    // The reply's markers are control tokens (Mistral, gpt-oss): the reply must be read with
    // control tokens rendered as text (GenerationRequest::render_special).
    bool needs_special_text() const { return tools == ToolCallFormat::mistral || tools == ToolCallFormat::harmony; }
};
// From the template's source (empty: no template, the Hermes fallback).
ChatFormat chat_format_of(std::string_view template_source);

struct ChatReply {
    std::string content;     // the answer (the reply itself when nothing else was found)
    std::string reasoning;   // the thinking, when the model thought
    std::vector<ToolCall> tool_calls;
};

// `thinking_open`: the prompt ended inside <think> (DeepSeek-R1's generation prompt), so the
// reply starts as thinking. `tools_offered`: tool calls are looked for only when tools were given.
ChatReply parse_chat_reply(const ChatFormat& format, std::string_view text, bool tools_offered, bool thinking_open);

// The same, read as the reply streams: push() returns what is certain so far (text that could
// still become a marker is held back), finish() the rest. Tool calls come whole, each once.
class ChatReplyStream {
public:
    ChatReplyStream(ChatFormat format, bool tools_offered, bool thinking_open);
    ChatReply push(std::string_view text);
    ChatReply finish();
    bool made_tool_calls() const { return n_calls_ > 0; }

private:
    enum class Mode { content, reasoning, tool_call, whole };   // whole: read only at the end
    ChatFormat format_;
    bool tools_;
    Mode mode_;
    bool at_start_ = true;       // nothing but whitespace seen yet (of the reply, or after a block)
    bool after_block_ = false;   // thinking or a call just ended: leading blank lines are layout
    bool spoke_ = false;         // the answer has begun (a later <think> is text)
    size_t searched_ = 0;        // a call's body: bytes already searched for its end
    std::string pending_;        // received, not yet released
    std::string whole_;          // Mode::whole: everything
    int32_t n_calls_ = 0;
    void drain(ChatReply& out, bool final);
};

// A conversation in OpenAI's form made ready for the template: tool calls' arguments as objects
// (what templates were written for); for a template without a tool form, the tools described in
// the first system message and tool calls and results written as Hermes text.
Json prepare_tool_messages(const ChatFormat& format, const Json& messages, const Json& tools);

// The conversation in OpenAI's form: role, content, reasoning_content, tool_calls (arguments as
// JSON text), tool_call_id.
Json chat_messages_json(const std::vector<ChatMessage>& messages);

// What the template renders for a conversation in OpenAI's form (prepare_tool_messages), with the
// tools passed on where the template reads them itself, and the template's own variables.
ChatTemplateInput chat_template_input(const ChatFormat& format, const Json& messages, const Json& tools, const Json& extra);

// OpenAI's `tools`: an array of {"type": "function", "function": {"name", "description",
// "parameters"}}, at most 128. invalid_argument naming the field (`field`, when given, gets it:
// "tools[2].function.name").
Status check_tools(const Json& tools, std::string* field = nullptr);

// The form a forced call is read in (tool_choice "required" or named): the model's own, except
// where its markers are control tokens (Mistral, harmony), which a grammar over text cannot
// write: the Hermes form there.
ChatFormat forced_call_format(ChatFormat format);

// The grammar that makes the reply a call (tool_choice "required", or `name` for a named
// function): Hermes <tool_call> blocks — or Llama 3.x's JSON, where that is the model's form —
// whose arguments follow each tool's parameters schema; up to four calls when `parallel` (a small
// model may otherwise repeat a call until max_tokens).
// invalid_argument naming the tool and keyword for a parameters schema outside the subset.
Result<std::string> tool_call_grammar(const ChatFormat& format, const Json& tools, const std::string& name, bool parallel);

// Whether a rendered prompt's tail leaves the reply inside <think> (DeepSeek-R1's generation prompt).
bool ends_inside_thinking(std::string_view prompt_tail);
// A message's text: its content string, or the text parts of a list of parts joined.
std::string chat_content_text(const Json& content);

// An id for a call the model made: `n` distinguishes calls of one reply, `seed` replies.
std::string tool_call_id(const ChatFormat& format, uint64_t seed, int32_t n);

}  // namespace workbench
