// POST /v1/completions and /v1/chat/completions: a checked request becomes an EngineRequest,
// is submitted to the step loop, and its events are written back whole or as a stream.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include <httplib.h>

#include "api_server.h"
#include "openai_request.h"

namespace wbserver {

struct CompletionContext {
    workbench::Engine& engine;
    const std::string& model_name;
    const ServeOptions& options;
    ServerMetrics& metrics;
    const std::atomic<bool>& stopping;
    std::function<bool()> past_grace;    // stopping, and the grace period is over: cancel and say so
    std::function<bool()> client_gone;   // the client closed its connection: cancel quietly
};

void send_error(httplib::Response& res, const ApiError& error);
void handle_completion(const CompletionContext& ctx, Endpoint endpoint, const std::string& body, httplib::Response& res);

}  // namespace wbserver
