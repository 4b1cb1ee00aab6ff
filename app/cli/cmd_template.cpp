// `template`: the prompt a model's own chat template makes of a conversation (and tools), as
// Hugging Face renders it: for checking a template, or what a model is really sent.
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "workbench/model_chat_template.h"

namespace wbcli {
namespace {

workbench::Result<workbench::Json> read_json_file(const std::string& path, const char* what) {
    auto text = read_text_file(path);
    if (!text.ok()) return workbench::error(workbench::StatusCode::not_found, std::string(what) + " " + text.status().message());
    auto j = workbench::parse_json(*text);
    if (!j.ok()) return workbench::error(workbench::StatusCode::invalid_argument, std::string(what) + " " + path + ": " + j.status().message());
    return *j;
}

}  // namespace

int cmd_template(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--messages", "", true, "FILE  the conversation: a JSON array of {\"role\", \"content\"} (or {\"messages\": […]}, as the chat API sends)"},
        {"--tools", "", true, "FILE  a JSON array of tools ({\"type\": \"function\", \"function\": {…}})"},
        {"--no-generation-prompt", "", false, "leave out the assistant header that asks the model to answer"},
        {"--vars", "", true, "JSON  the template's own variables, e.g. '{\"enable_thinking\": false}'"},
    };
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "template", "--messages FILE [--tools FILE] [--no-generation-prompt] [--vars JSON]", flags, ctx, false);
        rc >= 0)
        return rc;
    if (!ctx.args.has("--messages")) return usage_error("template: --messages FILE is required");
    int rc = 0;
    const std::string model = resolve_model_path(ctx.args, rc);
    if (model.empty()) return rc;
    workbench::ChatTemplateInput input;
    auto messages = read_json_file(ctx.args.get("--messages"), "--messages");
    if (!messages.ok()) return runtime_error("template: " + messages.status().message());
    input.messages = messages->is_object() && messages->contains("messages") ? (*messages)["messages"] : *messages;
    if (messages->is_object() && messages->contains("tools")) input.tools = (*messages)["tools"];
    if (ctx.args.has("--tools")) {
        auto tools = read_json_file(ctx.args.get("--tools"), "--tools");
        if (!tools.ok()) return runtime_error("template: " + tools.status().message());
        input.tools = *tools;
    }
    if (ctx.args.has("--vars")) {
        auto vars = workbench::parse_json(ctx.args.get("--vars"));
        if (!vars.ok() || !vars->is_object()) return usage_error("template: --vars must be a JSON object");
        input.extra = *vars;
    }
    input.add_generation_prompt = !ctx.args.has("--no-generation-prompt");
    auto t = workbench::read_model_chat_template(model);
    if (!t.ok()) return runtime_error("template: " + t.status().message());
    auto text = workbench::render_model_chat_template(*t, input);
    if (!text.ok()) return runtime_error("template: " + model + ": " + text.status().message());
    std::cout << text->text << std::flush;
    return 0;
}

}  // namespace wbcli
