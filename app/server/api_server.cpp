// The HTTP side: cpp-httplib parses HTTP over our guarded connections; here are the routes, the
// checks every request passes before its body is read (Host, Origin, framing, path, method, API
// key, declared size), bodies read under a size limit, the step loop's thread and the shutdown
// with its grace period.
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
#include "http_connection.h"

namespace wbserver {
namespace {

using workbench::Json;
using Clock = std::chrono::steady_clock;

// Whether the connection this thread serves is past --max-connections (set by ConnectionPool
// around the refusal it runs).
thread_local bool t_over_connection_limit = false;

// httplib hands each accepted connection to this queue. Every connection within the limit gets
// a thread of its own (a stream holds its connection for its whole life, so a smaller pool would
// starve streams); one past it is answered 503 at once by a few refusal threads, without reading
// its request, so clients that trickle bytes cannot keep anyone else (or /health) waiting.
class ConnectionPool : public httplib::TaskQueue {
public:
    explicit ConnectionPool(int32_t max_connections)
        : max_(max_connections), pool_(static_cast<size_t>(max_connections)), refusals_(4) {}
    void enqueue(std::function<void()> fn) override {
        if (open_.load() >= max_) {   // only the listener's thread adds, so this check holds
            refusals_.enqueue([fn = std::move(fn)] {
                t_over_connection_limit = true;
                fn();
                t_over_connection_limit = false;
            });
            return;
        }
        open_.fetch_add(1);
        pool_.enqueue([this, fn = std::move(fn)] {
            fn();
            open_.fetch_sub(1);
        });
    }
    void shutdown() override {
        pool_.shutdown();
        refusals_.shutdown();
    }

private:
    const int32_t max_;
    std::atomic<int32_t> open_{0};
    httplib::ThreadPool pool_, refusals_;
};

// httplib's Server with our connection loop (http_connection.h) in place of its own.
class HttpServer : public httplib::Server {
public:
    ConnectionLimits limits;
    const std::atomic<bool>* stopping = nullptr;
    std::function<std::string(int status)> error_body;

    // httplib 0.11 listens with a backlog of 5; 64 clients reconnecting at once overflow that, and
    // the kernel then drops handshakes. Listening again on the bound socket raises it (Linux).
    void raise_backlog(int backlog) {
        if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, backlog);
    }
    // Stops accepting while the connections open keep going: accept() fails and httplib's loop
    // closes the socket and joins them. (Server::stop() would also make chunked answers end
    // mid-stream, without their last chunk.)
    void stop_accepting() {
        const socket_t sock = svr_sock_;
        if (sock != INVALID_SOCKET) ::shutdown(sock, SHUT_RDWR);
    }

private:
    bool process_and_close_socket(socket_t sock) override {
        if (t_over_connection_limit) {
            refuse_connection(sock, error_body(503));
            return true;
        }
        const ConnectionHooks hooks{[this](httplib::Stream& strm, bool close_connection, bool& connection_closed) {
                                        return process_request(strm, close_connection, connection_closed, nullptr);
                                    },
                                    error_body};
        serve_connection(sock, limits, *stopping, hooks);
        return true;
    }
};

// After this answer the connection closes (its input is not in a state to read another request).
void close_after_answer() {
    if (Connection* c = current_connection()) c->close_after = true;
}

struct Route {
    const char* path;    // a trailing '/': the prefix of /v1/models/{id}
    const char* allow;   // the Allow header
};
constexpr Route kRoutes[] = {{"/health", "GET, HEAD"},
                             {"/v1/models", "GET, HEAD"},
                             {"/v1/models/", "GET, HEAD"},
                             {"/metrics", "GET, HEAD"},
                             {"/v1/completions", "POST"},
                             {"/v1/chat/completions", "POST"}};

const Route* find_route(const std::string& path) {
    for (const Route& r : kRoutes) {
        const std::string_view p = r.path;
        if (path == p || (p.back() == '/' && path.size() > p.size() && path.compare(0, p.size(), p) == 0)) return &r;
    }
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
        case 408: return "the request's headers or body did not arrive in time";
        case 413: return "the request body is too large";
        case 414: return "the request line is too long";
        case 416: return "range not satisfiable";
        case 431: return "the request headers are too large (too many, or too long)";
        case 503: return "the server is shutting down";
        default: return status >= 500 ? "internal server error" : "the request was refused";
    }
}

// The status a request that stopped being read gets, in place of httplib's generic 400.
int status_of_abort(ReadAbort abort, int status) {
    switch (abort) {
        case ReadAbort::header_too_large: return 431;
        case ReadAbort::header_deadline:
        case ReadAbort::body_deadline: return 408;
        case ReadAbort::shutting_down: return 503;
        case ReadAbort::none: break;
    }
    return status;
}

}  // namespace

struct ApiServer::Impl {
    explicit Impl(ServeOptions o) : options(std::move(o)), metrics("") {}

    ServeOptions options;
    ServerMetrics metrics;
    HttpServer http;
    std::thread listener;
    std::atomic<bool> stopping{false};
    std::atomic<Clock::rep> stop_time{0};
    std::atomic<workbench::Engine*> engine{nullptr};
    std::string model_name;          // set before `engine` is published, read after
    int32_t n_ctx = 0;
    std::string attention, kv_types;   // reported with the model: a client places its rows on the KV map

    // Whether stop() was called more than `grace_s` + `extra_s` ago.
    bool past_grace(double extra_s = 0) const {
        if (!stopping) return false;
        const auto wait = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.shutdown_grace_s + extra_s));
        return Clock::now() >= Clock::time_point(Clock::duration(stop_time.load())) + wait;
    }
    void install_routes();
    httplib::Server::HandlerResponse check_before_body(const httplib::Request& req, httplib::Response& res);
    httplib::Server::HandlerResponse check_headers_and_route(const httplib::Request& req, httplib::Response& res);
    void complete(Endpoint endpoint, const std::string& body, httplib::Response& res);
    Json model_json() const {
        return {{"id", model_name}, {"object", "model"}, {"created", static_cast<int64_t>(std::time(nullptr))},
                {"owned_by", "inference-workbench"}, {"max_model_len", n_ctx},
                {"attention", attention}, {"kv_types", kv_types}};
    }
};

// Whether the request says a body follows (which httplib reads only for POST).
bool declares_body(const httplib::Request& req) {
    return req.has_header("Transfer-Encoding") || (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
}

httplib::Server::HandlerResponse ApiServer::Impl::check_before_body(const httplib::Request& req, httplib::Response& res) {
    using HR = httplib::Server::HandlerResponse;
    // A body nobody will read must not be taken for the next request (a refused POST's body
    // could carry one that passes every check): such a connection closes after its answer.
    if (declares_body(req) && req.method != "POST") close_after_answer();
    const HR verdict = check_headers_and_route(req, res);
    if (verdict == HR::Handled && declares_body(req)) close_after_answer();
    return verdict;
}

httplib::Server::HandlerResponse ApiServer::Impl::check_headers_and_route(const httplib::Request& req, httplib::Response& res) {
    using HR = httplib::Server::HandlerResponse;
    if (auto refused = check_request_headers(req, options.access)) {
        if (refused->http_status == 400) close_after_answer();   // its framing cannot be trusted
        send_error(res, *refused);
        return HR::Handled;
    }
    const Route* route = find_route(req.path);
    if (!route) {
        send_error(res, error_of(404, "no such path: " + req.path + " (try /v1/chat/completions, /v1/completions, /v1/models, /health, /metrics)",
                                 "invalid_request_error", "not_found"));
        return HR::Handled;
    }
    if (req.method == "OPTIONS") {   // a CORS preflight (its Origin passed the check above)
        res.status = 204;
        res.set_header("Allow", std::string(route->allow) + ", OPTIONS");
        if (req.has_header("Origin")) {
            res.set_header("Access-Control-Allow-Methods", std::string(route->allow) + ", OPTIONS");
            res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
            res.set_header("Access-Control-Max-Age", "600");
        }
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
            // OpenAI's type for a missing or wrong key.
            send_error(res, error_of(401, bearer ? "the API key is not valid" : "an API key is required: 'Authorization: Bearer KEY'",
                                     "invalid_request_error", "invalid_api_key"));
            return HR::Handled;
        }
    }
    if (req.method == "POST" && !req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) {
        // httplib would read a body without a length until the client closes.
        close_after_answer();
        send_error(res, error_of(400, "the request has no body: send a JSON object (with Content-Length)", "invalid_request_error"));
        return HR::Handled;
    }
    if (req.method == "POST" && req.has_header("Content-Length")) {
        const std::string text = req.get_header_value("Content-Length");
        unsigned long long length = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), length);
        if (ec != std::errc() || end != text.data() + text.size()) {
            close_after_answer();
            send_error(res, error_of(400, "the Content-Length header is not a number: '" + text + "'", "invalid_request_error"));
            return HR::Handled;
        }
        if (length > options.max_body_bytes) {   // refused before a byte of it is read (and before any 100 Continue)
            close_after_answer();
            send_error(res, error_of(413, "the body has " + text + " bytes; at most " + std::to_string(options.max_body_bytes) +
                                              " are accepted", "invalid_request_error", "body_too_large"));
            return HR::Handled;
        }
    }
    if (stopping) {
        close_after_answer();
        res.set_header("Retry-After", "5");
        send_error(res, error_of(503, "the server is shutting down", "server_error", "shutting_down"));
        return HR::Handled;
    }
    return HR::Unhandled;
}

void ApiServer::Impl::complete(Endpoint endpoint, const std::string& body, httplib::Response& res) {
    workbench::Engine* e = engine.load();
    if (!e) {
        res.set_header("Retry-After", "5");
        return send_error(res, error_of(503, "the model is still loading; /health answers 200 once it is ready", "server_error", "loading"));
    }
    Connection* connection = current_connection();
    GuardedStream* stream = connection ? &connection->stream : nullptr;
    const CompletionContext ctx{*e,
                                model_name,
                                options,
                                metrics,
                                stopping,
                                [this] { return past_grace(); },
                                [stream] { return stream && stream->peer_gone(); }};
    handle_completion(ctx, endpoint, body, res);
}

void ApiServer::Impl::install_routes() {
    http.new_task_queue = [this] { return new ConnectionPool(options.max_connections); };
    http.limits = {options.header_timeout_s, options.body_deadline_s, options.read_timeout_s, options.write_timeout_s, options.keep_alive_s,
                   1000, options.max_header_bytes, options.max_header_lines, ConnectionLimits{}.max_header_line};
    http.stopping = &stopping;
    http.error_body = [this](int status) {
        const std::string message = status == 503 && !stopping
                                        ? "the server has " + std::to_string(options.max_connections) +
                                              " connections open, its limit (--max-connections); retry shortly"
                                        : status_text(status);
        return workbench::dump_json(error_json(
            error_of(status, message, status >= 500 ? "server_error" : "invalid_request_error", status == 503 && !stopping ? "too_many_connections" : "")));
    };
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
    // An oversize or refused request is answered before the client sends its body, not after a 100 Continue.
    http.set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
        return check_before_body(req, res) == httplib::Server::HandlerResponse::Handled ? res.status : 100;
    });
    // Errors httplib answers itself (a malformed request line or header, a URI too long) get
    // the same JSON error object, and the status of the limit that stopped the read.
    http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        if (Connection* c = current_connection()) {
            res.status = status_of_abort(c->stream.abort(), res.status);
            c->close_after = true;
        }
        send_error(res, error_of(res.status, status_text(res.status), res.status >= 500 ? "server_error" : "invalid_request_error"));
        return httplib::Server::HandlerResponse::Handled;
    }));
    // Last touches on every answer: one "Connection: close" where the connection ends (httplib
    // may have added its own), and CORS headers for an allowed origin.
    http.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (Connection* c = current_connection(); c && c->close_after) {
            res.headers.erase("Connection");
            res.headers.erase("Keep-Alive");
            res.set_header("Connection", "close");
        }
        if (req.has_header("Origin") && origin_allowed(req.get_header_value("Origin"), options.access)) {
            res.set_header("Access-Control-Allow-Origin", req.get_header_value("Origin"));
            res.set_header("Vary", "Origin");
        }
    });
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
        res.set_content(workbench::dump_json({{"object", "list"}, {"data", Json::array({model_json()})}}), "application/json");
    });
    http.Get("/v1/models/(.+)", [this](const httplib::Request& req, httplib::Response& res) {
        if (!engine.load()) return send_error(res, error_of(503, "the model is still loading", "server_error", "loading"));
        const std::string id = req.matches[1];
        if (id != model_name)
            return send_error(res, error_of(404, "the model '" + id + "' does not exist; this server serves '" + model_name + "'",
                                            "invalid_request_error", "model_not_found"));
        res.set_content(workbench::dump_json(model_json()), "application/json");
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        res.set_content(metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    for (const auto& route : {std::pair{"/v1/completions", Endpoint::completions}, std::pair{"/v1/chat/completions", Endpoint::chat_completions}}) {
        const char* path = route.first;
        const Endpoint endpoint = route.second;   // a plain variable: lambdas capture it (not a structured binding)
        // A body (Content-Length or chunked): read under the size limit; the connection holds
        // the deadline.
        http.Post(path, [this, endpoint](const httplib::Request&, httplib::Response& res, const httplib::ContentReader& reader) {
            std::string body;
            bool too_big = false;
            const bool read = reader([&](const char* data, size_t n) {
                if (body.size() + n > options.max_body_bytes) return !(too_big = true);
                body.append(data, n);
                return true;
            });
            Connection* connection = current_connection();
            const ReadAbort abort = connection ? connection->stream.abort() : ReadAbort::none;
            if (connection) connection->stream.body_read();
            if (too_big || !read) {
                close_after_answer();
                if (too_big)
                    return send_error(res, error_of(413, "the body is larger than " + std::to_string(options.max_body_bytes) + " bytes",
                                                    "invalid_request_error", "body_too_large"));
                if (abort == ReadAbort::shutting_down)
                    return send_error(res, error_of(503, "the server is shutting down", "server_error", "shutting_down"));
                if (abort == ReadAbort::body_deadline)
                    return send_error(res, error_of(408, "the body did not arrive within " + std::to_string(options.body_deadline_s) + " s",
                                                    "invalid_request_error", "timeout"));
                return send_error(res, error_of(400, "the body could not be read (malformed chunked encoding, or cut short)", "invalid_request_error"));
            }
            complete(endpoint, body, res);
        });
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
    s.attention = engine.model_info().attention;
    s.kv_types = engine.model_info().kv_types;
    s.metrics.set_model_name(model_name);
    s.metrics.record_step(engine.step(), engine.loop_counters());   // the pool's size before any request
    s.engine.store(&engine);
    if (on_ready) on_ready();
    for (;;) {
        if (s.stopping) {
            // Running requests finish within the grace period; past it their handlers cancel
            // them, and the steps after that free them. A bound in case a handler never returns.
            if (!engine.has_requests()) break;
            if (s.past_grace(10)) break;
        }
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
    Clock::rep unset = 0;   // the time first, so past_grace() never reads it unset
    impl_->stop_time.compare_exchange_strong(unset, Clock::now().time_since_epoch().count());
    if (impl_->stopping.exchange(true)) return;
    impl_->http.stop_accepting();
}

bool ApiServer::stopping() const { return impl_->stopping; }
const ServerMetrics& ApiServer::metrics() const { return impl_->metrics; }

}  // namespace wbserver
