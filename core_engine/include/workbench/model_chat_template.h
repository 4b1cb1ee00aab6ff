// A GGUF's own chat template (tokenizer.chat_template) rendered as Hugging Face's
// apply_chat_template renders it, by the engine's Jinja interpreter (core_engine/jinja): what
// `workbench-cli template` prints. The chat path still renders the six native families
// (Engine::render_chat); it moves to this one when the renderer also returns the content spans.
#pragma once

#include <string>

#include "workbench/json.h"
#include "workbench/status.h"

namespace workbench {

struct ModelChatTemplate {
    std::string source;               // empty when the file carries none
    std::string bos_token, eos_token; // the text of its BOS and EOS tokens, as templates print them
};

// Errors: the file's (not_found, io_error, invalid_file naming the field).
Result<ModelChatTemplate> read_model_chat_template(const std::string& gguf_path);

struct ChatTemplateInput {
    Json messages = Json::array();    // [{"role", "content", "tool_calls", "tool_call_id", …}]
    Json tools;                       // an array of {"type": "function", "function": {…}}, or null
    bool add_generation_prompt = true;
    Json extra = Json::object();      // the template's own variables (enable_thinking, reasoning_effort, …)
};

// invalid_argument: no template, messages not an array, or the template's own error (naming its
// line: a syntax error, raise_exception, an undefined value used); resource_exhausted past the
// interpreter's limits.
Result<std::string> render_model_chat_template(const ModelChatTemplate& t, const ChatTemplateInput& input);

}  // namespace workbench
