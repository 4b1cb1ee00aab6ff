// A GGUF's own chat template (tokenizer.chat_template) rendered as Hugging Face's
// apply_chat_template renders it, by the engine's Jinja interpreter (core_engine/jinja): the
// prompt the chat, the server and `workbench-cli template` send. The render also says which
// bytes are the conversation's own text, so the tokenizer keeps them text and only the
// template's markup becomes control tokens.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "workbench/json.h"
#include "workbench/status.h"

namespace workbench {

struct ParsedChatTemplate;   // the interpreter's parse tree

struct ModelChatTemplate {
    std::string source;               // empty when the file carries none
    std::string bos_token, eos_token; // the text of its BOS and EOS tokens, as templates print them
    std::shared_ptr<const ParsedChatTemplate> parsed;   // set by prepare_model_chat_template
};

// Errors: the file's (not_found, io_error, invalid_file naming the field).
Result<ModelChatTemplate> read_model_chat_template(const std::string& gguf_path);
// Parses the source once, for many renders. invalid_argument naming the line where it does not parse.
Status prepare_model_chat_template(ModelChatTemplate& t);

struct ChatTemplateInput {
    Json messages = Json::array();    // [{"role", "content", "tool_calls", "tool_call_id", …}]
    Json tools;                       // an array of {"type": "function", "function": {…}}, or null
    bool add_generation_prompt = true;
    Json extra = Json::object();      // the template's own variables (enable_thinking, reasoning_effort, …)
};

struct RenderedChat {
    std::string text;
    // Sorted byte ranges [begin, end) of `text` that came from the messages and tools (what a
    // user or a client wrote) rather than from the template.
    std::vector<std::pair<size_t, size_t>> content;
};

// invalid_argument: no template, messages not an array, or the template's own error (naming its
// line: a syntax error, raise_exception, an undefined value used); resource_exhausted past the
// interpreter's limits.
Result<RenderedChat> render_model_chat_template(const ModelChatTemplate& t, const ChatTemplateInput& input);

}  // namespace workbench
