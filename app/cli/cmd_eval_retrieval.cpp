// `eval --retrieval`: the long-context tasks (workbench/retrieval.h; passkey and multi-key unless
// --tasks names others) over a grid of lengths × depths for the configured variant, KV types and
// weights, and for full attention with f16 KV in the same run, so the output says what the
// variant forgot and whether the model itself retrieves at those lengths.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "history_recorder.h"
#include "retrieval_heatmap.h"
#include "workbench/paired_stats.h"
#include "workbench/retrieval.h"

namespace wbcli {
namespace {

constexpr double kReliable = 0.9;   // the baseline "retrieves reliably" at a length from this accuracy

// "0,25,50" → numbers in [lo, hi]; the error names the flag.
std::vector<int32_t> parse_list(const std::string& flag, const std::string& text, int32_t lo, int32_t hi, std::string& err) {
    std::vector<int32_t> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        char* end = nullptr;
        const long v = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < lo || v > hi) {
            err = flag + ": '" + item + "' is not a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
            return {};
        }
        out.push_back(static_cast<int32_t>(v));
    }
    if (out.empty()) err = flag + ": give a comma-separated list";
    return out;
}


// The longest length up to which the baseline's accuracy on `kind` reaches kReliable at every
// length; 0: none.
int32_t reliable_up_to(const workbench::RetrievalReport& base, workbench::RetrievalKind kind, const std::vector<int32_t>& lengths) {
    int32_t up_to = 0;
    for (int32_t length : lengths) {
        int n = 0, ok = 0;
        for (const auto& c : base.cells)
            if (c.kind == kind && c.length == length) n += c.n_trials, ok += c.n_correct;
        if (n == 0 || static_cast<double>(ok) / n < kReliable) break;
        up_to = length;
    }
    return up_to;
}

}  // namespace

int eval_retrieval(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--retrieval", "", false, "long-context retrieval tasks instead of perplexity"},
        {"--tasks", "", true, "LIST  passkey, multi_key, multi_value, multi_query, variable_tracking, common_words, "
                              "frequent_words, or all (default passkey,multi_key)"},
        {"--lengths", "", true, "N,N,..  prompt lengths in tokens (default 512,1024,2048,4096, those within --ctx)"},
        {"--depths", "", true, "P,P,..  where the fact sits, % of the filler (default 0,25,50,75,100)"},
        {"--trials", "", true, "N  trials per cell and kind, each with its own numbers (default 4)"},
        {"--seed", "", true, "S  the trials' numbers and keys (default 1234): runs with one seed see the same prompts"},
        {"--heatmap", "", true, "PATH  accuracy by length and depth as SVG, this configuration beside full attention"},
        {"--follow-up", "", false, "after each answer ask a second question on the same context and score that one "
                                   "(multi_key: another key's value; SCBench's multi-turn follow-up)"},
        {"--question-agnostic", "", false, "read each prompt's context as a request before its question: an eviction press "
                                           "compresses without knowing the question (default: the whole prompt, question-aware)"},
        {"--json", "", false, "print one JSON object with the figures"},
        db_flag(),
    };
    const std::string synopsis =
        "--retrieval [--tasks LIST|all] [--ctx N] [--lengths 512,1024,...] [--depths 0,25,50,75,100] [--attention SPEC] [--json]";
    add_engine_flags(flags);
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "eval", synopsis, flags, ctx, false); rc >= 0) return rc;
    std::string err;
    workbench::RetrievalOptions options;
    options.trials = ctx.args.get_int("--trials", options.trials, 1, 1000, err);
    options.seed = ctx.args.get_u64("--seed", options.seed, err);
    options.question_agnostic = ctx.args.has("--question-agnostic");
    options.follow_up = ctx.args.has("--follow-up");
    if (ctx.args.has("--depths") && err.empty()) options.depths_pct = parse_list("--depths", ctx.args.get("--depths"), 0, 100, err);
    if (ctx.args.has("--tasks") && err.empty()) {
        auto kinds = workbench::parse_retrieval_kinds(ctx.args.get("--tasks"));
        if (kinds.ok()) options.kinds = *kinds;
        else err = "--tasks: " + kinds.status().message();
    }
    const int32_t max_length = ctx.config.n_ctx > 0 ? ctx.config.n_ctx : 4096;
    if (ctx.args.has("--lengths") && err.empty()) {
        options.lengths = parse_list("--lengths", ctx.args.get("--lengths"), 64, 1 << 20, err);
        if (err.empty() && *std::max_element(options.lengths.begin(), options.lengths.end()) > max_length)
            err = "--lengths: a length is past --ctx " + std::to_string(max_length);
    } else {
        std::erase_if(options.lengths, [&](int32_t l) { return l > max_length; });
        if (options.lengths.empty()) options.lengths = {max_length};
    }
    if (!err.empty()) return usage_error("eval: " + err);
    std::sort(options.lengths.begin(), options.lengths.end());
    const int32_t longest = options.lengths.back();
    workbench::EngineConfig base_config;
    auto adjust = [&](workbench::EngineConfig& c) {
        c.n_ctx = longest + workbench::retrieval_tokens_after_prompt(options) + 8;   // the prompt and its answer tokens
        base_config.model_path = c.model_path;
        base_config.n_threads = c.n_threads;
        base_config.n_ctx = c.n_ctx;
        base_config.backend = c.backend;   // the baseline runs where the configuration runs
    };
    if (int rc = prepare_command(argc, argv, "eval", synopsis, flags, ctx, true, adjust); rc >= 0) return rc;
    workbench::Engine& engine = *ctx.engine;
    const auto& info = engine.model_info();
    const bool json = ctx.args.has("--json");
    const auto t0 = std::chrono::steady_clock::now();
    auto progress = [&](const char* which) {
        return [&, which](int64_t done, int64_t total) {
            if (json) return;
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::cerr << "\r" << which << " [" << done << "/" << total << "] " << static_cast<int>(s) << " s" << std::flush;
        };
    };
    auto report = workbench::evaluate_retrieval(engine, options, progress("retrieval"));
    if (!json) std::cerr << "\n";
    if (!report.ok()) return runtime_error(report.status().message());
    const bool same_as_base = info.attention == "full" && info.kv_types == "f16" && !ctx.args.has("--weights");
    workbench::RetrievalReport base_report = *report;
    if (!same_as_base) {
        auto base = workbench::Engine::load(base_config);
        if (!base.ok()) return runtime_error("baseline: " + base.status().message());
        auto b = workbench::evaluate_retrieval(**base, options, progress("baseline (full attention, f16 KV)"));
        if (!json) std::cerr << "\n";
        if (!b.ok()) return runtime_error("baseline: " + b.status().message());
        base_report = std::move(b).value();
    }
    // Where the model itself retrieves: a variant's misses past that are partly the model's.
    workbench::Json reliable_json = workbench::Json::object();
    std::string reliable_text;
    for (workbench::RetrievalKind kind : options.kinds) {
        const int32_t up_to = reliable_up_to(base_report, kind, options.lengths);
        reliable_json[workbench::retrieval_kind_name(kind)] = up_to > 0 ? workbench::Json(up_to) : workbench::Json(nullptr);
        reliable_text += std::string(reliable_text.empty() ? "" : "; ") + workbench::retrieval_kind_name(kind) +
                         (up_to > 0 ? " up to " + std::to_string(up_to) + " tokens" : " at no length tested");
    }

    std::string kind_names;
    for (workbench::RetrievalKind kind : options.kinds) kind_names += (kind_names.empty() ? "" : ", ") + std::string(workbench::retrieval_kind_name(kind));
    workbench::Json j = {{"attention", info.attention}, {"kv_type", info.kv_types}, {"weights", info.weight_type}};
    j.update(workbench::retrieval_report_json(*report));
    j["trials"] = options.trials;
    j["seed"] = options.seed;
    j["question"] = options.question_agnostic ? "agnostic" : "aware";
    j["follow_up"] = options.follow_up;
    j["tasks"] = workbench::Json::array();
    for (workbench::RetrievalKind kind : options.kinds) j["tasks"].push_back(workbench::retrieval_kind_name(kind));
    j["baseline"] = workbench::retrieval_report_json(base_report);
    // The same seeded prompts on both sides: the difference is paired prompt by prompt.
    const std::vector<uint8_t> mine = report->outcomes(), theirs = base_report.outcomes();
    const workbench::PairedCounts pairs = workbench::paired_counts(mine, theirs);
    const workbench::Interval diff = workbench::paired_bootstrap_difference(mine, theirs, 2000, options.seed);
    const workbench::Interval wilson = workbench::wilson_interval(pairs.both + pairs.a_only, static_cast<int64_t>(mine.size()));
    const double p_value = workbench::mcnemar_exact_p(pairs.a_only, pairs.b_only);
    j["vs_baseline"] = {{"difference", workbench::json_rounded(report->accuracy - base_report.accuracy, 4)},
                        {"interval", workbench::Json::array({workbench::json_rounded(diff.low, 4), workbench::json_rounded(diff.high, 4)})},
                        {"only_this", pairs.a_only},
                        {"only_baseline", pairs.b_only},
                        {"mcnemar_p", workbench::json_rounded(p_value, 4)},
                        {"smallest_resolvable", workbench::json_rounded(workbench::smallest_resolvable_difference(static_cast<int64_t>(mine.size())), 4)}};
    j["baseline_reliable_up_to"] = reliable_json;
    // Written after the figures are printed: a path that cannot be written loses nothing.
    auto write_heatmap = [&]() -> int {
        if (!ctx.args.has("--heatmap")) return 0;
        const std::string path = ctx.args.get("--heatmap");
        const std::string label = info.attention + " · KV " + info.kv_types;
        std::vector<HeatmapPanel> panels = {{label, workbench::retrieval_grid(j["cells"])}};
        if (!same_as_base) panels.push_back({"full · KV f16 (baseline)", workbench::retrieval_grid(j["baseline"]["cells"])});
        std::ofstream svg(path);
        svg << retrieval_heatmap_svg(panels, "Retrieval (" + kind_names + "): " + info.name);
        if (!svg.flush()) return runtime_error(path + ": cannot write the heatmap (the figures above are complete)");
        if (!json) std::cerr << "wrote " << path << "\n";
        return 0;
    };
    if (auto recorder = HistoryRecorder::open_if_asked(ctx.args, engine, ctx.config)) {
        workbench::EvaluationRecord e;
        e.configuration_id = recorder->configuration_id();
        e.text_name = "retrieval (" + kind_names + ")";
        e.n_tokens = longest;
        e.retrieval_accuracy = report->accuracy;
        e.json = workbench::dump_json(j);
        if (auto id = recorder->store().save_evaluation(e); !id.ok()) recorder->warn(id.status());
        recorder->finish();
    }
    if (json) {
        print_json_line(j);
        return write_heatmap();
    }
    std::printf("%s  kv %s  weights %s  (%s; %d trials per cell, seed %llu)\n", info.attention.c_str(), info.kv_types.c_str(),
                info.weight_type.c_str(), kind_names.c_str(), options.trials, static_cast<unsigned long long>(options.seed));
    // accuracy where `keep` holds over a report's cells, as "0.50"
    auto accuracy = [](const workbench::RetrievalReport& r, auto keep) {
        int n = 0, ok = 0;
        for (const auto& c : r.cells)
            if (keep(c)) n += c.n_trials, ok += c.n_correct;
        return n ? static_cast<double>(ok) / n : 0.0;
    };
    std::printf("accuracy by task and length: this configuration / full attention with f16 KV\n%-18s", "task");
    for (int32_t length : options.lengths) std::printf("  %9d", length);
    std::printf("  %9s\n", "score");
    for (workbench::RetrievalKind kind : options.kinds) {
        std::printf("%-18s", workbench::retrieval_kind_name(kind));
        for (int32_t length : options.lengths) {
            auto here = [&](const workbench::RetrievalCell& c) { return c.kind == kind && c.length == length; };
            std::printf("  %4.2f/%4.2f", accuracy(*report, here), accuracy(base_report, here));
        }
        std::printf("  %4.2f/%4.2f\n", report->kind_score(kind), base_report.kind_score(kind));
    }
    std::printf("accuracy by length and depth, tasks with a depth: this configuration / full attention with f16 KV\n%-8s", "length");
    for (int32_t d : options.depths_pct) std::printf("  %9d%%", d);
    std::printf("\n");
    for (int32_t length : options.lengths) {
        std::printf("%-8d", length);
        for (int32_t d : options.depths_pct) {
            auto here = [&](const workbench::RetrievalCell& c) { return c.length == length && c.depth_pct == d; };
            std::printf("  %4.2f/%4.2f", accuracy(*report, here), accuracy(base_report, here));
        }
        std::printf("\n");
    }
    std::printf("retrieval_accuracy %.3f (95 %% interval %.3f-%.3f, n %zu; score %.3f as RULER counts partial answers); "
                "full attention %.3f (score %.3f)\n",
                report->accuracy, wilson.low, wilson.high, mine.size(), report->score, base_report.accuracy, base_report.score);
    std::printf("against full attention on the same prompts: %+.3f (paired bootstrap 95 %% %+.3f to %+.3f); %lld found only here, "
                "%lld only there, McNemar p = %.3g; %zu prompts resolve differences of %.3f at best\n",
                report->accuracy - base_report.accuracy, diff.low, diff.high, static_cast<long long>(pairs.a_only),
                static_cast<long long>(pairs.b_only), p_value, mine.size(),
                workbench::smallest_resolvable_difference(static_cast<int64_t>(mine.size())));
    std::printf("the model retrieves reliably (>= %.0f %% at full attention): %s. Where it does not, its own misses count "
                "against every variant: read a variant's figures against the baseline's.\n",
                kReliable * 100, reliable_text.c_str());
    return write_heatmap();
}

}  // namespace wbcli
