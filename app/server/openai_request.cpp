// Reading an OpenAI request body field by field. Every refusal names the field (OpenAI's "param")
// and what it must be; a field's type and range are checked before its value is used.
#include "openai_request.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "workbench/chat_reply.h"
#include "workbench/structured_output.h"

namespace wbserver {
namespace {

using workbench::Json;

ApiError bad(std::string param, std::string message) {
    ApiError e;
    e.message = std::move(message);
    e.param = std::move(param);
    return e;
}

// A member that is present and not null.
const Json* field(const Json& body, const char* key) {
    const auto it = body.find(key);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

bool whole(const Json& v) {
    if (v.is_number_integer() || v.is_number_unsigned()) return true;
    if (!v.is_number_float()) return false;
    const double x = v.get<double>();
    return std::isfinite(x) && x == std::floor(x);
}

// Each reader returns an error, or nothing after storing the value.
std::optional<ApiError> read_number(const Json& body, const char* key, double lo, double hi, float& out) {
    const Json* v = field(body, key);
    if (!v) return std::nullopt;
    if (!v->is_number()) return bad(key, std::string("'") + key + "' must be a number");
    const double x = v->get<double>();
    if (!(x >= lo && x <= hi))
        return bad(key, std::string("'") + key + "' must be from " + workbench::dump_json(workbench::json_number(lo)) + " to " +
                            workbench::dump_json(workbench::json_number(hi)) + " (got " + workbench::dump_json(*v) + ")");
    out = static_cast<float>(x);
    return std::nullopt;
}

std::optional<ApiError> read_int(const Json& body, const char* key, int64_t lo, int64_t hi, std::optional<int64_t>& out) {
    const Json* v = field(body, key);
    if (!v) return std::nullopt;
    if (!whole(*v)) return bad(key, std::string("'") + key + "' must be a whole number (got " + workbench::dump_json(*v) + ")");
    const double x = v->get<double>();
    if (!(x >= static_cast<double>(lo) && x <= static_cast<double>(hi)))
        return bad(key, std::string("'") + key + "' must be from " + std::to_string(lo) + " to " + std::to_string(hi) + " (got " +
                            workbench::dump_json(*v) + ")");
    out = v->is_number_integer() ? v->get<int64_t>() : static_cast<int64_t>(x);
    return std::nullopt;
}

std::optional<ApiError> read_bool(const Json& body, const char* key, bool& out) {
    const Json* v = field(body, key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return bad(key, std::string("'") + key + "' must be true or false");
    out = v->get<bool>();
    return std::nullopt;
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts (joined by
// newlines, as vLLM joins them).
std::optional<ApiError> read_content(const Json& content, const std::string& param, std::string& out) {
    if (content.is_string()) {
        out = content.get<std::string>();
        return std::nullopt;
    }
    if (!content.is_array()) return bad(param, "'" + param + "' must be a string or an array of text parts");
    for (size_t i = 0; i < content.size(); ++i) {
        const Json& part = content[i];
        const std::string where = param + "[" + std::to_string(i) + "]";
        if (!part.is_object()) return bad(where, "'" + where + "' must be an object {\"type\": \"text\", \"text\": ...}");
        const Json* type = field(part, "type");
        if (!type || !type->is_string() || type->get<std::string>() != "text")
            return bad(where + ".type", "'" + where + ".type' must be \"text\" (this model reads text only)");
        const Json* text = field(part, "text");
        if (!text || !text->is_string()) return bad(where + ".text", "'" + where + ".text' must be a string");
        if (i > 0) out += "\n";
        out += text->get<std::string>();
    }
    return std::nullopt;
}

std::optional<ApiError> read_messages(const Json& body, const RequestLimits& limits, ApiRequest& out) {
    const Json* messages = field(body, "messages");
    if (!messages) return bad("messages", "'messages' is required: an array of {\"role\", \"content\"}");
    if (!messages->is_array()) return bad("messages", "'messages' must be an array of {\"role\", \"content\"}");
    if (messages->empty()) return bad("messages", "'messages' must not be empty");
    if (messages->size() > static_cast<size_t>(limits.max_messages))
        return bad("messages", "'messages' has " + std::to_string(messages->size()) + " entries; at most " +
                                   std::to_string(limits.max_messages) + " are accepted");
    for (size_t i = 0; i < messages->size(); ++i) {
        const Json& m = (*messages)[i];
        const std::string where = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) return bad(where, "'" + where + "' must be an object {\"role\", \"content\"}");
        const Json* role = field(m, "role");
        if (!role || !role->is_string()) return bad(where + ".role", "'" + where + ".role' must be a string");
        std::string r = role->get<std::string>();
        if (r == "developer") r = "system";   // OpenAI's newer name for the system role
        if (r != "system" && r != "user" && r != "assistant" && r != "tool")
            return bad(where + ".role",
                       "'" + where + ".role' must be \"system\", \"developer\", \"user\", \"assistant\" or \"tool\" (got \"" + r + "\")");
        const Json* content = field(m, "content");
        const Json* calls = r == "assistant" ? field(m, "tool_calls") : nullptr;
        if (!content && !calls) return bad(where + ".content", "'" + where + ".content' is required");
        workbench::ChatMessage message{r, {}};
        if (content)
            if (auto e = read_content(*content, where + ".content", message.content)) return e;
        Json templated = {{"role", message.role}, {"content", message.content}};
        if (r == "tool") {
            const Json* id = field(m, "tool_call_id");
            if (!id || !id->is_string()) return bad(where + ".tool_call_id", "'" + where + ".tool_call_id' is required: the id of the call this answers");
            templated["tool_call_id"] = *id;
            if (const Json* name = field(m, "name"); name && name->is_string()) templated["name"] = *name;
        }
        if (calls) {
            if (!calls->is_array()) return bad(where + ".tool_calls", "'" + where + ".tool_calls' must be an array");
            for (size_t k = 0; k < calls->size(); ++k) {
                const Json& c = (*calls)[k];
                const std::string at = where + ".tool_calls[" + std::to_string(k) + "]";
                const Json* fn = c.is_object() ? field(c, "function") : nullptr;
                const Json* name = fn && fn->is_object() ? field(*fn, "name") : nullptr;
                const Json* args = fn && fn->is_object() ? field(*fn, "arguments") : nullptr;
                if (!name || !name->is_string()) return bad(at + ".function.name", "'" + at + ".function.name' must be a string");
                if (args && !args->is_string() && !args->is_object())
                    return bad(at + ".function.arguments", "'" + at + ".function.arguments' must be a JSON text (a string)");
            }
            templated["tool_calls"] = *calls;
        }
        if (const Json* reasoning = field(m, "reasoning_content"); reasoning && reasoning->is_string() && r == "assistant")
            templated["reasoning_content"] = *reasoning;
        out.template_messages.push_back(std::move(templated));
        out.messages.push_back(std::move(message));
    }
    if (const Json* kwargs = field(body, "chat_template_kwargs")) {
        if (!kwargs->is_object()) return bad("chat_template_kwargs", "'chat_template_kwargs' must be an object of the template's variables");
        out.template_kwargs = *kwargs;
    }
    return std::nullopt;
}

// tools, tool_choice, parallel_tool_calls.
std::optional<ApiError> read_tools(const Json& body, ApiRequest& out) {
    if (const Json* tools = field(body, "tools")) {
        std::string where;
        if (const workbench::Status s = workbench::check_tools(*tools, &where); !s.ok()) return bad(where, s.message());
        out.tools = *tools;
    }
    if (auto e = read_bool(body, "parallel_tool_calls", out.parallel_tool_calls)) return e;
    if (const Json* choice = field(body, "tool_choice")) {
        using C = ApiRequest::ToolChoice;
        if (choice->is_string() && (*choice == "none" || *choice == "auto" || *choice == "required")) {
            out.tool_choice = *choice == "none" ? C::none : *choice == "auto" ? C::automatic : C::required;
        } else if (choice->is_object() && field(*choice, "function") && (*choice)["function"].is_object() &&
                   field((*choice)["function"], "name") && (*choice)["function"]["name"].is_string()) {
            out.tool_choice = C::named;
            out.tool_name = (*choice)["function"]["name"].get<std::string>();
        } else {
            return bad("tool_choice", "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": …}}");
        }
        if ((out.tool_choice == C::required || out.tool_choice == C::named) && out.tools.empty())
            return bad("tool_choice", "'tool_choice' asks for a call but no 'tools' are given");
        if (out.tool_choice == C::named &&
            std::none_of(out.tools.begin(), out.tools.end(), [&](const Json& t) { return t["function"]["name"] == out.tool_name; }))
            return bad("tool_choice", "'tool_choice' names the function '" + out.tool_name + "', which is not among 'tools'");
    }
    if (out.tool_choice == ApiRequest::ToolChoice::none) out.tools = Json::array();   // not offered at all
    return std::nullopt;
}

// response_format (json_object, json_schema) or a GBNF "grammar": the grammar the reply follows.
std::optional<ApiError> read_structured_output(const Json& body, ApiRequest& out) {
    const Json* format = field(body, "response_format");
    const Json* grammar = field(body, "grammar");
    if (format && grammar) return bad("grammar", "give 'response_format' or 'grammar', not both");
    if (grammar) {
        if (!grammar->is_string() || grammar->get<std::string>().empty()) return bad("grammar", "'grammar' must be a GBNF grammar (a non-empty string)");
        if (const workbench::Status s = workbench::check_grammar(grammar->get<std::string>()); !s.ok()) return bad("grammar", "'grammar': " + s.message());
        out.grammar = grammar->get<std::string>();
        return std::nullopt;
    }
    if (!format) return std::nullopt;
    const Json* type = format->is_object() ? field(*format, "type") : nullptr;
    if (!type || !type->is_string())
        return bad("response_format", "'response_format' must be {\"type\": \"text\" | \"json_object\" | \"json_schema\", …}");
    const std::string t = type->get<std::string>();
    if (t == "text") return std::nullopt;
    if (t == "json_object") {
        out.grammar = workbench::json_object_grammar();
        return std::nullopt;
    }
    if (t != "json_schema") return bad("response_format.type", "'response_format.type' must be \"text\", \"json_object\" or \"json_schema\" (got \"" + t + "\")");
    const Json* spec = field(*format, "json_schema");
    if (!spec || !spec->is_object()) return bad("response_format.json_schema", "'response_format.json_schema' must be an object {\"name\", \"schema\"}");
    const Json* schema = field(*spec, "schema");
    if (!schema) return bad("response_format.json_schema.schema", "'response_format.json_schema.schema' is required: the JSON Schema of the reply");
    auto g = workbench::json_schema_grammar(*schema);
    if (!g.ok()) return bad("response_format.json_schema.schema", "'response_format.json_schema.schema': " + g.status().message());
    out.grammar = std::move(*g);
    return std::nullopt;
}

std::optional<ApiError> read_prompt(const Json& body, const RequestLimits& limits, ApiRequest& out) {
    const Json* prompt = field(body, "prompt");
    if (!prompt) return bad("prompt", "'prompt' is required: a string or an array of token ids");
    if (prompt->is_string()) {
        out.prompt_text = prompt->get<std::string>();
        if (out.prompt_text.empty()) return bad("prompt", "'prompt' must not be empty");
        return std::nullopt;
    }
    if (!prompt->is_array()) return bad("prompt", "'prompt' must be a string or an array of token ids");
    if (prompt->empty()) return bad("prompt", "'prompt' must not be empty");
    if (prompt->size() > static_cast<size_t>(limits.max_prompt_token_ids))
        return bad("prompt", "'prompt' has " + std::to_string(prompt->size()) + " token ids; at most " +
                                 std::to_string(limits.max_prompt_token_ids) + " are accepted");
    std::vector<workbench::TokenId> ids;
    ids.reserve(prompt->size());
    for (size_t i = 0; i < prompt->size(); ++i) {
        const Json& t = (*prompt)[i];
        if (!whole(t) || t.get<double>() < 0 || t.get<double>() > std::numeric_limits<int32_t>::max())
            return bad("prompt", "'prompt[" + std::to_string(i) + "]' must be a token id (a whole number ≥ 0); one string or "
                                 "one array of token ids per request");
        ids.push_back(static_cast<workbench::TokenId>(t.get<double>()));
    }
    out.prompt_tokens = std::move(ids);
    return std::nullopt;
}

std::optional<ApiError> read_stop(const Json& body, const RequestLimits& limits, ApiRequest& out) {
    const Json* stop = field(body, "stop");
    if (!stop) return std::nullopt;
    std::vector<const Json*> items;
    if (stop->is_string()) items.push_back(stop);
    else if (stop->is_array())
        for (const Json& s : *stop) items.push_back(&s);
    else return bad("stop", "'stop' must be a string or an array of strings");
    if (items.size() > static_cast<size_t>(limits.max_stop_strings))
        return bad("stop", "'stop' has " + std::to_string(items.size()) + " strings; at most " + std::to_string(limits.max_stop_strings) +
                               " are accepted");
    for (const Json* s : items) {
        if (!s->is_string()) return bad("stop", "'stop' must be a string or an array of strings");
        const std::string text = s->get<std::string>();
        if (text.empty()) return bad("stop", "'stop' strings must not be empty");
        if (text.size() > static_cast<size_t>(limits.max_stop_bytes))
            return bad("stop", "'stop' strings must be at most " + std::to_string(limits.max_stop_bytes) + " bytes");
        out.stop.push_back(text);
    }
    return std::nullopt;
}

std::optional<ApiError> read_logprobs(const Json& body, const RequestLimits& limits, ApiRequest& out) {
    std::optional<int64_t> top;
    if (out.endpoint == Endpoint::chat_completions) {
        if (auto e = read_bool(body, "logprobs", out.logprobs)) return e;
        if (auto e = read_int(body, "top_logprobs", 0, limits.max_top_logprobs, top)) return e;
        if (top && !out.logprobs) return bad("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    } else {
        if (auto e = read_int(body, "logprobs", 0, limits.max_top_logprobs, top)) return e;
        out.logprobs = top.has_value();
    }
    out.top_logprobs = static_cast<int32_t>(top.value_or(0));
    return std::nullopt;
}

std::optional<ApiError> read_sampling(const Json& body, ApiRequest& out) {
    workbench::SamplingParams& s = out.sampling;
    s.temperature = 1.0f;   // OpenAI's defaults, as vLLM takes them
    s.top_p = 1.0f;
    s.top_k = 0;
    s.min_p = 0.0f;
    if (auto e = read_number(body, "temperature", 0, 2, s.temperature)) return e;
    if (auto e = read_number(body, "top_p", 0, 1, s.top_p)) return e;
    if (field(body, "top_p") && s.top_p <= 0) return bad("top_p", "'top_p' must be above 0 (1 keeps every token)");
    std::optional<int64_t> top_k;
    if (auto e = read_int(body, "top_k", -1, std::numeric_limits<int32_t>::max(), top_k)) return e;
    if (top_k) s.top_k = *top_k < 0 ? 0 : static_cast<int32_t>(*top_k);   // vLLM: -1 (and 0) mean off
    if (auto e = read_number(body, "min_p", 0, 1, s.min_p)) return e;
    if (auto e = read_number(body, "presence_penalty", -2, 2, s.presence_penalty)) return e;
    if (auto e = read_number(body, "frequency_penalty", -2, 2, s.frequency_penalty)) return e;
    if (auto e = read_number(body, "repetition_penalty", 0.01, 100, s.repeat_penalty)) return e;   // vLLM's extra field
    if (const Json* bias = field(body, "logit_bias")) {
        if (!bias->is_object()) return bad("logit_bias", "'logit_bias' must be an object mapping token ids (as strings) to numbers from -100 to 100");
        for (const auto& [key, value] : bias->items()) {
            int64_t id = -1;
            const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
            if (ec != std::errc() || end != key.data() + key.size() || id < 0 || id > std::numeric_limits<int32_t>::max())
                return bad("logit_bias", "'logit_bias' key '" + key + "' is not a token id");
            if (!value.is_number() || !(value.get<double>() >= -100 && value.get<double>() <= 100))
                return bad("logit_bias", "'logit_bias[\"" + key + "\"]' must be a number from -100 to 100");
            s.logit_bias.push_back({static_cast<workbench::TokenId>(id), value.get<float>()});
        }
    }
    if (const Json* seed = field(body, "seed")) {
        if (!whole(*seed) || seed->get<double>() < -9.2233720368547758e18 || seed->get<double>() >= 1.8446744073709552e19)
            return bad("seed", "'seed' must be a whole number that fits 64 bits");
        s.seed = seed->is_number_unsigned() ? seed->get<uint64_t>() : static_cast<uint64_t>(seed->get<int64_t>());
    }
    return std::nullopt;
}

std::optional<ApiError> read_speculative(const Json& body, ApiRequest& out) {
    const Json* spec = field(body, "speculative");
    if (!spec) return std::nullopt;
    if (!spec->is_object()) return bad("speculative", "'speculative' must be an object: {\"draft\": \"lookup\", \"draft_max\": 8, \"ngram\": 3}");
    if (const Json* draft = field(*spec, "draft")) {
        const std::string name = draft->is_string() ? draft->get<std::string>() : "";
        if (name == "off") out.draft = workbench::DraftKind::off;
        else if (name == "lookup") out.draft = workbench::DraftKind::lookup;
        else if (name == "model") out.draft = workbench::DraftKind::model;
        else return bad("speculative.draft", "'speculative.draft' must be \"off\", \"lookup\" or \"model\"");
    }
    std::optional<int64_t> draft_max, ngram;
    if (auto e = read_int(*spec, "draft_max", 1, 64, draft_max)) return bad("speculative.draft_max", "'speculative.draft_max' must be a whole number from 1 to 64");
    if (auto e = read_int(*spec, "ngram", 1, 16, ngram)) return bad("speculative.ngram", "'speculative.ngram' must be a whole number from 1 to 16");
    if (draft_max) out.draft_max = static_cast<int32_t>(*draft_max);
    if (ngram) out.draft_ngram = static_cast<int32_t>(*ngram);
    return std::nullopt;
}

// Fields of OpenAI's API that change what the answer must be, and that this server does not do:
// refused by name rather than silently ignored.
std::optional<ApiError> refuse_unimplemented(const Json& body, Endpoint endpoint) {
    auto refuse = [](const char* key, const std::string& why) { return bad(key, std::string("'") + key + "' is not supported: " + why); };
    if (endpoint == Endpoint::completions) {
        if (const Json* suffix = field(body, "suffix"); suffix && !(suffix->is_string() && suffix->get<std::string>().empty()))
            return refuse("suffix", "fill-in-the-middle needs a model and template trained for it");
    }
    if (endpoint == Endpoint::completions)
        for (const char* key : {"tools", "tool_choice"})
            if (const Json* v = field(body, key); v && !(v->is_array() && v->empty()) && !(v->is_string() && v->get<std::string>() == "none"))
                return refuse(key, "tools are offered in a chat (/v1/chat/completions)");
    for (const char* key : {"functions", "function_call", "audio", "prediction", "web_search_options"})
        if (field(body, key)) return refuse(key, "this server does not implement it");
    if (const Json* modalities = field(body, "modalities"))
        if (!modalities->is_array() || std::any_of(modalities->begin(), modalities->end(), [](const Json& m) { return m != "text"; }))
            return refuse("modalities", "this model reads and writes text only");
    return std::nullopt;
}

std::optional<ApiError> read_echo_and_best_of(const Json& body, const RequestLimits& limits, ApiRequest& out) {
    out.best_of = out.n;
    if (out.endpoint != Endpoint::completions) return std::nullopt;   // chat has neither
    if (auto e = read_bool(body, "echo", out.echo)) return e;
    std::optional<int64_t> best_of;
    if (auto e = read_int(body, "best_of", 1, limits.max_n, best_of)) return e;
    out.best_of = static_cast<int32_t>(best_of.value_or(out.n));
    if (out.best_of < out.n) return bad("best_of", "'best_of' (" + std::to_string(out.best_of) + ") must be at least 'n' (" + std::to_string(out.n) + ")");
    if (out.best_of > out.n && out.stream) return bad("best_of", "'best_of' above 'n' cannot be streamed: the best are known only at the end");
    if (out.echo && out.logprobs && out.stream) return bad("echo", "'echo' with 'logprobs' is answered whole: set 'stream' to false");
    return std::nullopt;
}

}  // namespace

workbench::Json error_json(const ApiError& error) {
    return {{"error",
             {{"message", error.message},
              {"type", error.type},
              {"param", error.param.empty() ? Json(nullptr) : Json(error.param)},
              {"code", error.code.empty() ? Json(nullptr) : Json(error.code)}}}};
}

std::variant<ApiRequest, ApiError> parse_api_request(std::string_view text, Endpoint endpoint, const RequestLimits& limits) {
    auto parsed = workbench::parse_json(text);
    if (!parsed.ok()) return bad("", "the body is not valid JSON: " + parsed.status().message());
    const Json& body = *parsed;
    if (!body.is_object()) return bad("", "the body must be a JSON object");
    ApiRequest out;
    out.endpoint = endpoint;
    if (auto e = refuse_unimplemented(body, endpoint)) return *e;
    if (const Json* model = field(body, "model")) {
        if (!model->is_string()) return bad("model", "'model' must be a string");
        out.model = model->get<std::string>();
    }
    if (auto e = endpoint == Endpoint::chat_completions ? read_messages(body, limits, out) : read_prompt(body, limits, out)) return *e;
    if (auto e = read_structured_output(body, out)) return *e;
    if (endpoint == Endpoint::chat_completions)
        if (auto e = read_tools(body, out)) return *e;
    if (!out.grammar.empty() && (out.tool_choice == ApiRequest::ToolChoice::required || out.tool_choice == ApiRequest::ToolChoice::named))
        return bad("tool_choice", "a required tool call and 'response_format'/'grammar' cannot both hold the reply");
    // max_completion_tokens is the newer name of max_tokens; given both, they must agree.
    std::optional<int64_t> max_tokens, max_completion_tokens;
    // 0 is allowed here for echo (scoring a prompt); checked against echo below.
    if (auto e = read_int(body, "max_tokens", 0, std::numeric_limits<int32_t>::max(), max_tokens)) return *e;
    if (auto e = read_int(body, "max_completion_tokens", 1, std::numeric_limits<int32_t>::max(), max_completion_tokens)) return *e;
    if (max_tokens && max_completion_tokens && *max_tokens != *max_completion_tokens)
        return bad("max_completion_tokens", "'max_tokens' and 'max_completion_tokens' differ; give one");
    if (max_tokens || max_completion_tokens) out.max_tokens = static_cast<int32_t>(max_tokens ? *max_tokens : *max_completion_tokens);
    std::optional<int64_t> n;
    if (auto e = read_int(body, "n", 1, limits.max_n, n)) return *e;
    out.n = static_cast<int32_t>(n.value_or(1));
    if (auto e = read_sampling(body, out)) return *e;
    if (auto e = read_stop(body, limits, out)) return *e;
    if (auto e = read_logprobs(body, limits, out)) return *e;
    if (auto e = read_bool(body, "ignore_eos", out.ignore_eos)) return *e;
    if (auto e = read_speculative(body, out)) return *e;
    if (auto e = read_bool(body, "stream", out.stream)) return *e;
    if (const Json* options = field(body, "stream_options")) {
        if (!options->is_object()) return bad("stream_options", "'stream_options' must be an object");
        if (!out.stream) return bad("stream_options", "'stream_options' is only allowed with 'stream': true");
        const Json* usage = field(*options, "include_usage");
        if (usage && !usage->is_boolean()) return bad("stream_options.include_usage", "'stream_options.include_usage' must be true or false");
        out.include_usage = usage && usage->get<bool>();
    }
    if (auto e = read_echo_and_best_of(body, limits, out)) return *e;
    if (out.max_tokens == 0 && !out.echo)
        return bad("max_tokens", "'max_tokens' must be from 1 (0 only with 'echo': true, to score the prompt)");
    return out;
}

}  // namespace wbserver
