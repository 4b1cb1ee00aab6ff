// Chat template detection and native rendering. Each family's render function mirrors its
// published Jinja template line by line (what is trimmed, where BOS/EOS go, how the system
// prompt is placed), so the prompt text equals what Hugging Face's Jinja rendering produces.
#include "tokenizer/chat_template.h"

#include <cstdint>

namespace workbench {
namespace {

bool contains(std::string_view text, std::string_view needle) {
    return text.find(needle) != std::string_view::npos;
}

// Python's str.isspace() for one code point: Jinja's `trim` filter and `.strip()` are Python's
// str.strip(), which also removes Unicode spaces (NBSP, ideographic space, ...).
bool is_python_space(uint32_t cp) {
    if (cp == ' ' || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f)) return true;
    switch (cp) {
        case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029:
        case 0x202f: case 0x205f: case 0x3000:
            return true;
        default:
            return cp >= 0x2000 && cp <= 0x200a;
    }
}

// Decodes the UTF-8 code point at `pos`; returns its length, or 0 for a malformed sequence
// (which then counts as a non-space byte, so malformed text is never trimmed away).
size_t decode_utf8(std::string_view text, size_t pos, uint32_t& cp) {
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(pos);
    size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
    if (length == 0 || pos + length > text.size()) return 0;
    cp = length == 1 ? lead : lead & (0x7f >> length);
    for (size_t i = 1; i < length; ++i) {
        if ((byte(pos + i) & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (byte(pos + i) & 0x3f);
    }
    return length;
}

std::string python_strip(std::string_view text) {
    size_t begin = text.size(), end = 0;
    for (size_t pos = 0; pos < text.size();) {
        uint32_t cp = 0;
        size_t length = decode_utf8(text, pos, cp);
        const bool space = length != 0 && is_python_space(cp);
        if (length == 0) length = 1;
        if (!space) {
            if (begin == text.size()) begin = pos;
            end = pos + length;
        }
        pos += length;
    }
    return begin >= end ? std::string() : std::string(text.substr(begin, end - begin));
}

// Undoes the escapes a Jinja string literal may hold (\n, \t, \', ...); other backslashes stay.
std::string unescape_jinja_literal(std::string_view raw) {
    std::string out;
    for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] != '\\' || i + 1 == raw.size()) {
            out += raw[i];
            continue;
        }
        const char next = raw[++i];
        switch (next) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case '\\': case '\'': case '"': out += next; break;
            default: out += '\\'; out += next; break;
        }
    }
    return out;
}

// True when `raw` can be the inside of one string literal: no unescaped quote (which would end
// the literal and start an expression such as `' + messages[0]['content'] + '`) and no braces.
bool is_plain_literal_body(std::string_view raw) {
    for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '\\') { ++i; continue; }
        if (raw[i] == '\'' || raw[i] == '"' || raw[i] == '{' || raw[i] == '}') return false;
    }
    return true;
}

// Skips a newline written either raw or as the two-character escape "\n" at `pos`.
bool skip_newline(std::string_view text, size_t& pos) {
    if (pos < text.size() && text[pos] == '\n') { pos += 1; return true; }
    if (text.substr(pos, 2) == "\\n") { pos += 2; return true; }
    return false;
}

// ChatML templates that insert a default system turn spell it as one literal
// '<|im_start|>system\n...<|im_end|>'; the first such literal is the default prompt.
std::string find_chatml_default_system(std::string_view source) {
    constexpr std::string_view open = "<|im_start|>system";
    constexpr std::string_view close = "<|im_end|>";
    for (size_t at = source.find(open); at != std::string_view::npos; at = source.find(open, at + 1)) {
        size_t body = at + open.size();
        if (!skip_newline(source, body)) continue;
        const size_t end = source.find(close, body);
        if (end == std::string_view::npos) break;
        const std::string_view raw = source.substr(body, end - body);
        if (!raw.empty() && is_plain_literal_body(raw)) return unescape_jinja_literal(raw);
    }
    return {};
}

// The literal that follows `key` in the source, e.g. key `date_string = ` and source
// `date_string = "26 Jul 2024"` give "26 Jul 2024". Empty when `key` is not followed by one.
std::string find_literal_after(std::string_view source, std::string_view key) {
    for (size_t at = source.find(key); at != std::string_view::npos; at = source.find(key, at + 1)) {
        size_t open = at + key.size();
        while (open < source.size() && source[open] == ' ') ++open;
        if (open >= source.size() || (source[open] != '\'' && source[open] != '"')) continue;
        const char quote = source[open];
        for (size_t i = open + 1; i < source.size(); ++i) {
            if (source[i] == '\\') { ++i; continue; }
            if (source[i] == quote) return unescape_jinja_literal(source.substr(open + 1, i - open - 1));
        }
    }
    return {};
}

bool starts_with_system(const std::vector<ChatMessage>& messages) {
    return !messages.empty() && messages.front().role == "system";
}

}  // namespace

const char* chat_template_family_name(ChatTemplateFamily family) {
    switch (family) {
        case ChatTemplateFamily::chatml: return "chatml";
        case ChatTemplateFamily::llama3: return "llama3";
        case ChatTemplateFamily::gemma: return "gemma";
        case ChatTemplateFamily::llama2: return "llama2";
        case ChatTemplateFamily::phi3: return "phi3";
        case ChatTemplateFamily::mistral: return "mistral";
    }
    return "unknown";
}

ChatTemplate ChatTemplate::detect(std::string_view source, std::string bos_text, std::string eos_text, ChatTemplateFamily missing,
                                  std::string_view arch) {
    ChatTemplate t;
    t.bos_text_ = std::move(bos_text);
    t.eos_text_ = std::move(eos_text);
    // Order matters: the most specific markers first. <|im_sep|> marks Phi-4's ChatML variant,
    // whose turns differ from ChatML's, so it is not claimed as ChatML.
    if (contains(source, "<|start_header_id|>")) {
        t.family_ = ChatTemplateFamily::llama3;
        if (contains(source, "Cutting Knowledge Date")) {
            t.knowledge_date_ = find_literal_after(source, "date_string = ");
            if (t.knowledge_date_.empty()) t.knowledge_date_ = "26 Jul 2024";
        }
    } else if (contains(source, "<start_of_turn>")) {
        t.family_ = ChatTemplateFamily::gemma;
        std::string separator = find_literal_after(source, "first_user_prefix = messages[0]['content'] + ");
        if (!separator.empty()) t.gemma_system_separator_ = std::move(separator);
    } else if (contains(source, "<|user|>") && contains(source, "<|end|>")) {
        t.family_ = ChatTemplateFamily::phi3;
        t.phi3_skip_empty_system_ = contains(source, "message['role'] == 'system' and message['content']");
    } else if (contains(source, "[INST]")) {
        t.family_ = contains(source, "<<SYS>>") ? ChatTemplateFamily::llama2 : ChatTemplateFamily::mistral;
    } else if (contains(source, "<|im_start|>") && !contains(source, "<|im_sep|>")) {
        t.family_ = ChatTemplateFamily::chatml;
        t.default_system_ = find_chatml_default_system(source);
    } else if (!source.empty()) {
        t.family_ = ChatTemplateFamily::chatml;
        t.warning_ = "unrecognised chat template (no ChatML, Llama 3, Gemma, Llama 2/Mistral or Phi-3 markers); "
                     "using ChatML, which the model may not have been trained on";
    } else {
        t.family_ = missing;
        if (!arch.empty())
            t.warning_ = std::string("the file carries no chat template; using the ") + chat_template_family_name(missing) +
                         " template of its architecture (" + std::string(arch) + "), which a base model may not follow";
    }
    return t;
}

namespace {

// The prompt being written, and where the messages' own text sits in it.
struct RenderedChat {
    std::string text;
    std::vector<TextRange>* content = nullptr;

    void add(std::string_view s) { text += s; }
    void add_content(std::string_view s) {
        if (content && !s.empty()) content->push_back({text.size(), text.size() + s.size()});
        text += s;
    }
    // `whole` (already stripped), in which [offset, offset + length) is a message's text.
    void add_with_content(const std::string& whole, std::initializer_list<std::pair<size_t, size_t>> parts) {
        for (const auto& [offset, length] : parts)
            if (content && offset < whole.size() && length > 0)
                content->push_back({text.size() + offset, text.size() + std::min(whole.size(), offset + length)});
        text += whole;
    }
};

}  // namespace

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                 std::vector<TextRange>* content_ranges) const {
    RenderedChat out{{}, content_ranges};
    if (content_ranges) content_ranges->clear();
    switch (family_) {
        case ChatTemplateFamily::chatml: {
            // The default system turn is written inside the loop on its first pass, so an empty
            // conversation gets none.
            if (!messages.empty() && !default_system_.empty() && messages.front().role != "system")
                out.add("<|im_start|>system\n" + default_system_ + "<|im_end|>\n");
            for (const ChatMessage& m : messages) {
                out.add("<|im_start|>" + m.role + "\n");
                out.add_content(m.content);
                out.add("<|im_end|>\n");
            }
            if (add_generation_prompt) out.add("<|im_start|>assistant\n");
            break;
        }
        case ChatTemplateFamily::llama3: {
            size_t first = 0;
            if (!knowledge_date_.empty()) {
                // 3.1+: BOS, then a system turn that always exists and carries the date; the
                // user's system message (trimmed) goes at its end.
                const bool has_system = starts_with_system(messages);
                first = has_system ? 1 : 0;
                out.add(bos_text_ + "<|start_header_id|>system<|end_header_id|>\n\n");
                out.add("Cutting Knowledge Date: December 2023\nToday Date: " + knowledge_date_ + "\n\n");
                if (has_system) out.add_content(python_strip(messages.front().content));
                out.add("<|eot_id|>");
            }
            for (size_t i = first; i < messages.size(); ++i) {
                if (i == 0 && knowledge_date_.empty()) out.add(bos_text_);  // 3.0: BOS opens the first turn
                out.add("<|start_header_id|>" + messages[i].role + "<|end_header_id|>\n\n");
                out.add_content(python_strip(messages[i].content));
                out.add("<|eot_id|>");
            }
            if (add_generation_prompt) out.add("<|start_header_id|>assistant<|end_header_id|>\n\n");
            break;
        }
        case ChatTemplateFamily::gemma: {
            // Gemma 3 folds the system prompt (untrimmed) into the first turn; the turns' own
            // text is trimmed. The assistant is called "model".
            out.add(bos_text_);
            const size_t first = starts_with_system(messages) ? 1 : 0;
            for (size_t i = first; i < messages.size(); ++i) {
                const std::string role = messages[i].role == "assistant" ? std::string("model") : messages[i].role;
                out.add("<start_of_turn>" + role + "\n");
                if (i == first && first == 1) {
                    out.add_content(messages.front().content);
                    out.add(gemma_system_separator_);
                }
                out.add_content(python_strip(messages[i].content));
                out.add("<end_of_turn>\n");
            }
            if (add_generation_prompt) out.add("<start_of_turn>model\n");
            break;
        }
        case ChatTemplateFamily::llama2: {
            // Every user turn opens with BOS; the system prompt sits in <<SYS>> inside the first
            // turn, and the combined text is stripped. The template ignores add_generation_prompt:
            // " [/INST]" already hands over to the assistant.
            const bool has_system = starts_with_system(messages);
            for (size_t i = has_system ? 1 : 0; i < messages.size(); ++i) {
                const std::string& content = messages[i].content;
                const bool user = messages[i].role == "user";
                if (!user && messages[i].role != "assistant") continue;
                out.add(user ? bos_text_ + "[INST] " : std::string(" "));
                // The system block opens the turn after it, whoever speaks there; "<<SYS>>"
                // starts it, so only the end can be stripped.
                const std::string& system = has_system ? messages.front().content : content;
                const std::string head = has_system && i == 1 ? "<<SYS>>\n" + system + "\n<</SYS>>\n\n" : std::string();
                if (head.empty()) out.add_with_content(python_strip(content), {{0, content.size()}});
                else out.add_with_content(python_strip(head + content), {{8, system.size()}, {head.size(), content.size()}});
                out.add(user ? std::string(" [/INST]") : " " + eos_text_);
            }
            break;
        }
        case ChatTemplateFamily::mistral: {
            // v0.1: one BOS, no stripping, the answer follows " [/INST]" directly. The template
            // rejects a system role; we fold it into the first user turn instead of failing.
            out.add(bos_text_);
            const bool has_system = starts_with_system(messages);
            bool system_pending = has_system;
            for (size_t i = has_system ? 1 : 0; i < messages.size(); ++i) {
                if (messages[i].role == "user") {
                    out.add("[INST] ");
                    if (system_pending) {
                        out.add_content(messages.front().content);
                        out.add("\n\n");
                        system_pending = false;
                    }
                    out.add_content(messages[i].content);
                    out.add(" [/INST]");
                } else if (messages[i].role == "assistant") {
                    out.add_content(messages[i].content);
                    out.add(eos_text_);
                }
            }
            break;
        }
        case ChatTemplateFamily::phi3: {
            // Phi-3/3.5-mini: Phi-3.5's template drops an empty system message (Phi-3's keeps
            // it); without a generation prompt the conversation is closed with EOS.
            for (const ChatMessage& m : messages) {
                const bool system = m.role == "system" && !(m.content.empty() && phi3_skip_empty_system_);
                const bool known = m.role == "user" || m.role == "assistant" || system;
                if (!known) continue;
                out.add("<|" + m.role + "|>\n");
                out.add_content(m.content);
                out.add("<|end|>\n");
            }
            out.add(add_generation_prompt ? std::string("<|assistant|>\n") : eos_text_);
            break;
        }
    }
    return std::move(out.text);
}

std::string ChatTemplate::end_of_turn() const {
    switch (family_) {
        case ChatTemplateFamily::chatml: return "<|im_end|>";
        case ChatTemplateFamily::llama3: return "<|eot_id|>";
        case ChatTemplateFamily::gemma: return "<end_of_turn>";
        case ChatTemplateFamily::phi3: return "<|end|>";
        case ChatTemplateFamily::llama2:
        case ChatTemplateFamily::mistral: return eos_text_.empty() ? std::string("</s>") : eos_text_;
    }
    return "<|im_end|>";
}

}  // namespace workbench
