// The GGUF's template and special tokens read without loading the weights; rendered with the
// variables transformers passes (tools and documents always present, None when absent).
#include "workbench/model_chat_template.h"

#include "gguf/gguf_file.h"
#include "jinja/jinja.h"
#include "jinja/jinja_parser.h"
#include "tokenizer/vocab_loader.h"

namespace workbench {

struct ParsedChatTemplate {
    jinja::Template tree;
};

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

Status prepare_model_chat_template(ModelChatTemplate& t) {
    if (t.source.empty()) return error(StatusCode::invalid_argument, "the model carries no chat template (tokenizer.chat_template)");
    WB_ASSIGN_OR_RETURN(jinja::Template tree, jinja::parse_template(t.source));
    t.parsed = std::make_shared<const ParsedChatTemplate>(ParsedChatTemplate{std::move(tree)});
    return Status::ok_status();
}

Result<RenderedChat> render_model_chat_template(const ModelChatTemplate& t, const ChatTemplateInput& input) {
    if (t.source.empty()) return error(StatusCode::invalid_argument, "the model carries no chat template (tokenizer.chat_template)");
    if (!input.messages.is_array()) return error(StatusCode::invalid_argument, "messages must be a JSON array of {\"role\", \"content\"} objects");
    if (!input.tools.is_null() && !input.tools.is_array()) return error(StatusCode::invalid_argument, "tools must be a JSON array");
    ModelChatTemplate prepared;
    if (!t.parsed) {
        prepared = t;
        WB_RETURN_IF_ERROR(prepare_model_chat_template(prepared));
    }
    const ParsedChatTemplate& parsed = t.parsed ? *t.parsed : *prepared.parsed;
    // As transformers passes them: the special tokens first, the caller's own variables over them,
    // then the conversation; tools as given (an empty list stays a list), None when absent.
    // The caller's variables are marked like the conversation: a client's text, not the template's.
    jinja::RenderOptions options;
    options.marked_variables = {"messages", "tools"};
    Json variables = {{"bos_token", t.bos_token}, {"eos_token", t.eos_token}};
    if (input.extra.is_object())
        for (auto it = input.extra.begin(); it != input.extra.end(); ++it) {
            variables[it.key()] = it.value();
            options.marked_variables.push_back(it.key());
        }
    variables["messages"] = input.messages;
    variables["tools"] = input.tools.is_array() ? input.tools : Json(nullptr);
    variables["documents"] = nullptr;
    variables["add_generation_prompt"] = input.add_generation_prompt;
    WB_ASSIGN_OR_RETURN(jinja::RenderedText r, jinja::render_marked(parsed.tree, variables, options));
    RenderedChat out;
    out.text = std::move(r.text);
    for (const jinja::Mark& m : r.marked) out.content.emplace_back(m.begin, m.end);
    return out;
}

}  // namespace workbench
