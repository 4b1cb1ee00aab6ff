// libFuzzer target: arbitrary bytes as a chat template, rendered over a small conversation under
// tight limits. Every input must end in text or an error (never a crash, hang, sanitizer report or
// an output past the limit).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "jinja/jinja.h"
#include "workbench/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const workbench::Json variables = *workbench::parse_json(
        R"({"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":"a",)"
        R"("tool_calls":[{"function":{"name":"f","arguments":{"x":1}}}]}],"tools":[{"type":"function","function":{"name":"f"}}],)"
        R"("add_generation_prompt":true,"bos_token":"<s>","eos_token":"</s>"})");
    workbench::jinja::RenderOptions o;
    o.max_steps = 20000;
    o.max_output_bytes = 1 << 16;
    o.max_call_depth = 16;
    o.max_seconds = 1;
    o.strftime_now = [](const std::string&) { return std::string("02 Jan 2025"); };
    const auto r = workbench::jinja::render(std::string_view(reinterpret_cast<const char*>(data), size), variables, o);
    if (r.ok() && r->size() > o.max_output_bytes) std::abort();
    return 0;
}
