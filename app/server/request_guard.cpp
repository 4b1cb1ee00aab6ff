// Host, Origin, Content-Type and framing checks, each refusal naming the header and the flag that
// would allow it.
#include "request_guard.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>

namespace wbserver {
namespace {

ApiError refused(int status, std::string message, std::string code = "") {
    ApiError e;
    e.http_status = status;
    e.message = std::move(message);
    e.code = std::move(code);
    return e;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// "name:port", "[v6]:port", "name" → the name ("v6" without brackets).
std::string host_name(const std::string& host) {
    if (!host.empty() && host.front() == '[') {
        const size_t close = host.find(']');
        return close == std::string::npos ? host : host.substr(1, close - 1);
    }
    const size_t colon = host.find(':');
    if (colon != std::string::npos && host.find(':', colon + 1) == std::string::npos) return host.substr(0, colon);
    return host;
}

bool listed(const std::string& value, const std::vector<std::string>& list) {
    return std::any_of(list.begin(), list.end(), [&](const std::string& x) { return x == "*" || lower(x) == value; });
}

}  // namespace

bool is_loopback_address(const std::string& host) {
    const std::string h = lower(host);
    if (h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1") return true;
    in_addr v4{};
    return ::inet_pton(AF_INET, h.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

bool origin_allowed(const std::string& origin, const AccessRules& rules) { return listed(lower(trim(origin)), rules.cors_origins); }

std::optional<ApiError> check_request_headers(const httplib::Request& req, const AccessRules& rules) {
    const size_t n_host = req.get_header_value_count("Host");
    if (n_host > 1) return refused(400, "the request has " + std::to_string(n_host) + " Host headers; one is allowed");
    if (n_host == 0 && req.version == "HTTP/1.1") return refused(400, "an HTTP/1.1 request must carry a Host header");
    if (n_host == 1) {
        const std::string name = lower(host_name(trim(req.get_header_value("Host"))));
        const bool ok = listed(name, rules.allowed_hosts) || (rules.loopback_bind ? is_loopback_address(name) : rules.allowed_hosts.empty());
        if (!ok)
            return refused(403,
                           "the Host header names '" + name + "', not this server" +
                               (rules.loopback_bind ? " (a server on a loopback address answers localhost, 127.0.0.1 and [::1])" : "") +
                               "; start it with --allow-host " + name + " to accept that name",
                           "host_not_allowed");
    }
    if (req.has_header("Origin") && !origin_allowed(req.get_header_value("Origin"), rules))
        return refused(403,
                       "cross-origin requests from '" + req.get_header_value("Origin") +
                           "' are refused; start the server with --cors-origin ORIGIN to let a web page call it",
                       "origin_not_allowed");

    const size_t n_length = req.get_header_value_count("Content-Length");
    for (size_t i = 1; i < n_length; ++i)
        if (trim(req.get_header_value("Content-Length", i)) != trim(req.get_header_value("Content-Length", 0)))
            return refused(400, "the request has conflicting Content-Length headers");
    if (req.has_header("Transfer-Encoding")) {
        if (n_length > 0) return refused(400, "the request has both Content-Length and Transfer-Encoding; send one");
        if (lower(trim(req.get_header_value("Transfer-Encoding"))) != "chunked")
            return refused(400, "Transfer-Encoding '" + req.get_header_value("Transfer-Encoding") + "' is not supported; send 'chunked' or a Content-Length");
    }
    if (req.method == "POST" && req.has_header("Content-Type")) {
        const std::string type = req.get_header_value("Content-Type");
        if (lower(trim(type.substr(0, type.find(';')))) != "application/json")
            return refused(415, "the body must be JSON sent as 'Content-Type: application/json' (got '" + type + "')", "unsupported_media_type");
    }
    return std::nullopt;
}

}  // namespace wbserver
