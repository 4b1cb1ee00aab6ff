// The checks on a request's line and headers that need no model and no body: who may call (the
// Host a loopback server answers to, the cross-site Origin a browser sends), and headers that
// make a request ambiguous (conflicting Content-Length, Content-Length beside Transfer-Encoding,
// HTTP/1.1 without Host) or carry a body that is not JSON. A web page can reach a server on
// 127.0.0.1; these keep it from driving one: DNS rebinding arrives with a foreign Host, a
// cross-site form or fetch with an Origin or a text/plain body. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <httplib.h>

#include "openai_request.h"

namespace wbserver {

struct AccessRules {
    // Host names (without port) accepted besides the loopback ones; "*": any. When the server
    // listens on a loopback address and this is empty, only localhost, 127.0.0.0/8 and [::1] are
    // accepted; on any other address, any Host unless this names some.
    std::vector<std::string> allowed_hosts;
    bool loopback_bind = true;
    // Origins a browser may call from (CORS); "*": any. Empty: requests carrying an Origin are refused.
    std::vector<std::string> cors_origins;
};

bool is_loopback_address(const std::string& host);

// An error to answer instead of routing the request, or nothing.
std::optional<ApiError> check_request_headers(const httplib::Request& req, const AccessRules& rules);
// Whether `origin` may call (an Origin header the rules allow).
bool origin_allowed(const std::string& origin, const AccessRules& rules);

}  // namespace wbserver
