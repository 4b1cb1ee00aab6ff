// libFuzzer target: arbitrary bytes through parse_json (nlohmann-json) and the EngineConfig reader (the
// CLI's and GUI's --config files, batch prompt lines). Any crash, hang or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "workbench/config.h"
#include "workbench/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto v = workbench::parse_json(text); v.ok() && v->is_object()) (void)v->find("prompt");
    (void)workbench::engine_config_from_json(text);
    return 0;
}
