// The GGUF's template and special tokens read without loading the weights; rendered with the
// variables transformers passes (tools and documents always present, None when absent).
#include "workbench/model_chat_template.h"

#include "gguf/gguf_file.h"
#include "jinja/jinja.h"
#include "tokenizer/vocab_loader.h"

namespace workbench {

Result<ModelChatTemplate> read_model_chat_template(const std::string& gguf_path) {
    WB_ASSIGN_OR_RETURN(const auto file, GgufFile::open(gguf_path));
    WB_ASSIGN_OR_RETURN(const TokenizerVocab vocab, load_tokenizer_vocab(*file));
    WB_ASSIGN_OR_RETURN(const auto source, file->get_string_opt("tokenizer.chat_template"));
    ModelChatTemplate t;
    t.source = source.value_or("");
    if (vocab.bos_id >= 0) t.bos_token = vocab.tokens[static_cast<size_t>(vocab.bos_id)];
    if (vocab.eos_id >= 0) t.eos_token = vocab.tokens[static_cast<size_t>(vocab.eos_id)];
    return t;
}

Result<std::string> render_model_chat_template(const ModelChatTemplate& t, const ChatTemplateInput& input) {
    if (t.source.empty()) return error(StatusCode::invalid_argument, "the model carries no chat template (tokenizer.chat_template)");
    if (!input.messages.is_array()) return error(StatusCode::invalid_argument, "messages must be a JSON array of {\"role\", \"content\"} objects");
    if (!input.tools.is_null() && !input.tools.is_array()) return error(StatusCode::invalid_argument, "tools must be a JSON array");
    // As transformers passes them: the special tokens first, the caller's own variables over them,
    // then the conversation; tools as given (an empty list stays a list), None when absent.
    Json variables = {{"bos_token", t.bos_token}, {"eos_token", t.eos_token}};
    if (input.extra.is_object())
        for (auto it = input.extra.begin(); it != input.extra.end(); ++it) variables[it.key()] = it.value();
    variables["messages"] = input.messages;
    variables["tools"] = input.tools.is_array() ? input.tools : Json(nullptr);
    variables["documents"] = nullptr;
    variables["add_generation_prompt"] = input.add_generation_prompt;
    return jinja::render(t.source, variables);
}

}  // namespace workbench
