// The HTTP side: cpp-httplib parses HTTP; here are the routes, the checks every request passes
// before its body is read (connection limit, path, method, API key, declared size), bodies read
// under a size and time limit, and the step loop's thread.
#include "api_server.h"

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "completion_handler.h"

namespace wbserver {
namespace {

using workbench::Json;
using Clock = std::chrono::steady_clock;

// Whether the connection this thread serves is beyond --max-connections (set per connection by
// ConnectionPool, read by the pre-routing check on the same thread).
thread_local bool t_over_connection_limit = false;

// httplib hands each accepted connection to this queue. Every connection gets a thread (a
// stream holds its connection for its whole life, so a pool smaller than the limit would starve
// streams); the ones past the limit only get a 503.
class ConnectionPool : public httplib::TaskQueue {
public:
    ConnectionPool(int32_t max_connections, int32_t spare)
        : max_(max_connections), pool_(static_cast<size_t>(max_connections + spare)) {}
    void enqueue(std::function<void()> fn) override {
        pool_.enqueue([this, fn = std::move(fn)] {
            t_over_connection_limit = active_.fetch_add(1) + 1 > max_;
            fn();
            active_.fetch_sub(1);
            t_over_connection_limit = false;
        });
    }
    void shutdown() override { pool_.shutdown(); }

private:
    const int32_t max_;
    std::atomic<int32_t> active_{0};
    httplib::ThreadPool pool_;
};

// httplib 0.11 listens with a backlog of 5; 64 clients reconnecting at once overflow that, and
// the kernel then drops handshakes. Listening again on the bound socket raises it (Linux).
class HttpServer : public httplib::Server {
public:
    void raise_backlog(int backlog) {
        if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, backlog);
    }
};

struct Route {
    const char* path;
    const char* allow;   // the Allow header
};
constexpr Route kRoutes[] = {{"/health", "GET, HEAD"},
                             {"/v1/models", "GET, HEAD"},
                             {"/metrics", "GET, HEAD"},
                             {"/v1/completions", "POST"},
                             {"/v1/chat/completions", "POST"}};

const Route* find_route(const std::string& path) {
    for (const Route& r : kRoutes)
        if (path == r.path) return &r;
    return nullptr;
}

bool method_allowed(const Route& route, const std::string& method) {
    if (std::strcmp(route.allow, "POST") == 0) return method == "POST";
    return method == "GET" || method == "HEAD";
}

ApiError error_of(int status, std::string message, std::string type, std::string code = "") {
    ApiError e;
    e.http_status = status;
    e.message = std::move(message);
    e.type = std::move(type);
    e.code = std::move(code);
    return e;
}

// Compared through their SHA-256 digests with CRYPTO_memcmp: the time taken says nothing about
// how much of a guessed key was right, or how long the key is.
bool same_secret(const std::string& given, const std::string& expected) {
    unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(given.data()), given.size(), a);
    SHA256(reinterpret_cast<const unsigned char*>(expected.data()), expected.size(), b);
    return CRYPTO_memcmp(a, b, sizeof a) == 0;
}

const char* status_text(int status) {
    switch (status) {
        case 400: return "the HTTP request is malformed";
        case 404: return "no such path";
        case 408: return "the request took too long to arrive";
        case 413: return "the request body is too large";
        case 414: return "the request line is too long";
        case 416: return "range not satisfiable";
        case 431: return "the request headers are too large";
        default: return status >= 500 ? "internal server error" : "the request was refused";
    }
}

}  // namespace

struct ApiServer::Impl {
    explicit Impl(ServeOptions o) : options(std::move(o)), metrics("") {}

    ServeOptions options;
    ServerMetrics metrics;
    HttpServer http;
    std::thread listener;
    std::atomic<bool> stopping{false};
    std::atomic<workbench::Engine*> engine{nullptr};
    std::string model_name;          // set before `engine` is published, read after
    int32_t n_ctx = 0;

    void install_routes();
    httplib::Server::HandlerResponse check_before_body(const httplib::Request& req, httplib::Response& res);
    void complete(Endpoint endpoint, const std::string& body, httplib::Response& res);
};

httplib::Server::HandlerResponse ApiServer::Impl::check_before_body(const httplib::Request& req, httplib::Response& res) {
    using HR = httplib::Server::HandlerResponse;
    if (t_over_connection_limit) {
        res.set_header("Retry-After", "1");
        res.set_header("Connection", "close");
        send_error(res, error_of(503,
                                 "the server has " + std::to_string(options.max_connections) +
                                     " connections open, its limit (--max-connections); retry shortly",
                                 "server_error", "too_many_connections"));
        return HR::Handled;
    }
    const Route* route = find_route(req.path);
    if (!route) {
        send_error(res, error_of(404, "no such path: " + req.path + " (try /v1/chat/completions, /v1/completions, /v1/models, /health, /metrics)",
                                 "invalid_request_error", "not_found"));
        return HR::Handled;
    }
    if (!method_allowed(*route, req.method)) {
        res.set_header("Allow", route->allow);
        send_error(res, error_of(405, req.path + " takes " + route->allow + ", not " + req.method, "invalid_request_error", "method_not_allowed"));
        return HR::Handled;
    }
    if (!options.api_key.empty() && req.path.rfind("/v1/", 0) == 0) {
        const std::string auth = req.get_header_value("Authorization");
        const std::string prefix = "Bearer ";
        const bool bearer = auth.size() > prefix.size() && auth.compare(0, prefix.size(), prefix) == 0;
        if (!bearer || !same_secret(auth.substr(prefix.size()), options.api_key)) {
            res.set_header("WWW-Authenticate", "Bearer");
            send_error(res, error_of(401, bearer ? "the API key is not valid" : "an API key is required: 'Authorization: Bearer KEY'",
                                     "authentication_error", "invalid_api_key"));
            return HR::Handled;
        }
    }
    if (req.method == "POST") {
        if (req.get_header_value("Content-Type").rfind("multipart/", 0) == 0) {
            send_error(res, error_of(415, "the body must be JSON (Content-Type: application/json)", "invalid_request_error"));
            return HR::Handled;
        }
        if (req.has_header("Content-Length")) {
            const std::string text = req.get_header_value("Content-Length");
            unsigned long long length = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), length);
            if (ec != std::errc() || end != text.data() + text.size()) {
                res.set_header("Connection", "close");
                send_error(res, error_of(400, "the Content-Length header is not a number: '" + text + "'", "invalid_request_error"));
                return HR::Handled;
            }
            if (length > options.max_body_bytes) {   // refused before a byte of it is read
                res.set_header("Connection", "close");
                send_error(res, error_of(413, "the body has " + text + " bytes; at most " + std::to_string(options.max_body_bytes) +
                                                  " are accepted", "invalid_request_error", "body_too_large"));
                return HR::Handled;
            }
        }
    }
    return HR::Unhandled;
}

void ApiServer::Impl::complete(Endpoint endpoint, const std::string& body, httplib::Response& res) {
    workbench::Engine* e = engine.load();
    if (!e) {
        res.set_header("Retry-After", "5");
        return send_error(res, error_of(503, "the model is still loading; /health answers 200 once it is ready", "server_error", "loading"));
    }
    const CompletionContext ctx{*e, model_name, options, metrics, stopping};
    handle_completion(ctx, endpoint, body, res);
}

void ApiServer::Impl::install_routes() {
    http.new_task_queue = [this] { return new ConnectionPool(options.max_connections, 16); };
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which would let a second server
    // bind the same port and silently take half the connections.
    http.set_socket_options([](socket_t sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    http.set_read_timeout(options.read_timeout_s, 0);
    http.set_write_timeout(options.write_timeout_s, 0);
    http.set_keep_alive_timeout(options.keep_alive_s);
    http.set_keep_alive_max_count(1000);
    http.set_payload_max_length(options.max_body_bytes);
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) { return check_before_body(req, res); });
    // Errors httplib answers itself (a malformed request line or header, a URI too long) get
    // the same JSON error object; a body set by a handler is kept.
    http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        send_error(res, error_of(res.status, status_text(res.status), res.status >= 500 ? "server_error" : "invalid_request_error"));
        return httplib::Server::HandlerResponse::Handled;
    }));
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
            if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        send_error(res, error_of(500, "internal server error: " + what, "server_error"));
    });

    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
        const bool ready = engine.load() != nullptr && !stopping;
        res.status = ready ? 200 : 503;
        res.set_content(ready ? "{\"status\":\"ok\"}" : stopping ? "{\"status\":\"stopping\"}" : "{\"status\":\"loading\"}", "application/json");
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
        if (!engine.load()) return send_error(res, error_of(503, "the model is still loading", "server_error", "loading"));
        const Json model = {{"id", model_name}, {"object", "model"}, {"created", static_cast<int64_t>(std::time(nullptr))},
                            {"owned_by", "inference-workbench"}, {"max_model_len", n_ctx}};
        res.set_content(workbench::dump_json({{"object", "list"}, {"data", Json::array({model})}}), "application/json");
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        res.set_content(metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    for (const auto& route : {std::pair{"/v1/completions", Endpoint::completions}, std::pair{"/v1/chat/completions", Endpoint::chat_completions}}) {
        const char* path = route.first;
        const Endpoint endpoint = route.second;   // a plain variable: lambdas capture it (not a structured binding)
        // A body (Content-Length or chunked): read under the size and time limits.
        http.Post(path, [this, endpoint](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
            std::string body;
            bool too_big = false, too_slow = false;
            const auto deadline = Clock::now() + std::chrono::seconds(options.body_deadline_s);
            const bool read = reader([&](const char* data, size_t n) {
                if (body.size() + n > options.max_body_bytes) return !(too_big = true);
                if (Clock::now() > deadline) return !(too_slow = true);
                body.append(data, n);
                return true;
            });
            if (too_big || too_slow || !read) {
                res.set_header("Connection", "close");
                if (too_big)
                    return send_error(res, error_of(413, "the body is larger than " + std::to_string(options.max_body_bytes) + " bytes",
                                                    "invalid_request_error", "body_too_large"));
                if (too_slow)
                    return send_error(res, error_of(408, "the body did not arrive within " + std::to_string(options.body_deadline_s) + " s",
                                                    "invalid_request_error", "timeout"));
                if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding"))
                    return send_error(res, error_of(400, "the request has no body: send a JSON object (with Content-Length)", "invalid_request_error"));
                return send_error(res, error_of(400, "the body could not be read (malformed chunked encoding, or cut short)", "invalid_request_error"));
            }
            complete(endpoint, body, res);
        });
        // No body at all.
        http.Post(path, [this, endpoint](const httplib::Request& req, httplib::Response& res) { complete(endpoint, req.body, res); });
    }
}

ApiServer::ApiServer(ServeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) { impl_->install_routes(); }

ApiServer::~ApiServer() {
    stop();
    if (impl_->listener.joinable()) impl_->listener.join();
}

workbench::Result<int> ApiServer::start() {
    const ServeOptions& o = impl_->options;
    int port = o.port;
    if (port == 0) port = impl_->http.bind_to_any_port(o.host);
    else if (!impl_->http.bind_to_port(o.host, port)) port = -1;
    if (port <= 0)
        return workbench::error(workbench::StatusCode::unavailable,
                                "cannot listen on " + o.host + ":" + std::to_string(o.port) +
                                    " (is another server on that port, or is the address not this machine's?)");
    impl_->http.raise_backlog(1024);
    impl_->listener = std::thread([this] { impl_->http.listen_after_bind(); });
    return port;
}

void ApiServer::serve(workbench::Engine& engine, const std::string& model_name, const std::function<void()>& on_ready) {
    Impl& s = *impl_;
    workbench::BatchOptions loop = engine.loop_options();
    loop.max_running = s.options.max_running;
    loop.max_step_ms = s.options.max_step_ms;
    (void)engine.set_loop_options(loop);   // nothing runs yet, and max_running ≥ 1 was checked by the caller
    s.model_name = model_name;
    s.n_ctx = engine.model_info().n_ctx;
    s.metrics.set_model_name(model_name);
    s.metrics.record_step(engine.step(), engine.loop_counters());   // the pool's size before any request
    s.engine.store(&engine);
    if (on_ready) on_ready();
    while (!s.stopping) {
        if (!engine.has_requests()) {
            engine.wait_for_requests(std::chrono::milliseconds(100));
            if (!engine.has_requests()) continue;
        }
        const workbench::StepReport report = engine.step();
        s.metrics.record_step(report, engine.loop_counters());
        // Requests in flight but none runnable (waiting for KV room): don't spin.
        if (!report.ran) engine.wait_for_requests(std::chrono::milliseconds(5));
    }
}

void ApiServer::stop() {
    if (impl_->stopping.exchange(true)) return;
    impl_->http.stop();
}

bool ApiServer::stopping() const { return impl_->stopping; }
const ServerMetrics& ApiServer::metrics() const { return impl_->metrics; }

}  // namespace wbserver
