// `run`: one prompt in, streamed text out, then TTFT / prefill / decode speeds; --json prints a
// single JSON object (text, ids, prompt size and metrics) and nothing else on stdout.
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "history_recorder.h"
#include "workbench/json.h"
#include "workbench/structured_output.h"

namespace wbcli {
namespace {

using workbench::Json;
using workbench::json_rounded;

Json roofline_json(const std::optional<workbench::StepRoofline>& step) {
    if (!step) return nullptr;
    Json j;
    j["tokens"] = step->n_tokens;
    for (auto [part, p] : {std::pair{"matmul", &step->matmul}, {"attention", &step->attention}, {"index", &step->index}})
        j[part] = {{"ops", json_rounded(p->ops)},
                   {"bytes", json_rounded(p->bytes)},
                   {"seconds", json_rounded(p->seconds)},
                   {"ops_per_byte", json_rounded(p->bytes > 0 ? p->ops / p->bytes : 0.0)},
                   {"gops", json_rounded(p->seconds > 0 ? p->ops / p->seconds / 1e9 : 0.0)}};
    return j;
}

void print_json(const workbench::GenerationResult& r, const workbench::ModelInfo& info, const workbench::Engine::RooflineSnapshot& roof) {
    const auto& m = r.metrics;
    Json j;
    j["text"] = r.text;
    j["tokens"] = r.tokens;
    j["prompt_tokens"] = m.n_prompt_tokens;
    j["stop_reason"] = workbench::stop_reason_name(r.stop_reason);
    j["attention"] = info.attention;
    j["attention_runs"] = info.attention_runs;
    j["kv_type"] = info.kv_types;
    j["weights"] = info.weight_type;
    Json& weight_types = j["weight_types"] = Json::array();
    for (const auto& t : info.weight_types) weight_types.push_back({{"type", t.type}, {"tensors", t.n_tensors}, {"bytes", t.n_bytes}});
    j["metrics"] = {{"ttft_ms", m.n_generated > 0 ? json_rounded(m.ttft_ms) : Json(nullptr)},
                    {"prefill_tok_s", json_rounded(m.prefill_tok_s)},
                    {"decode_tok_s", json_rounded(m.decode_tok_s)},
                    {"itl_ms_p50", json_rounded(m.itl_ms_p50)},
                    {"kv_bytes", m.kv_bytes},
                    {"kv_bytes_peak", m.kv_bytes_peak},
                    {"kv_bytes_allocated", m.kv_bytes_allocated},
                    {"kv_bytes_full", m.kv_bytes_full},
                    {"kv_bytes_read_per_token", m.kv_bytes_read_per_token},
                    {"context_tokens", m.n_context_tokens},
                    {"draft_tokens", m.n_draft_tokens},
                    {"accepted_tokens", m.n_accepted_tokens},
                    {"acceptance_rate", json_rounded(m.acceptance_rate)}};
    j["roofline"] = {{"prefill", roofline_json(roof.prefill)}, {"decode", roofline_json(roof.decode)}};
    print_json_line(j);
}

// A session of one turn: the prompt, the reply and its run.
void record_run(HistoryRecorder& rec, const std::string& prompt, const workbench::GenerationResult& r, uint64_t seed) {
    workbench::Store& store = rec.store();
    workbench::SessionRecord session;
    session.configuration_id = rec.configuration_id();
    auto session_id = store.create_session(session);
    if (!session_id.ok()) return rec.warn(session_id.status());
    workbench::RunRecord run = rec.new_run(*session_id);
    run.seed = static_cast<int64_t>(seed);
    auto run_id = store.begin_run(run);
    if (!run_id.ok()) return rec.warn(run_id.status());
    run.id = *run_id;
    workbench::apply_metrics(run, r.metrics);
    run.stop_reason = workbench::stop_reason_name(r.stop_reason);
    (void)store.finish_run(run);
    workbench::MessageRecord message;
    message.session_id = *session_id;
    message.role = "user";
    message.text = prompt;
    (void)store.add_message(message);
    message.run_id = *run_id;
    message.role = "assistant";
    message.text = r.text;
    (void)store.add_message(message);
    rec.finish();
}

std::string fmt(const std::optional<double>& v, const char* unit) {
    if (!v) return "n/a";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1f %s", *v, unit);
    return buf;
}

}  // namespace

int cmd_run(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--prompt", "-p", true, "TEXT  the prompt (required)"},
        {"--n-predict", "-n", true, "N  tokens to generate (default 256)"},
        {"--chat", "", false, "wrap the prompt as a user turn in the model's chat template"},
        {"--ignore-eos", "", false, "keep generating past end-of-generation tokens, up to -n"},
        {"--stop", "", true, "TEXT  stop when the output contains TEXT"},
        {"--json", "", false, "print one JSON object with text, tokens and metrics (no streaming)"},
        {"--grammar", "", true, "FILE  a GBNF grammar the output follows (llama.cpp's syntax)"},
        {"--json-schema", "", true, "FILE  a JSON Schema the output follows (docs/STRUCTURED_OUTPUT.md lists the subset)"},
        db_flag(),
    };
    auto sf = sampling_flags();
    flags.insert(flags.end(), sf.begin(), sf.end());
    const auto spf = speculation_flags();
    flags.insert(flags.end(), spf.begin(), spf.end());
    // Validate flags before the (slow) model load, so a typo fails fast.
    add_engine_flags(flags);
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "run", "-p TEXT [options]", flags, ctx, false); rc >= 0) return rc;
    if (!ctx.args.has("--prompt")) return usage_error("run: -p/--prompt TEXT is required");
    std::string err;
    workbench::GenerationRequest req;
    req.max_tokens = ctx.args.get_int("--n-predict", 256, 0, 1 << 20, err);
    req.sampling = read_sampling(ctx.args, err);
    req.speculation = read_speculation(ctx.args, err);
    req.ignore_eos = ctx.args.has("--ignore-eos");
    if (ctx.args.has("--stop")) req.stop_strings.push_back(ctx.args.get("--stop"));
    if (!err.empty()) return usage_error("run: " + err);
    if (ctx.args.has("--grammar") && ctx.args.has("--json-schema")) return usage_error("run: give --grammar or --json-schema, not both");
    for (const char* flag : {"--grammar", "--json-schema"}) {
        if (!ctx.args.has(flag)) continue;
        auto text = read_text_file(ctx.args.get(flag));
        if (!text.ok()) return runtime_error(std::string("run: ") + flag + " " + text.status().message());
        if (std::string(flag) == "--grammar") {
            if (workbench::Status s = workbench::check_grammar(*text); !s.ok()) return runtime_error("run: " + ctx.args.get(flag) + ": " + s.message());
            req.grammar = *text;
        } else {
            auto schema = workbench::parse_json(*text);
            if (!schema.ok()) return runtime_error("run: " + ctx.args.get(flag) + ": " + schema.status().message());
            auto g = workbench::json_schema_grammar(*schema);
            if (!g.ok()) return runtime_error("run: " + ctx.args.get(flag) + ": " + g.status().message());
            req.grammar = std::move(*g);
        }
    }
    if (int rc = prepare_command(argc, argv, "run", "-p TEXT [options]", flags, ctx); rc >= 0) return rc;

    const bool json = ctx.args.has("--json");
    std::string prompt = ctx.args.get("--prompt");
    if (ctx.args.has("--chat")) prompt = ctx.engine->render_chat({{"user", prompt}}, true);
    workbench::TextCallback stream;
    if (!json) stream = [](std::string_view text) { std::cout << text << std::flush; };
    auto recorder = HistoryRecorder::open_if_asked(ctx.args, *ctx.engine, ctx.config);
    auto result = ctx.engine->generate(prompt, req, stream);
    if (!result.ok()) return runtime_error(result.status().message());
    if (recorder) record_run(*recorder, ctx.args.get("--prompt"), *result, req.sampling.seed);
    if (json) {
        print_json(*result, ctx.engine->model_info(), ctx.engine->last_step_roofline());
        return 0;
    }
    const auto& m = result->metrics;
    std::cout << "\n";
    std::cerr << "\n[" << m.n_prompt_tokens << " prompt tokens, " << m.n_generated << " generated, stop: "
              << workbench::stop_reason_name(result->stop_reason) << "] TTFT " << fmt(m.ttft_ms, "ms") << ", prefill "
              << fmt(m.prefill_tok_s, "tok/s") << ", decode " << fmt(m.decode_tok_s, "tok/s") << ", KV "
              << format_bytes(m.kv_bytes) << " (full attention: " << format_bytes(m.kv_bytes_full) << ")";
    if (m.acceptance_rate)
        std::cerr << ", drafts " << m.n_accepted_tokens << "/" << m.n_draft_tokens << " accepted (" << fmt(*m.acceptance_rate * 100.0, "%") << ")";
    std::cerr << "\n";
    return 0;
}

}  // namespace wbcli
