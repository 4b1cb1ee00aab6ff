// Tools on the way in: the conversation shaped for the template (and, for a template without a
// tool form, written in the Hermes form), the grammar that forces a call, and call ids.
#include <random>

#include "workbench/chat_reply.h"
#include "workbench/structured_output.h"

namespace workbench {
namespace {

constexpr const char* kToolSystemPrompt =
    "You can call functions to help answer. Their signatures are listed as JSON inside <tools></tools>:\n<tools>\n";
constexpr const char* kToolSystemPromptEnd =
    "</tools>\nTo call one, reply with a JSON object naming the function and giving its arguments, inside "
    "<tool_call></tool_call> tags, one block per call:\n<tool_call>\n{\"name\": \"function_name\", \"arguments\": {\"arg\": \"value\"}}\n</tool_call>\n"
    "Results come back inside <tool_response></tool_response> tags. Use only the functions listed and do not invent argument values.";

// A call's arguments as an object where they parse (templates were written for objects).
Json arguments_object(const Json& arguments) {
    if (arguments.is_string()) {
        auto j = parse_json(arguments.get<std::string>());
        if (j.ok() && j->is_object()) return *j;
    }
    return arguments;
}

std::string hermes_call(const Json& call) {
    const Json& fn = call.contains("function") ? call["function"] : call;
    Json body = Json::object();
    body["name"] = fn.value("name", "");
    body["arguments"] = arguments_object(fn.contains("arguments") ? fn["arguments"] : Json::object());
    return "<tool_call>\n" + dump_json(body) + "\n</tool_call>";
}

// A tool's parameters moved inside the call's schema: its "#/…" references follow it there.
Json moved_refs(Json schema, const std::string& prefix) {
    if (schema.is_object()) {
        for (auto it = schema.begin(); it != schema.end(); ++it) {
            if (it.key() == "$ref" && it.value().is_string() && it.value().get<std::string>().rfind("#", 0) == 0)
                it.value() = prefix + it.value().get<std::string>().substr(1);
            else
                it.value() = moved_refs(std::move(it.value()), prefix);
        }
    } else if (schema.is_array()) {
        for (Json& e : schema) e = moved_refs(std::move(e), prefix);
    }
    return schema;
}

}  // namespace

Json prepare_tool_messages(const ChatFormat& format, const Json& messages, const Json& tools) {
    Json out = Json::array();
    const bool offered = tools.is_array() && !tools.empty();
    const bool describe = !format.template_renders_tools;
    for (const Json& m : messages) {
        Json copy = m;
        if (copy.contains("tool_calls") && copy["tool_calls"].is_array()) {
            for (Json& call : copy["tool_calls"])
                if (call.is_object() && call.contains("function") && call["function"].is_object() && call["function"].contains("arguments"))
                    call["function"]["arguments"] = arguments_object(call["function"]["arguments"]);
            if (describe) {   // the calls as the Hermes text the model was told to write
                std::string text = copy.contains("content") ? chat_content_text(copy["content"]) : "";
                for (const Json& call : copy["tool_calls"]) text += (text.empty() ? "" : "\n") + hermes_call(call);
                copy.erase("tool_calls");
                copy["content"] = text;
            }
        }
        if (describe && copy.value("role", "") == "tool") {
            copy = {{"role", "user"}, {"content", "<tool_response>\n" + chat_content_text(m.value("content", Json(""))) + "\n</tool_response>"}};
        }
        if (copy.contains("content") && copy["content"].is_null()) copy["content"] = "";
        out.push_back(std::move(copy));
    }
    if (describe && offered) {
        std::string listing = kToolSystemPrompt;
        for (const Json& t : tools) listing += dump_json(t) + "\n";
        listing += kToolSystemPromptEnd;
        if (!out.empty() && out[0].value("role", "") == "system") {
            out[0]["content"] = chat_content_text(out[0]["content"]) + "\n\n" + listing;
        } else {
            out.insert(out.begin(), Json{{"role", "system"}, {"content", listing}});
        }
    }
    return out;
}

Result<std::string> tool_call_grammar(const ChatFormat& format, const Json& tools, const std::string& name, bool parallel) {
    if (!tools.is_array() || tools.empty()) return error(StatusCode::invalid_argument, "a call is required but no tools are given");
    const bool llama3 = format.tools == ToolCallFormat::llama3_json && format.template_renders_tools;
    const std::string args_key = llama3 ? "parameters" : "arguments";
    std::vector<std::pair<std::string, Json>> picked;   // name, parameters
    for (const Json& t : tools) {
        const Json& fn = t.contains("function") ? t["function"] : t;
        const std::string fn_name = fn.value("name", "");
        if (!name.empty() && fn_name != name) continue;
        picked.emplace_back(fn_name, fn.contains("parameters") && fn["parameters"].is_object() ? fn["parameters"] : Json{{"type", "object"}});
    }
    if (picked.empty()) return error(StatusCode::invalid_argument, "no tool is named '" + name + "'");
    // One call's schema, its parameters' references pointing where they now sit.
    auto call_schema = [&](const std::string& fn_name, const Json& params, const std::string& at) {
        return Json{{"type", "object"},
                    {"properties", {{"name", {{"const", fn_name}}}, {args_key, moved_refs(params, at + "/properties/" + args_key)}}},
                    {"required", Json::array({"name", args_key})}};
    };
    Json choices = Json::array();
    for (size_t i = 0; i < picked.size(); ++i) {
        // Each tool's schema on its own first, so an error names the tool.
        if (auto g = json_schema_grammar(call_schema(picked[i].first, picked[i].second, "#")); !g.ok())
            return error(StatusCode::invalid_argument, "tool '" + picked[i].first + "': " + g.status().message());
        choices.push_back(call_schema(picked[i].first, picked[i].second, "#/anyOf/" + std::to_string(i)));
    }
    WB_ASSIGN_OR_RETURN(std::string g, json_schema_grammar(picked.size() == 1 ? call_schema(picked[0].first, picked[0].second, "#")
                                                                             : Json{{"anyOf", choices}}));
    // The schema's root becomes one call; the new root frames the calls.
    const std::string kRoot = "root ::= ";
    if (g.rfind(kRoot, 0) != 0) return error(StatusCode::internal, "the schema grammar has no root rule first");
    g = "call-json ::= " + g.substr(kRoot.size());
    std::string root;
    if (llama3) root = parallel ? "root ::= call-json ( \";\" \" \"? call-json ){0,3}\n" : "root ::= call-json\n";
    else root = std::string("root ::= call-block") + (parallel ? " ( \"\\n\" call-block ){0,3}" : "") +
                "\ncall-block ::= \"<tool_call>\\n\" call-json \"\\n</tool_call>\"\n";
    return root + g;
}

std::string tool_call_id(const ChatFormat& format, uint64_t seed, int32_t n) {
    static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::mt19937_64 rng(seed * 1000003u + static_cast<uint64_t>(n));
    const bool mistral = format.tools == ToolCallFormat::mistral;
    std::string id = mistral ? "" : "call_";
    for (int i = 0; i < (mistral ? 9 : 24); ++i) id += kAlphabet[rng() % 62];
    return id;
}

}  // namespace workbench

namespace workbench {

Json chat_messages_json(const std::vector<ChatMessage>& messages) {
    Json out = Json::array();
    for (const ChatMessage& m : messages) {
        Json j = {{"role", m.role}, {"content", m.content}};
        if (!m.reasoning.empty()) j["reasoning_content"] = m.reasoning;
        if (!m.tool_calls.empty()) {
            Json calls = Json::array();
            for (const ToolCall& c : m.tool_calls)
                calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
            j["tool_calls"] = std::move(calls);
        }
        if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
        out.push_back(std::move(j));
    }
    return out;
}

ChatTemplateInput chat_template_input(const ChatFormat& format, const Json& messages, const Json& tools, const Json& extra) {
    ChatTemplateInput input;
    const bool offered = tools.is_array() && !tools.empty();
    input.messages = prepare_tool_messages(format, messages, offered ? tools : Json::array());
    if (format.template_renders_tools && offered) input.tools = tools;
    if (extra.is_object()) input.extra = extra;
    return input;
}

ChatFormat forced_call_format(ChatFormat format) {
    if (format.needs_special_text()) format.tools = ToolCallFormat::hermes;
    return format;
}

Status check_tools(const Json& tools, std::string* field) {
    const auto bad = [&](const std::string& at, const std::string& message) {
        if (field) *field = at;
        return error(StatusCode::invalid_argument, message);
    };
    if (!tools.is_array()) return bad("tools", "'tools' must be an array of {\"type\": \"function\", \"function\": {\"name\", …}}");
    if (tools.size() > 128) return bad("tools", "'tools' has " + std::to_string(tools.size()) + " entries; at most 128 are accepted");
    // A member of an object, or null (nlohmann's find() iterators only compare within one container).
    const auto member = [](const Json& j, const char* key) -> const Json* {
        if (!j.is_object()) return nullptr;
        const auto it = j.find(key);
        return it == j.end() ? nullptr : &*it;
    };
    for (size_t i = 0; i < tools.size(); ++i) {
        const Json& t = tools[i];
        const std::string at = "tools[" + std::to_string(i) + "]";
        const Json* type = member(t, "type");
        if (!type || *type != "function") return bad(at + ".type", "'" + at + ".type' must be \"function\"");
        const Json* fn = member(t, "function");
        const Json* name = fn ? member(*fn, "name") : nullptr;
        const bool named = name && name->is_string() && !name->get<std::string>().empty() && name->get<std::string>().size() <= 64 &&
                           name->get<std::string>().find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") ==
                               std::string::npos;
        if (!named) return bad(at + ".function.name", "'" + at + ".function.name' must be 1 to 64 letters, digits, '_', '-' or '.'");
        if (const Json* p = member(*fn, "parameters"); p && !p->is_object())
            return bad(at + ".function.parameters", "'" + at + ".function.parameters' must be a JSON Schema object");
    }
    return Status();
}

}  // namespace workbench
