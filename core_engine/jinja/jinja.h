// A Jinja interpreter for the chat templates GGUF files carry (tokenizer.chat_template), after
// jinja2 as Hugging Face's apply_chat_template configures it: trim_blocks and lstrip_blocks, the
// immutable sandbox, lenient undefined values, its tojson (insertion order, raw UTF-8), and the
// globals raise_exception and strftime_now. It covers the statements, expressions, filters, tests
// and methods chat templates use (jinja/jinja_builtins.h lists them); anything else is an error
// naming the template line. Rendering is bounded in steps, call depth, time and output size, so
// a hostile template ends with an error instead of hanging or exhausting memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "jinja/jinja_ast.h"
#include "jinja/jinja_value.h"
#include "workbench/json.h"
#include "workbench/status.h"

namespace workbench::jinja {

struct RenderOptions {
    // strftime_now(format)'s clock; empty: the current local time. Tests pin it.
    std::function<std::string(const std::string& format)> strftime_now;
    size_t max_output_bytes = 8u << 20;
    int64_t max_steps = 20'000'000;   // statements run, loop iterations and calls together
    int32_t max_call_depth = 64;      // nested macro calls
    double max_seconds = 10;
    // Top-level variables whose strings are the conversation's (messages, tools): render_marked
    // reports where their text lands in the output.
    std::vector<std::string> marked_variables;
};

struct RenderedText {
    std::string text;
    Marks marked;   // sorted byte ranges of `text` that came from the marked variables
};

// Renders `source` with `variables` (a JSON object: messages, tools, add_generation_prompt,
// bos_token, …). Errors: invalid_argument for a template that does not parse, or that fails while
// rendering (raise_exception, an operation on an undefined value, an unknown filter), naming the
// line; resource_exhausted when it passes a limit.
Result<std::string> render(std::string_view source, const Json& variables, const RenderOptions& options = {});
Result<std::string> render(const Template& parsed, const Json& variables, const RenderOptions& options = {});
Result<RenderedText> render_marked(const Template& parsed, const Json& variables, const RenderOptions& options);

}  // namespace workbench::jinja
