// `serve`: the OpenAI-compatible HTTP server (app/server/) on the loaded model. It listens first
// and loads second, so /health answers 503 while the model loads; then the main thread runs the
// engine's step loop until SIGINT or SIGTERM (and the grace period that lets running requests end).
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include <pthread.h>

#include "commands.h"
#include "server/api_server.h"
#include "workbench/backends.h"

namespace wbcli {
namespace {

std::string file_stem(const std::string& path) {
    std::string name = path.substr(path.find_last_of('/') + 1);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gguf") == 0) name.resize(name.size() - 5);
    return name;
}

// "a, b,c" → {"a", "b", "c"}
std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        std::string item = text.substr(start, comma - start);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty()) out.push_back(item);
        start = comma + 1;
    }
    return out;
}

}  // namespace

int cmd_serve(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--host", "", true, "ADDR  address to listen on (default 127.0.0.1: this machine only)"},
        {"--port", "", true, "N  port (default 8080; 0: any free port, printed at start)"},
        {"--api-key", "", true, "KEY  require 'Authorization: Bearer KEY' on /v1/ (default: $WORKBENCH_API_KEY, else none)"},
        {"--served-model-name", "", true, "NAME  the model's name in requests and /v1/models (default: the file's name without .gguf)"},
        {"--max-running", "", true, "N  sequences decoding together (default 32)"},
        {"--max-step-ms", "", true, "MS|auto|0  size prompt chunks so steps beside running streams stay under MS (default auto: 2x a decode step; 0: off)"},
        {"--max-connections", "", true, "N  open connections; beyond it 503 with Retry-After (default 256)"},
        {"--max-body", "", true, "MiB  largest request body (default 8)"},
        {"--max-messages", "", true, "N  most messages in a chat request (default 1024)"},
        {"--max-n", "", true, "N  most completions per request, 'n' (default 16)"},
        {"--timeout", "", true, "S  a silent client's read/write timeout in seconds (default 10)"},
        {"--header-timeout", "", true, "S  a request's headers must arrive within S seconds, however slowly they trickle (default 10)"},
        {"--body-timeout", "", true, "S  a request's body must arrive within S seconds (default 30)"},
        {"--shutdown-grace", "", true, "S  on SIGTERM/SIGINT, running requests may finish for S seconds before they are cancelled (default 5)"},
        {"--allow-host", "", true, "NAMES  Host names accepted besides localhost/127.0.0.1/[::1], comma-separated ('*': any)"},
        {"--cors-origin", "", true, "ORIGINS  web origins allowed to call the server (CORS), comma-separated ('*': any; default none)"},
        {"--special-tokens-in-content", "", false, "parse special-token text typed in chat messages as control tokens (default: it stays text)"},
        {"--parallel-contexts", "", true, "N  KV pool size in full contexts when no --kv-budget is given (default 4)"},
    };
    const auto spf = speculation_flags();
    flags.insert(flags.end(), spf.begin(), spf.end());
    add_engine_flags(flags);
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "serve", "serve [-m MODEL] [--host 127.0.0.1] [--port 8080] [--api-key KEY] [options]", flags, ctx, false);
        rc >= 0)
        return rc;
    std::string err;
    wbserver::ServeOptions o;
    o.host = ctx.args.get("--host", o.host);
    o.port = ctx.args.get_int("--port", o.port, 0, 65535, err);
    const char* env_key = std::getenv("WORKBENCH_API_KEY");
    o.api_key = ctx.args.get("--api-key", env_key ? env_key : "");
    o.max_running = ctx.args.get_int("--max-running", o.max_running, 1, 4096, err);
    if (ctx.args.has("--max-step-ms") && ctx.args.get("--max-step-ms") != "auto")
        o.max_step_ms = ctx.args.get_double("--max-step-ms", 0, 0, 1e6, err);
    o.max_connections = ctx.args.get_int("--max-connections", o.max_connections, 1, 4096, err);
    o.max_body_bytes = static_cast<size_t>(ctx.args.get_int("--max-body", 8, 1, 1024, err)) << 20;
    o.limits.max_messages = ctx.args.get_int("--max-messages", o.limits.max_messages, 1, 1 << 20, err);
    o.limits.max_n = ctx.args.get_int("--max-n", o.limits.max_n, 1, 1024, err);
    o.read_timeout_s = o.write_timeout_s = ctx.args.get_int("--timeout", o.read_timeout_s, 1, 3600, err);
    o.header_timeout_s = ctx.args.get_int("--header-timeout", o.header_timeout_s, 1, 3600, err);
    o.body_deadline_s = ctx.args.get_int("--body-timeout", o.body_deadline_s, 1, 3600, err);
    o.shutdown_grace_s = ctx.args.get_double("--shutdown-grace", o.shutdown_grace_s, 0, 3600, err);
    o.access.allowed_hosts = split_list(ctx.args.get("--allow-host"));
    o.access.cors_origins = split_list(ctx.args.get("--cors-origin"));
    o.access.loopback_bind = wbserver::is_loopback_address(o.host);
    o.special_tokens_in_content = ctx.args.has("--special-tokens-in-content");
    const int contexts = ctx.args.get_int("--parallel-contexts", 4, 1, 1024, err);
    o.speculation = read_speculation(ctx.args, err);
    if (!err.empty()) return usage_error("serve: " + err);
    int rc;
    workbench::EngineConfig config = ctx.config;
    config.model_path = resolve_model_path(ctx.args, rc);
    if (rc >= 0) return rc;
    config.n_seq_max = contexts;
    // A backend that cannot run here is said before the server listens (stderr's one line).
    if (const workbench::Status backend = workbench::check_backend_available(config.backend); !backend.ok())
        return runtime_error(backend.message());
    const std::string model_name = ctx.args.get("--served-model-name", file_stem(config.model_path));

    // SIGINT/SIGTERM are taken by a watcher thread (every thread started from here inherits the
    // mask); a write to a client that has gone must fail, not kill the process.
    std::signal(SIGPIPE, SIG_IGN);
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    std::unique_ptr<workbench::Engine> engine;   // declared first: outlives the server's threads
    wbserver::ApiServer server(o);
    auto port = server.start();
    if (!port.ok()) return runtime_error(port.status().message());
    std::printf("workbench-cli serve: listening on http://%s:%d (loading %s)\n", o.host.c_str(), *port, config.model_path.c_str());
    std::fflush(stdout);
    std::thread watcher([&] {
        const timespec tick{0, 200'000'000};
        while (!server.stopping())
            if (sigtimedwait(&stop_signals, nullptr, &tick) > 0) server.stop();
    });
    auto loaded = workbench::Engine::load(config);
    if (!loaded.ok()) {
        server.stop();
        watcher.join();
        return runtime_error(loaded.status().message());
    }
    engine = std::move(loaded).value();
    const workbench::ModelInfo& info = engine->model_info();
    if (!info.chat_template_warning.empty()) std::cerr << "workbench-cli: warning: " << info.chat_template_warning << "\n";
    server.serve(*engine, model_name, [&] {
        std::printf("workbench-cli serve: ready: model '%s', context %d, KV pool %s, %d threads; /v1/chat/completions, /v1/completions, "
                    "/v1/models, /health, /metrics%s\n",
                    model_name.c_str(), info.n_ctx, format_bytes(info.kv_bytes_allocated).c_str(), info.n_threads,
                    o.api_key.empty() ? "" : " (API key required on /v1/)");
        std::fflush(stdout);
    });
    watcher.join();
    std::printf("workbench-cli serve: stopped\n");
    return 0;
}

}  // namespace wbcli
