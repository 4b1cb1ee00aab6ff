// The names stop reasons have in the CLI's output, the server's finish reasons and the store.
#include "workbench/request.h"

namespace workbench {

const char* stop_reason_name(StopReason reason) {
    switch (reason) {
        case StopReason::end_of_generation: return "end_of_generation";
        case StopReason::max_tokens: return "max_tokens";
        case StopReason::stop_string: return "stop_string";
        case StopReason::context_full: return "context_full";
        case StopReason::cancelled: return "cancelled";
    }
    return "unknown";
}

}  // namespace workbench
