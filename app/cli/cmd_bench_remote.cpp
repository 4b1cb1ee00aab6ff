// `bench --remote URL`: measures a remote OpenAI-compatible server (vLLM, SGLang, TensorRT-LLM,
// llama-server, our own serve) the way `vllm bench serve` measures vLLM, and prints its result
// block (or one JSON object with --json). Failed requests are counted and listed, never fatal.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>

#include "commands.h"
#include "history_recorder.h"
#include "remote/serve_benchmark.h"
#include "workbench/json.h"

namespace wbcli {
namespace {

// "1,2,4" → {"1", "2", "4"}.
std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    for (size_t at = 0; at <= text.size();) {
        const size_t comma = std::min(text.find(',', at), text.size());
        out.push_back(text.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

using workbench::Json;
using workbench::json_rounded;

// Prompts in `batch`'s JSON-lines format: {"prompt": ...} or {"messages": [...]}, optional
// "max_tokens" and "temperature". Returns the error, naming the line, or empty.
std::string read_prompts(const std::string& path, int default_max_tokens, std::vector<wbremote::RemoteRequest>& out) {
    std::ifstream in(path);
    if (!in) return path + ": cannot read the prompt file";
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string where = path + ":" + std::to_string(number) + ": ";
        auto v = workbench::parse_json(line);
        if (!v.ok()) return where + v.status().message();
        if (!v->is_object()) return where + "expected a JSON object";
        wbremote::RemoteRequest r;
        r.generation.max_tokens = default_max_tokens;
        r.generation.sampling.temperature = 0;
        if (v->contains("max_tokens")) {
            const Json& m = (*v)["max_tokens"];
            if (!m.is_number_integer() || m.get<int64_t>() < 1 || m.get<int64_t>() > 1000000) return where + "'max_tokens' must be a whole number from 1 to 1000000";
            r.generation.max_tokens = m.get<int32_t>();
        }
        if (v->contains("temperature")) {
            const Json& t = (*v)["temperature"];
            if (!t.is_number() || t.get<double>() < 0 || t.get<double>() > 2) return where + "'temperature' must be a number from 0 to 2";
            r.generation.sampling.temperature = t.get<float>();
        }
        if (v->contains("prompt") && (*v)["prompt"].is_string()) {
            r.chat = false;
            r.prompt = (*v)["prompt"].get<std::string>();
        } else if (v->contains("messages") && (*v)["messages"].is_array() && !(*v)["messages"].empty()) {
            for (const Json& m : (*v)["messages"]) {
                if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") || !m["content"].is_string())
                    return where + "each message needs string 'role' and 'content'";
                r.messages.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
            }
        } else {
            return where + "needs 'prompt' (a string) or 'messages' (a non-empty array)";
        }
        out.push_back(std::move(r));
    }
    if (out.empty()) return path + ": no prompts in the file";
    return {};
}

void line(const char* name, const std::string& value) { std::printf("%-40s %-10s\n", name, value.c_str()); }
void line(const char* name, double value) { std::printf("%-40s %-10.2f\n", name, value); }
void line(const char* name, long long value) { std::printf("%-40s %-10lld\n", name, value); }
void banner(const char* title, char fill) {
    const std::string t = title;
    const size_t left = (50 - std::min<size_t>(50, t.size())) / 2;
    std::printf("%s%s%s\n", std::string(left, fill).c_str(), t.c_str(), std::string(50 - left - std::min<size_t>(50, t.size()), fill).c_str());
}
void stats(const char* title, const char* name, const workbench::LatencyStats& s) {
    banner(title, '-');
    std::printf("%-40s %-10.2f\n", (std::string("Mean ") + name + " (ms):").c_str(), s.mean);
    std::printf("%-40s %-10.2f\n", (std::string("Median ") + name + " (ms):").c_str(), s.p50);
    std::printf("%-40s %-10.2f\n", (std::string("P99 ") + name + " (ms):").c_str(), s.p99);
}

}  // namespace

int bench_remote(int argc, char** argv) {
    const std::vector<FlagSpec> flags = {
        {"--remote", "", true, "URL  the server's base URL, e.g. http://127.0.0.1:8000/v1"},
        {"--model", "", true, "NAME  the model to ask for (default: the first id of /v1/models)"},
        {"--api-key", "", true, "KEY  sent as 'Authorization: Bearer KEY' (default: $OPENAI_API_KEY, else none)"},
        {"--num-prompts", "", true, "N  requests to send (default 100)"},
        {"--concurrency", "", true, "C[,C...]  requests in flight at most (default: no cap); a list runs one benchmark per level, a curve"},
        {"--request-rate", "", true, "R  requests per second, Poisson arrivals; inf sends all at once (default inf)"},
        {"--input-len", "", true, "I  random prompts of about I tokens (default 512), sized by the server's /tokenize or usage counts"},
        {"--output-len", "", true, "O  max_tokens with ignore_eos (default 128)"},
        {"--prompts", "", true, "FILE  prompts in batch's JSON-lines format instead of random ones"},
        {"--seed", "", true, "S  seed of the random prompts and arrival times (default 0)"},
        {"--timeout", "", true, "S  a stream silent this long fails (default 60)"},
        {"--json", "", false, "print one JSON object instead of the result block"},
        db_flag(),
        {"--help", "-h", false, "show this help"},
    };
    Args args;
    if (std::string err = args.parse(argc, argv, 2, flags); !err.empty()) return usage_error("bench --remote: " + err);
    if (args.has("--help")) {
        std::cout << usage_text("bench", "--remote URL [--model NAME] [--concurrency C] [--request-rate R] [--num-prompts N] "
                                         "[--input-len I --output-len O | --prompts FILE] [--json]", flags);
        return 0;
    }
    std::string err;
    wbremote::RemoteEndpoint endpoint;
    endpoint.base_url = args.get("--remote");
    const char* env_key = std::getenv("OPENAI_API_KEY");
    endpoint.api_key = args.get("--api-key", env_key ? env_key : "");
    endpoint.read_timeout_s = args.get_int("--timeout", 60, 1, 3600, err);
    wbremote::ServeBenchmarkOptions o;
    o.model = args.get("--model");
    o.num_prompts = args.get_int("--num-prompts", o.num_prompts, 1, 1000000, err);
    std::vector<int32_t> levels;   // one benchmark per level; 0: no cap
    for (const std::string& item : split_list(args.get("--concurrency", "0"))) {
        char* end = nullptr;
        const long c = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || c < 0 || c > 100000) {
            err = "--concurrency: '" + item + "' is not a whole number from 1 to 100000 (or a comma-separated list of them)";
            break;
        }
        levels.push_back(static_cast<int32_t>(c));
    }
    const std::string rate = args.get("--request-rate", "inf");
    o.request_rate = rate == "inf" ? std::numeric_limits<double>::infinity() : args.get_double("--request-rate", 0, 1e-6, 1e6, err);
    o.input_len = args.get_int("--input-len", o.input_len, 1, 1 << 20, err);
    o.output_len = args.get_int("--output-len", o.output_len, 1, 1 << 20, err);
    o.seed = args.get_u64("--seed", 0, err);
    if (!err.empty()) return usage_error("bench --remote: " + err);
    if (args.has("--prompts"))
        if (std::string bad = read_prompts(args.get("--prompts"), o.output_len, o.prompts); !bad.empty()) return runtime_error(bad);
    const bool json = args.has("--json");

    auto run_level = [&](int32_t concurrency) -> int {
        o.concurrency = concurrency;
        auto result = wbremote::run_serve_benchmark(endpoint, o, [&](int32_t done, int32_t total) {
            if (!json) std::fprintf(stderr, "\r%d/%d requests done", done, total);
        });
        if (!json) std::fprintf(stderr, "\n");
        if (!result.ok()) return runtime_error(endpoint.base_url + ": " + result.status().message());
        const workbench::BatchMetrics& m = result->batch.metrics;
        Json summary = batch_metrics_json(m, m.n_failed);
        summary["base_url"] = endpoint.base_url;
        summary["server"] = wbremote::server_kind_name(result->server);
        summary["model"] = result->model;
        summary["num_prompts"] = o.num_prompts;
        summary["concurrency"] = o.concurrency > 0 ? Json(o.concurrency) : Json(nullptr);
        summary["request_rate"] = std::isinf(o.request_rate) ? Json("inf") : json_rounded(o.request_rate);
        summary["errors"] = result->errors;
        if (auto rec = HistoryRecorder::open_for_remote(args, endpoint.base_url, result->model, wbremote::server_kind_name(result->server))) {
            // One session with a run per request, and one benchmark row (output tokens/s) that the
            // Benchmark page lists beside local ones.
            rec->record_batch("bench --remote " + endpoint.base_url, result->batch);
            const std::string test = "serve c=" + (o.concurrency > 0 ? std::to_string(o.concurrency) : std::string("inf")) + " rate=" +
                                     (std::isinf(o.request_rate) ? std::string("inf") : std::to_string(o.request_rate));
            rec->save_benchmark(test, o.prompts.empty() ? o.input_len : 0, o.output_len, o.concurrency, 0, m.output_tok_s, 0,
                                workbench::dump_json(summary));
            rec->finish();
        }
        for (size_t i = 0; i < result->errors.size() && i < 5; ++i) std::cerr << "workbench-cli: failed: " << result->errors[i] << "\n";
        if (json) {
            print_json_line(summary);
            return m.n_completed > 0 ? 0 : 1;
        }
        banner(" Serving Benchmark Result ", '=');
        line("Server:", std::string(wbremote::server_kind_name(result->server)) + " at " + endpoint.base_url);
        line("Model:", result->model);
        line("Successful requests:", static_cast<long long>(m.n_completed));
        line("Failed requests:", static_cast<long long>(m.n_failed));
        if (o.concurrency > 0) line("Maximum request concurrency:", static_cast<long long>(o.concurrency));
        line("Request rate configured (RPS):", std::isinf(o.request_rate) ? std::string("inf") : std::to_string(o.request_rate));
        line("Benchmark duration (s):", m.duration_ms / 1000.0);
        line("Total input tokens:", static_cast<long long>(m.n_prompt_tokens));
        line("Total generated tokens:", static_cast<long long>(m.n_output_tokens));
        line("Request throughput (req/s):", m.request_throughput);
        line("Output token throughput (tok/s):", m.output_tok_s);
        line("Total token throughput (tok/s):", m.total_tok_s);
        stats("Time to First Token", "TTFT", m.ttft_ms);
        stats("Time per Output Token (excl. 1st token)", "TPOT", m.tpot_ms);
        stats("Inter-token Latency", "ITL", m.itl_ms);
        stats("End-to-end Latency", "E2EL", m.e2e_ms);
        banner("", '=');
        return m.n_completed > 0 ? 0 : 1;
    };
    int rc = 0;
    for (int32_t c : levels)
        if (int level_rc = run_level(c); level_rc != 0) rc = level_rc;
    return rc;
}

}  // namespace wbcli
