// `batch`: runs a prompt file as concurrent requests through the continuous-batching engine
// (eval sets, RL rollouts). One JSON object per line: "prompt" (raw text) or "messages" (a chat,
// rendered with the model's template), optional "max_tokens", "temperature", "n", "arrival_ms"
// (when it arrives after the start, for load patterns). A bad line
// gets its own error and the rest still run. Completions go to --out as JSON lines as they
// finish; the summary prints vLLM `bench serve`'s aggregates.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "commands.h"
#include "history_recorder.h"
#include "workbench/json.h"

namespace wbcli {
namespace {

using json = workbench::Json;
using workbench::json_rounded;

// A member of an object, or nullptr when absent.
const json* member(const json& v, const char* key) {
    const auto it = v.find(key);
    return it == v.end() ? nullptr : &*it;
}
// A number's value, or NaN for anything else (so every range check below refuses it).
double number(const json& v) { return v.is_number() ? v.get<double>() : std::nan(""); }

struct Line {
    int number = 0;                  // 1-based line in the file
    std::string error;               // why it cannot run
    workbench::BatchRequest request;
};

// Reads one line's object into a request; returns the error, or empty.
std::string read_line(const json& v, workbench::Engine& engine, const workbench::GenerationRequest& defaults,
                      int n_samples, bool chat, workbench::BatchRequest& out) {
    if (!v.is_object()) return "expected a JSON object";
    out.generation = defaults;
    out.n_samples = n_samples;
    if (const json* m = member(v, "max_tokens")) {
        const double x = number(*m);
        if (!(x >= 0 && x <= 1e6) || x != static_cast<int>(x)) return "'max_tokens' must be a whole number from 0 to 1000000";
        out.generation.max_tokens = static_cast<int32_t>(x);
    }
    if (const json* t = member(v, "temperature")) {
        const double x = number(*t);
        if (!(x >= 0 && x <= 100)) return "'temperature' must be a number from 0 to 100";
        out.generation.sampling.temperature = static_cast<float>(x);
    }
    if (const json* a = member(v, "arrival_ms")) {
        const double x = number(*a);
        if (!(x >= 0 && x <= 8.64e7)) return "'arrival_ms' must be a number of milliseconds from 0 to 86400000";
        out.arrival_ms = x;
    }
    if (const json* n = member(v, "n")) {
        const double x = number(*n);
        if (!(x >= 1 && x <= 1024) || x != static_cast<int>(x)) return "'n' must be a whole number from 1 to 1024";
        out.n_samples = static_cast<int32_t>(x);
    }
    const json* prompt = member(v, "prompt");
    const json* messages = member(v, "messages");
    if (prompt && messages) return "give 'prompt' or 'messages', not both";
    if (prompt) {
        if (!prompt->is_string()) return "'prompt' must be a string";
        const std::string user = prompt->get<std::string>();
        const std::string text = chat ? engine.render_chat({{"user", user}}, true) : user;
        out.prompt = engine.tokenize(text, true, true);
        return {};
    }
    if (!messages) return "needs 'prompt' (a string) or 'messages' (an array of {\"role\", \"content\"})";
    if (!messages->is_array() || messages->empty()) return "'messages' must be a non-empty array";
    std::vector<workbench::ChatMessage> chat_messages;
    for (size_t i = 0; i < messages->size(); ++i) {
        const json& m = (*messages)[i];
        const json* role = m.is_object() ? member(m, "role") : nullptr;
        const json* content = m.is_object() ? member(m, "content") : nullptr;
        if (!role || !role->is_string() || !content || !content->is_string())
            return "messages[" + std::to_string(i) + "] needs string 'role' and 'content'";
        chat_messages.push_back({role->get<std::string>(), content->get<std::string>()});
    }
    out.prompt = engine.tokenize(engine.render_chat(chat_messages, true), true, true);
    return {};
}


void print_stats(const char* title, const char* name, const workbench::LatencyStats& s) {
    std::printf("---------- %s ----------\n", title);
    std::printf("Mean %s (ms):   %10.2f\nMedian %s (ms): %10.2f\nP90 %s (ms):    %10.2f\nP99 %s (ms):    %10.2f\n", name, s.mean,
                name, s.p50, name, s.p90, name, s.p99);
}

}  // namespace

int cmd_batch(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--file", "-f", true, "PATH  prompts, one JSON object per line: \"prompt\" or \"messages\", optional \"max_tokens\", \"temperature\", \"n\", \"arrival_ms\""},
        {"--samples", "-n", true, "N  completions per prompt (default 1; a line's \"n\" overrides)"},
        {"--concurrency", "", true, "C  requests decoding at once (default 8)"},
        {"--max-batch-tokens", "", true, "N  tokens per step, decodes plus prompt chunks (default 256)"},
        {"--max-step-ms", "", true, "MS|auto  size prompt chunks so steps beside running streams stay under MS (auto: 2x a decode step)"},
        {"--max-tokens", "", true, "N  tokens per completion unless a line says (default 128)"},
        {"--chat", "", false, "wrap each \"prompt\" as a user message in the chat template"},
        {"--out", "-o", true, "PATH  write each completion with its metrics as a JSON line"},
        {"--json", "", false, "print the summary as one JSON object"},
        db_flag(),
    };
    const auto sf = sampling_flags();
    flags.insert(flags.end(), sf.begin(), sf.end());
    const auto spf = speculation_flags();
    flags.insert(flags.end(), spf.begin(), spf.end());
    add_engine_flags(flags);
    const std::string synopsis = "-f prompts.jsonl [-n SAMPLES] [--concurrency C] [--out results.jsonl] [--json]";
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "batch", synopsis, flags, ctx, false); rc >= 0) return rc;
    std::string err;
    const int samples = ctx.args.get_int("--samples", 1, 1, 1024, err);
    const int concurrency = ctx.args.get_int("--concurrency", 8, 1, 4096, err);
    const int max_batch_tokens = ctx.args.get_int("--max-batch-tokens", 256, 1, 1 << 20, err);
    const int max_tokens = ctx.args.get_int("--max-tokens", 128, 0, 1 << 20, err);
    const bool step_auto = ctx.args.get("--max-step-ms") == "auto";
    const double max_step_ms = step_auto ? -1.0 : ctx.args.get_double("--max-step-ms", 0, 0.001, 1e6, err);
    workbench::GenerationRequest defaults;
    defaults.max_tokens = max_tokens;
    defaults.sampling = read_sampling(ctx.args, err);
    defaults.speculation = read_speculation(ctx.args, err);
    if (!err.empty()) return usage_error("batch: " + err);
    if (!ctx.args.has("--file")) return usage_error("batch: -f/--file PATH is required (one JSON object per line)");
    const std::string path = ctx.args.get("--file");
    std::ifstream in(path);
    if (!in) return runtime_error(path + ": cannot open the prompt file");
    // Each running sequence gets a context of its own in the pool (2048 tokens unless --ctx).
    auto adjust = [&](workbench::EngineConfig& config) {
        if (config.n_ctx == 0) config.n_ctx = 2048;
        config.n_seq_max = concurrency;
    };
    if (int rc = prepare_command(argc, argv, "batch", synopsis, flags, ctx, true, adjust); rc >= 0) return rc;
    workbench::Engine& engine = *ctx.engine;

    std::vector<Line> lines;
    std::string text;
    for (int number = 1; std::getline(in, text); ++number) {
        if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
        Line line;
        line.number = number;
        const auto v = workbench::parse_json(text);
        if (!v.ok()) line.error = "not valid JSON (" + v.status().message() + ")";
        else line.error = read_line(*v, engine, defaults, samples, ctx.args.has("--chat"), line.request);
        lines.push_back(std::move(line));
    }
    if (lines.empty()) return runtime_error(path + ": no prompts (one JSON object per line)");

    std::unique_ptr<std::ofstream> out;
    if (ctx.args.has("--out")) {
        out = std::make_unique<std::ofstream>(ctx.args.get("--out"), std::ios::trunc);
        if (!*out) return runtime_error(ctx.args.get("--out") + ": cannot write the results file");
    }
    std::vector<workbench::BatchRequest> requests;
    std::vector<int> line_of;   // request → line number
    int n_bad = 0;
    for (const Line& l : lines) {
        if (!l.error.empty()) {
            ++n_bad;
            std::cerr << "workbench-cli: " << path << ":" << l.number << ": " << l.error << " (skipped)\n";
            if (out) {
                *out << workbench::dump_json({{"line", l.number}, {"error", l.error}}) << "\n";
            }
            continue;
        }
        requests.push_back(l.request);
        line_of.push_back(l.number);
    }
    int64_t n_total = 0;
    for (const auto& r : requests) n_total += r.n_samples;

    workbench::BatchOptions options;
    options.max_running = concurrency;
    options.max_batch_tokens = max_batch_tokens;
    options.max_step_ms = max_step_ms;
    const bool tty = isatty(STDERR_FILENO);
    int64_t n_done = 0, n_tokens = 0;
    auto on_event = [&](const workbench::RequestEvent& ev) {
        using Kind = workbench::RequestEvent::Kind;
        if (ev.kind == Kind::token) ++n_tokens;
        if (ev.kind != Kind::finished && ev.kind != Kind::failed) return;
        ++n_done;
        const int line = line_of[static_cast<size_t>(ev.request)];
        if (ev.kind == Kind::failed) std::cerr << (tty ? "\r" : "") << "workbench-cli: " << path << ":" << line << ": " << ev.status.message() << "\n";
        if (out) {
            json j = {{"line", line}, {"sample", ev.sample}};
            if (ev.kind == Kind::failed) {
                j["error"] = ev.status.message();
            } else {
                const workbench::RequestMetrics& m = ev.metrics;
                j["text"] = ev.text;
                j["stop_reason"] = workbench::stop_reason_name(ev.stop_reason);
                j["n_prompt_tokens"] = m.n_prompt_tokens;
                j["n_prompt_cached"] = m.n_prompt_cached;
                j["n_output_tokens"] = m.n_output_tokens;
                j["queue_ms"] = json_rounded(m.queue_ms);
                j["ttft_ms"] = json_rounded(m.ttft_ms);
                j["tpot_ms"] = json_rounded(m.tpot_ms);
                j["e2e_ms"] = json_rounded(m.e2e_ms);
                j["preemptions"] = m.n_preemptions;
                j["draft_tokens"] = m.n_draft_tokens;
                j["accepted_tokens"] = m.n_accepted_tokens;
                json& gaps = j["itl_ms"] = json::array();
                for (double g : m.itl_ms) gaps.push_back(json_rounded(g));
            }
            *out << workbench::dump_json(j) << "\n" << std::flush;
        }
        if (tty) {
            const int width = 30;
            const int fill = n_total > 0 ? static_cast<int>(width * n_done / n_total) : width;
            std::fprintf(stderr, "\r[%s%s] %lld/%lld completions, %lld tokens, %.1f s", std::string(static_cast<size_t>(fill), '#').c_str(),
                         std::string(static_cast<size_t>(width - fill), '.').c_str(), static_cast<long long>(n_done),
                         static_cast<long long>(n_total), static_cast<long long>(n_tokens), ev.t_ms / 1000.0);
        }
    };
    auto result = engine.run_batch(requests, options, on_event);
    if (tty) std::fprintf(stderr, "\n");
    if (!result.ok()) return runtime_error(result.status().message());
    const workbench::BatchMetrics& m = result->metrics;
    const int n_failed = m.n_failed + n_bad;
    if (auto recorder = HistoryRecorder::open_if_asked(ctx.args, engine, ctx.config)) recorder->record_batch("batch: " + path, *result);

    if (ctx.args.has("--json")) {
        json out = batch_metrics_json(m, n_failed);
        out["steps"] = m.n_steps;
        out["preemptions"] = m.n_preemptions;
        out["max_running"] = m.max_running;
        out["kv_bytes_peak"] = m.kv_bytes_peak;
        out["draft_tokens"] = m.n_draft_tokens;
        out["accepted_tokens"] = m.n_accepted_tokens;
        out["acceptance_rate"] = m.n_draft_tokens > 0 ? json_rounded(static_cast<double>(m.n_accepted_tokens) / static_cast<double>(m.n_draft_tokens)) : json(nullptr);
        out["concurrency"] = concurrency;
        out["max_batch_tokens"] = max_batch_tokens;
        print_json_line(out);
    } else {
        std::printf("Completions:                     %d (%d failed)\n", m.n_completed, n_failed);
        std::printf("Duration (s):                    %.2f\n", m.duration_ms / 1000.0);
        std::printf("Total input tokens:              %lld\n", static_cast<long long>(m.n_prompt_tokens));
        std::printf("Total generated tokens:          %lld\n", static_cast<long long>(m.n_output_tokens));
        std::printf("Request throughput (req/s):      %.2f\n", m.request_throughput);
        std::printf("Output token throughput (tok/s): %.2f\n", m.output_tok_s);
        std::printf("Total token throughput (tok/s):  %.2f\n", m.total_tok_s);
        print_stats("Time to first token", "TTFT", m.ttft_ms);
        print_stats("Time per output token (excl. 1st)", "TPOT", m.tpot_ms);
        print_stats("Inter-token latency", "ITL", m.itl_ms);
        std::printf("Steps: %d, preemptions: %d, most running: %d, KV peak: %s\n", m.n_steps, m.n_preemptions, m.max_running,
                    format_bytes(m.kv_bytes_peak).c_str());
        if (m.n_draft_tokens > 0)
            std::printf("Speculative decoding: %lld of %lld drafted tokens accepted (%.1f%%)\n", static_cast<long long>(m.n_accepted_tokens),
                        static_cast<long long>(m.n_draft_tokens), 100.0 * static_cast<double>(m.n_accepted_tokens) / static_cast<double>(m.n_draft_tokens));
    }
    return n_failed > 0 ? 1 : 0;
}

}  // namespace wbcli
