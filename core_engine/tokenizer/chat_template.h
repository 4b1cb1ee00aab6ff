// Renders a conversation into the prompt text a model was trained on. The family is detected
// from the GGUF's tokenizer.chat_template (Jinja source) by its markers; we render each family
// natively rather than run Jinja. Unknown templates fall back to ChatML with a warning.
// Output matches Hugging Face's apply_chat_template (trim_blocks, lstrip_blocks) byte for byte
// for the templates in tests/data/chat_templates/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "workbench/types.h"

namespace workbench {

// llama2: [INST] with <<SYS>> (Llama-2-chat). mistral: [INST] without <<SYS>>, rendered as
// Mistral-7B-Instruct-v0.1 ("<s>[INST] u [/INST]a</s>"); its template has no system role, so a
// system prompt is folded into the first user turn ("system\n\nuser").
enum class ChatTemplateFamily { chatml, llama3, gemma, llama2, phi3, mistral };
const char* chat_template_family_name(ChatTemplateFamily family);

class ChatTemplate {
public:
    // Detects the family from the template source. `warning` is set when the template was not
    // recognised and ChatML is used instead. An empty source (the file carries no template) takes
    // `missing`, the model architecture's family; `arch` named, a notice says so.
    static ChatTemplate detect(std::string_view template_source, std::string bos_text = {}, std::string eos_text = {},
                               ChatTemplateFamily missing = ChatTemplateFamily::chatml, std::string_view arch = {});

    ChatTemplateFamily family() const { return family_; }
    const std::string& warning() const { return warning_; }
    // The system prompt the template inserts when the conversation has none ("" when none).
    const std::string& default_system_prompt() const { return default_system_; }

    // The whole conversation as the template renders it; with add_generation_prompt, ends with
    // the assistant header so the model continues as the assistant. `content_ranges`, when
    // given, receives where the messages' own text lies in it (the rest is the template's).
    std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                       std::vector<TextRange>* content_ranges = nullptr) const;

    // Text that ends an assistant turn in this family (e.g. "<|im_end|>"), for stop checks.
    std::string end_of_turn() const;

private:
    ChatTemplateFamily family_ = ChatTemplateFamily::chatml;
    std::string warning_;
    std::string default_system_;
    std::string bos_text_, eos_text_;
    // Llama 3.1+: the template always opens with a system turn carrying "Cutting Knowledge
    // Date" and this date (its fallback literal); empty for Llama 3.0 templates.
    std::string knowledge_date_;
    // Gemma: what joins the folded system prompt to the first user message.
    std::string gemma_system_separator_ = "\n\n";
    // Phi-3.5: a system message with empty content is left out.
    bool phi3_skip_empty_system_ = false;
};

}  // namespace workbench
