// Flag handling and model loading shared by every subcommand.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "commands.h"

namespace wbcli {

void print_json_line(const workbench::Json& value) { std::cout << workbench::dump_json(value) << "\n"; }

workbench::Json batch_metrics_json(const workbench::BatchMetrics& m, int n_failed) {
    using workbench::json_rounded;
    auto stats = [](const workbench::LatencyStats& s) -> workbench::Json {
        return {{"mean", json_rounded(s.mean)}, {"p50", json_rounded(s.p50)}, {"p90", json_rounded(s.p90)}, {"p99", json_rounded(s.p99)}, {"n", s.n}};
    };
    return {{"completed", m.n_completed},
            {"failed", n_failed},
            {"duration_s", json_rounded(m.duration_ms / 1000.0)},
            {"total_input_tokens", m.n_prompt_tokens},
            {"total_output_tokens", m.n_output_tokens},
            {"request_throughput", json_rounded(m.request_throughput)},
            {"output_throughput", json_rounded(m.output_tok_s)},
            {"total_token_throughput", json_rounded(m.total_tok_s)},
            {"ttft_ms", stats(m.ttft_ms)},
            {"tpot_ms", stats(m.tpot_ms)},
            {"itl_ms", stats(m.itl_ms)},
            {"e2e_ms", stats(m.e2e_ms)}};
}

int usage_error(const std::string& message) {
    std::cerr << "workbench-cli: " << message << "\n";
    return 2;
}

int runtime_error(const std::string& message) {
    std::cerr << "workbench-cli: error: " << message << "\n";
    return 1;
}

workbench::Result<std::string> read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return workbench::error(workbench::StatusCode::not_found, path + ": cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string format_bytes(uint64_t bytes) {
    char buf[64];
    if (bytes >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
    else if (bytes >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1ull << 20));
    else if (bytes >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
    else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    return buf;
}

std::string resolve_model_path(const Args& args, int& rc) {
    std::string path = args.get("--model", workbench::find_default_model());
    rc = path.empty() ? runtime_error("no model found. " + workbench::default_model_hint()) : -1;
    return path;
}

int prepare_command(int argc, char** argv, const std::string& name, const std::string& synopsis,
                    std::vector<FlagSpec> own_flags, CommandContext& ctx, bool load_model,
                    const std::function<void(workbench::EngineConfig&)>& adjust) {
    std::vector<FlagSpec> specs = common_flags();
    specs.insert(specs.end(), own_flags.begin(), own_flags.end());
    if (std::string err = ctx.args.parse(argc, argv, 2, specs); !err.empty()) return usage_error(name + ": " + err);
    if (ctx.args.has("--help")) {
        std::cout << usage_text(name, synopsis, specs);
        return 0;
    }
    std::string err;
    workbench::EngineConfig config;
    if (ctx.args.has("--config")) {
        const std::string path = ctx.args.get("--config");
        std::ifstream in(path);
        if (!in) return runtime_error(path + ": cannot read the configuration file");
        std::stringstream text;
        text << in.rdbuf();
        auto parsed = workbench::engine_config_from_json(text.str());
        if (!parsed.ok()) return runtime_error(path + ": " + parsed.status().message());
        config = *parsed;
        if (!config.model_path.empty() && !ctx.args.has("--model")) ctx.args.set("--model", config.model_path);
    }
    config.n_threads = ctx.args.get_int("--threads", config.n_threads, 1, 1024, err);
    config.n_ctx = ctx.args.get_int("--ctx", config.n_ctx, 16, 1 << 20, err);
    if (ctx.args.has("--kv-budget"))
        config.kv_budget_bytes = static_cast<uint64_t>(ctx.args.get_int("--kv-budget", 0, 1, 1 << 20, err)) << 20;
    if (ctx.args.has("--weights") && ctx.args.get("--weights") != "as-is") config.weight_type = ctx.args.get("--weights");
    if (ctx.args.has("--attention")) config.attention = ctx.args.get("--attention");
    if (ctx.args.has("--kv-type")) config.kv_types = ctx.args.get("--kv-type");
    if (ctx.args.has("--draft")) config.draft_model_path = ctx.args.get("--draft");
    if (ctx.args.has("--backend")) config.backend = ctx.args.get("--backend");
    if (ctx.args.has("--mla-cache")) config.mla_cache = ctx.args.get("--mla-cache");
    if (!err.empty()) return usage_error(name + ": " + err);
    ctx.config = config;   // without the model path: a command that loads later resolves it
    if (!load_model) return -1;
    int rc;
    config.model_path = resolve_model_path(ctx.args, rc);
    if (rc >= 0) return rc;
    if (adjust) adjust(config);
    // Long loads (weight conversion, latent factors) show a bar on a terminal's stderr.
    bool drew = false;
    if (isatty(STDERR_FILENO)) config.on_load_progress = [&](const std::string& step, float fraction) {
        const int pct = static_cast<int>(fraction * 100.0f + 0.5f);
        std::string bar(static_cast<size_t>(pct / 5), '#');
        bar.resize(20, '.');
        std::fprintf(stderr, "\r%s [%s] %3d%%", step.c_str(), bar.c_str(), pct);
        drew = true;
    };
    ctx.config = config;
    ctx.config.on_load_progress = nullptr;
    auto engine = workbench::Engine::load(config);
    if (drew) std::fprintf(stderr, "\n");
    if (!engine.ok()) return runtime_error(engine.status().message());
    ctx.engine = std::move(engine).value();
    if (!ctx.engine->model_info().chat_template_warning.empty())
        std::cerr << "workbench-cli: warning: " << ctx.engine->model_info().chat_template_warning << "\n";
    return -1;
}

}  // namespace wbcli

namespace wbcli {

std::vector<FlagSpec> sampling_flags() {
    return {
        {"--temp", "", true, "T  temperature (default 0.7; 0 = greedy)"},
        {"--seed", "", true, "S  random seed (default 0)"},
        {"--top-k", "", true, "K  keep the K most likely tokens (default 40; 0 = off)"},
        {"--top-p", "", true, "P  nucleus sampling (default 0.95; 1 = off)"},
        {"--min-p", "", true, "P  drop tokens below P x the top probability (default 0.05; 0 = off)"},
        {"--repeat-penalty", "", true, "R  repetition penalty (default 1 = off)"},
        {"--frequency-penalty", "", true, "F  (default 0)"},
        {"--presence-penalty", "", true, "F  (default 0)"},
    };
}

std::vector<FlagSpec> speculation_flags() {
    return {
        {"--draft-lookup", "", false, "speculative decoding with prompt lookup: drafts copied from where the last n-gram occurred in the "
                                      "prompt or reply (pays when the reply quotes or edits given text)"},
        {"--draft-ngram", "", true, "N  longest n-gram prompt lookup matches (default 3; shorter ones down to 2 are tried after it)"},
        {"--draft", "", true, "MODEL  speculative decoding with a draft model of the same vocabulary (a smaller one of the family)"},
        {"--draft-max", "", true, "N  most tokens drafted per step (default 8, 1..64); the length adapts to what is accepted. Output is "
                                  "the model's own: token for token when greedy, the same distribution when sampling. Variants that "
                                  "cannot roll back rejected drafts exactly (sliding, compressed, heavy, merged cross_layer, Gemma 3's "
                                  "local layers) refuse it"},
    };
}

workbench::SpeculationParams read_speculation(const Args& args, std::string& err) {
    workbench::SpeculationParams s;
    if (args.has("--draft") && args.has("--draft-lookup")) err = "--draft and --draft-lookup are two kinds of drafting: choose one";
    if (args.has("--draft")) s.kind = workbench::DraftKind::model;
    else if (args.has("--draft-lookup")) s.kind = workbench::DraftKind::lookup;
    s.draft_max = args.get_int("--draft-max", s.draft_max, 1, 64, err);
    s.ngram = args.get_int("--draft-ngram", s.ngram, 1, 16, err);
    if (s.kind == workbench::DraftKind::off && err.empty() && (args.has("--draft-max") || args.has("--draft-ngram")))
        err = "--draft-max and --draft-ngram need --draft-lookup or --draft MODEL";
    return s;
}

workbench::SamplingParams read_sampling(const Args& args, std::string& err) {
    workbench::SamplingParams p;
    p.temperature = static_cast<float>(args.get_double("--temp", p.temperature, 0, 100, err));
    p.seed = args.get_u64("--seed", p.seed, err);
    p.top_k = args.get_int("--top-k", p.top_k, 0, 1 << 24, err);
    p.top_p = static_cast<float>(args.get_double("--top-p", p.top_p, 0, 1, err));
    p.min_p = static_cast<float>(args.get_double("--min-p", p.min_p, 0, 1, err));
    p.repeat_penalty = static_cast<float>(args.get_double("--repeat-penalty", p.repeat_penalty, 0.01, 100, err));
    p.frequency_penalty = static_cast<float>(args.get_double("--frequency-penalty", p.frequency_penalty, -100, 100, err));
    p.presence_penalty = static_cast<float>(args.get_double("--presence-penalty", p.presence_penalty, -100, 100, err));
    return p;
}

}  // namespace wbcli
