// libFuzzer target: arbitrary bytes through parse_json (nlohmann-json) and the EngineConfig reader (the
// CLI's and GUI's --config files, batch prompt lines, stored rows), and whatever parses back out
// through dump_json, which must give text that parses to the same value. Any crash, hang, sanitizer
// report or abort is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "workbench/config.h"
#include "workbench/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto v = workbench::parse_json(text); v.ok()) {
        if (v->is_object()) (void)v->find("prompt");
        auto again = workbench::parse_json(workbench::dump_json(*v));
        // Parsed text is valid UTF-8 with finite numbers, so writing it out loses nothing.
        if (!again.ok() || *again != *v) std::abort();
    }
    if (auto config = workbench::engine_config_from_json(text); config.ok()) {
        auto again = workbench::engine_config_from_json(workbench::engine_config_json(*config));
        if (!again.ok() || workbench::engine_config_json(*again) != workbench::engine_config_json(*config)) std::abort();
    }
    return 0;
}
