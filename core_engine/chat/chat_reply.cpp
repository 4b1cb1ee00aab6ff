// Reading a reply: a small state machine over the streamed text (content, thinking, a Hermes
// call being written, or a whole-reply form read at the end), holding back only a tail that
// could still grow into a marker.
#include "workbench/chat_reply.h"

#include <algorithm>

namespace workbench {
namespace {

constexpr std::string_view kThinkOpen = "<think>", kThinkClose = "</think>";
constexpr std::string_view kCallOpen = "<tool_call>", kCallClose = "</tool_call>";
constexpr std::string_view kMistralCalls = "[TOOL_CALLS]", kMistralArgs = "[ARGS]", kPythonTag = "<|python_tag|>";

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view ltrim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    return s;
}

// How many bytes at the end of `text` could begin `marker` (held back until the next text).
size_t partial_marker(std::string_view text, std::string_view marker) {
    for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n)
        if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
    return 0;
}

// {"name": …, "arguments" | "parameters": {…} or a JSON string} → a call; false when it is not one.
bool read_call(const Json& j, ToolCall& out) {
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty()) return false;
    const Json* args = nullptr;
    for (const char* key : {"arguments", "parameters"})
        if (j.contains(key)) args = &j[key];
    out.name = j["name"].get<std::string>();
    if (!args || args->is_null()) {
        out.arguments = "{}";
    } else if (args->is_object()) {
        out.arguments = dump_json(*args);
    } else if (args->is_string()) {
        auto inner = parse_json(args->get<std::string>());
        if (!inner.ok() || !inner->is_object()) return false;
        out.arguments = dump_json(*inner);
    } else {
        return false;
    }
    if (j.contains("id") && j["id"].is_string()) out.id = j["id"].get<std::string>();
    return true;
}

bool read_call_text(std::string_view text, ToolCall& out) {
    auto j = parse_json(text);
    return j.ok() && read_call(*j, out);
}

// Llama 3.x: one JSON call, or several separated by ';' (after an optional <|python_tag|>). A
// bare JSON answer is a call only with "parameters" (or "arguments") beside its "name": an
// object that merely has a name (a person, say) stays the answer.
bool read_llama3_call(std::string_view text, ToolCall& out) {
    auto j = parse_json(text);
    return j.ok() && j->is_object() && (j->contains("parameters") || j->contains("arguments")) && read_call(*j, out);
}

bool read_llama3(std::string_view text, std::vector<ToolCall>& calls) {
    text = ltrim(text);
    if (text.substr(0, kPythonTag.size()) == kPythonTag) text.remove_prefix(kPythonTag.size());
    ToolCall one;
    if (read_llama3_call(text, one)) {
        calls.push_back(std::move(one));
        return true;
    }
    std::vector<ToolCall> found;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find(';', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view part = ltrim(text.substr(start, end - start));
        ToolCall c;
        if (!part.empty() && !read_llama3_call(part, c)) return false;
        if (!part.empty()) found.push_back(std::move(c));
        start = end + 1;
    }
    if (found.empty()) return false;
    calls.insert(calls.end(), found.begin(), found.end());
    return true;
}

// Mistral: after [TOOL_CALLS], a JSON array of calls (Nemo) or name[ARGS]{…} (Small 3.2), repeated.
bool read_mistral(std::string_view text, std::vector<ToolCall>& calls) {
    std::vector<ToolCall> found;
    std::string_view rest = ltrim(text);
    if (!rest.empty() && rest.front() == '[') {
        auto j = parse_json(rest);
        if (!j.ok() || !j->is_array() || j->empty()) return false;
        for (const Json& e : *j) {
            ToolCall c;
            if (!read_call(e, c)) return false;
            found.push_back(std::move(c));
        }
    } else {
        while (!rest.empty()) {
            const size_t args = rest.find(kMistralArgs);
            if (args == std::string_view::npos) return false;
            ToolCall c;
            c.name = std::string(ltrim(rest.substr(0, args)));
            rest.remove_prefix(args + kMistralArgs.size());
            size_t next = rest.find(kMistralCalls);
            const std::string_view body = rest.substr(0, next);
            auto j = parse_json(body);
            if (c.name.empty() || !j.ok() || !j->is_object()) return false;
            c.arguments = dump_json(*j);
            found.push_back(std::move(c));
            rest = next == std::string_view::npos ? std::string_view() : ltrim(rest.substr(next + kMistralCalls.size()));
        }
    }
    if (found.empty()) return false;
    calls.insert(calls.end(), found.begin(), found.end());
    return true;
}

// gpt-oss's harmony: messages "<|channel|>NAME[ to=functions.X]…<|message|>BODY" ended by <|end|>,
// <|call|> or <|return|>, each after "<|start|>assistant" but the first.
void read_harmony(std::string_view text, bool tools, ChatReply& out) {
    constexpr std::string_view kStart = "<|start|>", kChannel = "<|channel|>", kMessage = "<|message|>";
    if (text.find(kChannel) == std::string_view::npos) {
        out.content += text;
        return;
    }
    size_t at = 0;
    while (at < text.size()) {
        size_t next = text.find(kStart, at);
        if (next == std::string_view::npos) next = text.size();
        const std::string_view message = text.substr(at, next - at);
        at = next + (next < text.size() ? kStart.size() : 0);
        const size_t channel = message.find(kChannel), body_at = message.find(kMessage);
        if (channel == std::string_view::npos || body_at == std::string_view::npos || body_at < channel) continue;
        const std::string_view header = message.substr(0, body_at);
        std::string_view body = message.substr(body_at + kMessage.size());
        for (std::string_view end : {"<|end|>", "<|call|>", "<|return|>"})
            if (const size_t e = body.find(end); e != std::string_view::npos) body = body.substr(0, e);
        const std::string_view name = header.substr(channel + kChannel.size());
        const size_t to = header.find("to=functions.");
        if (to != std::string_view::npos && tools) {
            std::string_view fn = header.substr(to + 13);
            fn = fn.substr(0, std::min(fn.find_first_of(" <"), fn.size()));
            auto j = parse_json(body);
            if (!fn.empty() && j.ok() && j->is_object()) {
                out.tool_calls.push_back({"", std::string(fn), dump_json(*j)});
                continue;
            }
        }
        if (name.substr(0, 8) == "analysis") out.reasoning += body;
        else out.content += body;
    }
}

void append(ChatReply& to, ChatReply from) {
    to.content += from.content;
    to.reasoning += from.reasoning;
    for (ToolCall& c : from.tool_calls) to.tool_calls.push_back(std::move(c));
}

}  // namespace

const char* tool_call_format_name(ToolCallFormat format) {
    switch (format) {
        case ToolCallFormat::hermes: return "hermes";
        case ToolCallFormat::llama3_json: return "llama3_json";
        case ToolCallFormat::mistral: return "mistral";
        case ToolCallFormat::harmony: return "harmony";
    }
    return "?";
}

ChatFormat chat_format_of(std::string_view source) {
    ChatFormat f;
    f.template_renders_tools = source.find("tools") != std::string_view::npos;
    f.think_tags = source.find("<think>") != std::string_view::npos || source.find("</think>") != std::string_view::npos;
    if (source.find("<|channel|>") != std::string_view::npos) f.tools = ToolCallFormat::harmony;
    else if (source.find(kMistralCalls) != std::string_view::npos) f.tools = ToolCallFormat::mistral;
    else if (source.find("<tool_call>") != std::string_view::npos) f.tools = ToolCallFormat::hermes;
    else if (source.find("<|python_tag|>") != std::string_view::npos || source.find("\"parameters\": ") != std::string_view::npos)
        f.tools = ToolCallFormat::llama3_json;
    if (!f.template_renders_tools) f.tools = ToolCallFormat::hermes;   // we describe the tools: the Hermes form
    return f;
}

bool ends_inside_thinking(std::string_view tail) {
    const size_t open = tail.rfind(kThinkOpen), close = tail.rfind(kThinkClose);
    return open != std::string_view::npos && (close == std::string_view::npos || close < open);
}

std::string chat_content_text(const Json& content) {
    if (content.is_string()) return content.get<std::string>();
    std::string text;
    if (content.is_array())
        for (const Json& part : content)
            if (part.is_object() && part.contains("text") && part["text"].is_string()) text += part["text"].get<std::string>();
    return text;
}

ChatReplyStream::ChatReplyStream(ChatFormat format, bool tools_offered, bool thinking_open)
    : format_(format), tools_(tools_offered), mode_(thinking_open ? Mode::reasoning : Mode::content) {
    if (format_.tools == ToolCallFormat::harmony) mode_ = Mode::whole;
}

ChatReply ChatReplyStream::push(std::string_view text) {
    pending_ += text;
    ChatReply out;
    drain(out, false);
    return out;
}

ChatReply ChatReplyStream::finish() {
    ChatReply out;
    drain(out, true);
    if (mode_ == Mode::whole && !whole_.empty()) {
        const size_t before = out.tool_calls.size();
        if (format_.tools == ToolCallFormat::harmony) {
            read_harmony(whole_, tools_, out);
        } else if (format_.tools == ToolCallFormat::mistral) {
            if (!read_mistral(whole_.substr(kMistralCalls.size()), out.tool_calls)) out.content += whole_;
        } else if (!read_llama3(whole_, out.tool_calls)) {
            out.content += whole_;
        }
        n_calls_ += static_cast<int32_t>(out.tool_calls.size() - before);
        whole_.clear();
    }
    return out;
}

void ChatReplyStream::drain(ChatReply& out, bool final) {
    while (true) {
        switch (mode_) {
            case Mode::whole:
                whole_ += pending_;
                pending_.clear();
                return;
            case Mode::reasoning: {
                const size_t close = pending_.find(kThinkClose);
                if (close == std::string::npos) {
                    const size_t keep = final ? 0 : partial_marker(pending_, kThinkClose);
                    out.reasoning += pending_.substr(0, pending_.size() - keep);
                    pending_.erase(0, pending_.size() - keep);
                    return;
                }
                out.reasoning += pending_.substr(0, close);
                pending_.erase(0, close + kThinkClose.size());
                mode_ = Mode::content;
                at_start_ = after_block_ = true;
                continue;
            }
            case Mode::tool_call: {
                const size_t close = pending_.find(kCallClose, searched_);
                if (close == std::string::npos && !final) {
                    searched_ = pending_.size() >= kCallClose.size() ? pending_.size() - kCallClose.size() + 1 : 0;
                    return;
                }
                searched_ = 0;
                const std::string body = pending_.substr(0, close);
                ToolCall c;
                if (read_call_text(body, c)) {
                    out.tool_calls.push_back(std::move(c));
                    ++n_calls_;
                } else {   // malformed: the model's text as it wrote it
                    out.content += std::string(kCallOpen) + body + (close == std::string::npos ? "" : std::string(kCallClose));
                }
                pending_.erase(0, close == std::string::npos ? pending_.size() : close + kCallClose.size());
                mode_ = Mode::content;
                at_start_ = after_block_ = true;
                continue;
            }
            case Mode::content: {
                if (at_start_) {
                    const std::string_view head = ltrim(pending_);
                    if (head.empty() && !final) return;   // only whitespace so far: what follows decides
                    if (head.empty()) {
                        if (after_block_) pending_.clear();
                        at_start_ = after_block_ = false;
                        continue;
                    }
                    auto could_be = [&](std::string_view marker) { return !final && head.size() < marker.size() && marker.substr(0, head.size()) == head; };
                    if (head.substr(0, kThinkOpen.size()) == kThinkOpen && !spoke_) {
                        pending_.erase(0, pending_.size() - head.size() + kThinkOpen.size());
                        mode_ = Mode::reasoning;
                        continue;
                    }
                    const bool llama3 = tools_ && format_.tools == ToolCallFormat::llama3_json;
                    if (could_be(kThinkOpen) || (llama3 && could_be(kPythonTag))) return;
                    if (llama3 && (head.front() == '{' || head.substr(0, kPythonTag.size()) == kPythonTag)) {
                        pending_.erase(0, pending_.size() - head.size());
                        mode_ = Mode::whole;
                        continue;
                    }
                    // Leading blank lines after thinking or a call are layout, not answer.
                    if (after_block_) pending_.erase(0, pending_.size() - head.size());
                    after_block_ = false;
                    at_start_ = false;
                    spoke_ = true;
                }
                std::string_view marker;
                if (tools_ && format_.tools == ToolCallFormat::hermes) marker = kCallOpen;
                if (tools_ && format_.tools == ToolCallFormat::mistral) marker = kMistralCalls;
                const size_t at = marker.empty() ? std::string::npos : pending_.find(marker);
                if (at == std::string::npos) {
                    const size_t keep = final || marker.empty() ? 0 : partial_marker(pending_, marker);
                    out.content += pending_.substr(0, pending_.size() - keep);
                    pending_.erase(0, pending_.size() - keep);
                    return;
                }
                out.content += pending_.substr(0, at);
                if (format_.tools == ToolCallFormat::mistral) {
                    whole_ = pending_.substr(at);
                    pending_.clear();
                    mode_ = Mode::whole;
                    return;
                }
                pending_.erase(0, at + marker.size());
                mode_ = Mode::tool_call;
                continue;
            }
        }
    }
}

ChatReply parse_chat_reply(const ChatFormat& format, std::string_view text, bool tools_offered, bool thinking_open) {
    ChatReplyStream stream(format, tools_offered, thinking_open);
    ChatReply out = stream.push(text);
    append(out, stream.finish());
    return out;
}

}  // namespace workbench
