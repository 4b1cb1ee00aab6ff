// Names of status codes, for messages and JSON output.
#include "workbench/status.h"

namespace workbench {

const char* status_code_name(StatusCode code) {
    switch (code) {
        case StatusCode::ok: return "ok";
        case StatusCode::invalid_argument: return "invalid argument";
        case StatusCode::not_found: return "not found";
        case StatusCode::invalid_file: return "invalid file";
        case StatusCode::unsupported: return "unsupported";
        case StatusCode::out_of_range: return "out of range";
        case StatusCode::resource_exhausted: return "resource exhausted";
        case StatusCode::io_error: return "I/O error";
        case StatusCode::cancelled: return "cancelled";
        case StatusCode::unavailable: return "unavailable";
        case StatusCode::internal: return "internal error";
    }
    return "unknown";
}

}  // namespace workbench
