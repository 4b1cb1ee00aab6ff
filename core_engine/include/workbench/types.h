// Small value types shared by the engine API and its callers.
#pragma once

#include <cstdint>
#include <string>

namespace workbench {

using TokenId = int32_t;

struct ChatMessage {
    std::string role;     // "system", "user", "assistant"
    std::string content;
};

}  // namespace workbench
