// The OpenAI-compatible HTTP server over one Engine (cpp-httplib): GET /health, /v1/models,
// /metrics; POST /v1/completions, /v1/chat/completions (streamed as server-sent events or
// whole). Every request is submitted to the engine's one step loop, so all of them run
// concurrently in its batch; a streaming client that goes away cancels its sequence.
// Threads: start() spawns the HTTP threads; serve() runs the step loop on the calling thread,
// the engine's, until stop() (any thread) and its grace period have passed. Errors are values;
// nothing here exits the process.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "openai_request.h"
#include "request_guard.h"
#include "server_metrics.h"
#include "workbench/engine.h"
#include "workbench/status.h"

namespace wbserver {

struct ServeOptions {
    std::string host = "127.0.0.1";     // loopback unless told otherwise
    int port = 8080;                    // 0: any free port (start() returns it)
    std::string api_key;                // empty: no key asked for
    int32_t max_connections = 256;      // open connections (a stream holds one for its life); beyond: 503
    int32_t max_running = 32;           // sequences decoding together in the step loop
    // Prompt chunks beside running streams sized so a step stays under this many ms (keeps
    // streams' inter-token latency smooth while long prompts are admitted); 0: off, < 0: twice a
    // decode-only step (BatchOptions::max_step_ms), the default: a long prompt would otherwise
    // stall every running stream for as long as its prefill takes.
    double max_step_ms = -1;
    size_t max_body_bytes = 8u << 20;
    RequestLimits limits;
    AccessRules access;                 // Host names, CORS origins
    int read_timeout_s = 10;            // a silent client: each read waits at most this
    int write_timeout_s = 10;           // a client that stops reading
    int keep_alive_s = 5;               // an idle kept-alive connection
    int header_timeout_s = 10;          // a request's line and headers, however slowly they trickle in
    int body_deadline_s = 30;           // a whole request body, likewise
    size_t max_header_bytes = 64u << 10;
    int32_t max_header_lines = 100;
    // After stop(): requests running may finish for this long; then each is cancelled and told
    // so (a stream gets an error event and a proper end). New requests get 503 meanwhile.
    double shutdown_grace_s = 5;
    // Special-token text typed in a chat message ("<|im_start|>") stays text, so a user cannot
    // forge role boundaries; true: parsed as control tokens (the old behaviour).
    bool special_tokens_in_content = false;
    int heartbeat_ms = 2000;            // a stream with nothing to send sends an SSE comment (and so notices a gone client)
    // Speculative decoding for requests that do not choose ("speculative" in the body).
    workbench::SpeculationParams speculation;
};

class ApiServer {
public:
    explicit ApiServer(ServeOptions options);
    ~ApiServer();   // stops and joins the HTTP threads
    ApiServer(const ApiServer&) = delete;
    ApiServer& operator=(const ApiServer&) = delete;

    // Binds and starts answering (/health says 503 until serve() has an engine). Returns the
    // port; unavailable naming the address when it cannot bind.
    workbench::Result<int> start();
    // The engine's thread: runs the step loop for HTTP requests until stop(). `engine` must
    // outlive this ApiServer (HTTP threads tokenize with it until they are joined). `on_ready`
    // is called once requests are taken (/health says 200 from then on).
    void serve(workbench::Engine& engine, const std::string& model_name, const std::function<void()>& on_ready = {});
    // Any thread, idempotent.
    void stop();
    bool stopping() const;
    const ServerMetrics& metrics() const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace wbserver
