// Response bodies in the shapes OpenAI's clients parse (and vLLM writes): field names, nulls
// where a value does not apply, and the chunk sequence of a stream.
#include "openai_response.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

namespace wbserver {
namespace {

using workbench::Json;

Json bytes_of(const std::string& s) {
    Json out = Json::array();
    for (unsigned char c : s) out.push_back(static_cast<int>(c));
    return out;
}

Json logprob_value(float lp) { return workbench::json_number(static_cast<double>(lp)); }

}  // namespace

const char* finish_reason(workbench::StopReason reason) {
    switch (reason) {
        case workbench::StopReason::end_of_generation:
        case workbench::StopReason::stop_string: return "stop";
        case workbench::StopReason::max_tokens:
        case workbench::StopReason::context_full: return "length";
        case workbench::StopReason::cancelled: return "abort";
    }
    return "stop";
}

std::string new_response_id(Endpoint endpoint) {
    static std::atomic<uint64_t> counter{0};
    static const uint64_t salt = std::random_device{}();
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s-%016llx%06llx", endpoint == Endpoint::chat_completions ? "chatcmpl" : "cmpl",
                  static_cast<unsigned long long>(salt), static_cast<unsigned long long>(++counter & 0xffffff));
    return buf;
}

Json usage_json(int32_t n_prompt, int32_t n_completion) {
    return {{"prompt_tokens", n_prompt}, {"completion_tokens", n_completion}, {"total_tokens", n_prompt + n_completion}};
}

Json logprobs_json(Endpoint endpoint, const std::vector<const ChannelEvent*>& tokens, bool asked, size_t text_offset) {
    if (!asked) return nullptr;
    if (endpoint == Endpoint::chat_completions) {
        Json content = Json::array();
        for (const ChannelEvent* t : tokens) {
            if (!t->logprob) continue;
            Json top = Json::array();
            for (const auto& alt : t->top_logprobs)
                top.push_back({{"token", alt.token}, {"logprob", logprob_value(alt.logprob)}, {"bytes", bytes_of(alt.token)}});
            content.push_back({{"token", t->logprob->token},
                               {"logprob", logprob_value(t->logprob->logprob)},
                               {"bytes", bytes_of(t->logprob->token)},
                               {"top_logprobs", top}});
        }
        return {{"content", content}};
    }
    Json out = {{"tokens", Json::array()}, {"token_logprobs", Json::array()}, {"top_logprobs", Json::array()}, {"text_offset", Json::array()}};
    size_t offset = text_offset;
    for (const ChannelEvent* t : tokens) {
        if (!t->logprob) continue;
        out["tokens"].push_back(t->logprob->token);
        out["token_logprobs"].push_back(t->no_logprob ? Json(nullptr) : logprob_value(t->logprob->logprob));
        Json top = Json::object();
        for (const auto& alt : t->top_logprobs) top[alt.token] = logprob_value(alt.logprob);
        out["top_logprobs"].push_back(t->no_logprob ? Json(nullptr) : top);
        out["text_offset"].push_back(offset);
        offset += t->logprob->token.size();
    }
    return out;
}

Json completion_json(const ResponseHeader& h, const std::vector<ChoiceState>& choices, bool logprobs, int32_t n_prompt, int32_t n_completion_all) {
    const bool chat = h.endpoint == Endpoint::chat_completions;
    Json out = {{"id", h.id}, {"object", chat ? "chat.completion" : "text_completion"}, {"created", h.created}, {"model", h.model}};
    Json list = Json::array();
    int32_t n_completion = 0;
    for (size_t i = 0; i < choices.size(); ++i) {
        const ChoiceState& c = choices[i];
        std::vector<const ChannelEvent*> tokens;
        for (const ChannelEvent& t : c.tokens) tokens.push_back(&t);
        Json choice = {{"index", static_cast<int>(i)}};
        if (chat && c.reply) {
            Json message = {{"role", "assistant"}, {"content", c.reply->content}};
            if (!c.reply->reasoning.empty()) message["reasoning_content"] = c.reply->reasoning;
            if (!c.reply->tool_calls.empty()) {
                if (c.reply->content.empty()) message["content"] = nullptr;   // as OpenAI answers a bare call
                message["tool_calls"] = Json::array();
                for (const workbench::ToolCall& call : c.reply->tool_calls) message["tool_calls"].push_back(tool_call_json(call));
            }
            choice["message"] = std::move(message);
        } else if (chat) {
            choice["message"] = {{"role", "assistant"}, {"content", c.text}};
        }
        else if (!chat) choice["text"] = c.text;
        choice["logprobs"] = logprobs_json(h.endpoint, tokens, logprobs, 0);
        choice["finish_reason"] = c.finish_reason;
        list.push_back(std::move(choice));
        n_completion += c.n_output_tokens;
    }
    out["choices"] = std::move(list);
    out["usage"] = usage_json(n_prompt, n_completion_all >= 0 ? n_completion_all : n_completion);
    return out;
}

Json chunk_json(const ResponseHeader& h, int32_t index, const std::string* delta_text, bool with_role, const Json& logprobs,
                const std::string& finish, bool usage_null) {
    const bool chat = h.endpoint == Endpoint::chat_completions;
    Json out = {{"id", h.id}, {"object", chat ? "chat.completion.chunk" : "text_completion"}, {"created", h.created}, {"model", h.model}};
    Json choice = {{"index", index}};
    if (chat) {
        Json delta = Json::object();
        if (with_role) delta["role"] = "assistant";
        if (delta_text) delta["content"] = *delta_text;
        choice["delta"] = std::move(delta);
    } else {
        choice["text"] = delta_text ? *delta_text : std::string();
    }
    choice["logprobs"] = logprobs;
    choice["finish_reason"] = finish.empty() ? Json(nullptr) : Json(finish);
    out["choices"] = Json::array({std::move(choice)});
    if (usage_null) out["usage"] = nullptr;
    return out;
}

Json delta_chunk_json(const ResponseHeader& h, int32_t index, Json delta, const Json& logprobs, bool usage_null) {
    Json out = {{"id", h.id}, {"object", "chat.completion.chunk"}, {"created", h.created}, {"model", h.model}};
    out["choices"] = Json::array({{{"index", index}, {"delta", std::move(delta)}, {"logprobs", logprobs}, {"finish_reason", nullptr}}});
    if (usage_null) out["usage"] = nullptr;
    return out;
}

Json tool_call_json(const workbench::ToolCall& call, int32_t index) {
    Json out = Json::object();
    if (index >= 0) out["index"] = index;
    out["id"] = call.id;
    out["type"] = "function";
    out["function"] = {{"name", call.name}, {"arguments", call.arguments}};
    return out;
}

Json usage_chunk_json(const ResponseHeader& h, int32_t n_prompt, int32_t n_completion) {
    const bool chat = h.endpoint == Endpoint::chat_completions;
    return {{"id", h.id},
            {"object", chat ? "chat.completion.chunk" : "text_completion"},
            {"created", h.created},
            {"model", h.model},
            {"choices", Json::array()},
            {"usage", usage_json(n_prompt, n_completion)}};
}

std::string sse(const Json& value) { return "data: " + workbench::dump_json(value) + "\n\n"; }

}  // namespace wbserver
