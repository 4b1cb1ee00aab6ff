// `sweep`: the configurations of a list (workbench/sweep.h measures each the same way, beside
// one baseline) one JSON line a row into -o as each finishes (a rerun skips the rows already
// there; a row that fails is written as failed and the sweep goes on), with --db into the session
// database as one sweep (a rerun into the same -o continues it), and the variants map as an SVG
// (--plot).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "commands.h"
#include "remote/remote_retrieval.h"
#include "history_recorder.h"
#include "retrieval_heatmap.h"
#include "sweep_plot.h"
#include "workbench/measure.h"
#include "workbench/paired_stats.h"
#include "workbench/retrieval.h"
#include "workbench/sweep.h"

namespace wbcli {
namespace {

std::vector<std::string> read_lines(const Args& args, std::string& err) {
    if (!args.has("--file"))
        return args.has("--preset") && args.get("--preset") == "presses" ? workbench::presses_sweep_preset() : workbench::standard_sweep_preset();
    std::ifstream in(args.get("--file"));
    if (!in) {
        err = args.get("--file") + ": cannot read the configuration list";
        return {};
    }
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The rows an earlier run wrote (their "config"), so a rerun skips them.
// The configurations `path` already has rows of for `model` (rows written before rows named
// their model count for any model).
std::set<std::string> rows_done(const std::string& path, const std::string& model) {
    std::set<std::string> done;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        auto row = workbench::parse_json(line);
        if (!row.ok() || !row->is_object() || !row->contains("config") || !(*row)["config"].is_string()) continue;
        if (row->contains("model") && (*row)["model"] != model) continue;
        done.insert((*row)["config"].get<std::string>());
    }
    return done;
}

// Every trial's retrieval outcome of a row, cell by cell; empty when it kept none.
std::vector<uint8_t> retrieval_outcomes(const workbench::Json& row) {
    std::vector<uint8_t> all;
    if (!row.contains("retrieval_cells") || !row["retrieval_cells"].is_array()) return all;
    for (const workbench::Json& c : row["retrieval_cells"]) {
        if (!c.is_object() || !c.contains("outcomes") || !c["outcomes"].is_string()) return {};
        for (char o : c["outcomes"].get<std::string>()) all.push_back(o == '1' ? 1 : 0);
    }
    return all;
}

// The grid a row's retrieval ran: its cells' kind, length, depth and trials. Rows pair prompt by
// prompt only when these agree (the prompts themselves follow from them and the seed).
std::string retrieval_grid_of(const workbench::Json& row) {
    std::string grid;
    if (!row.contains("retrieval_cells") || !row["retrieval_cells"].is_array()) return grid;
    for (const workbench::Json& c : row["retrieval_cells"]) grid += workbench::dump_json(c.value("kind", "")) + workbench::dump_json(c.value("length", 0)) +
                                                                    workbench::dump_json(c.value("depth", workbench::Json(nullptr))) + workbench::dump_json(c.value("trials", 0)) + ";";
    return grid;
}

// Full attention's outcomes from a row of the -o file already measured (a resumed sweep), when
// its retrieval ran `grid` (any grid when empty).
std::vector<uint8_t> full_outcomes_in(const std::string& path, const std::string& model, const std::string& grid = {}) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        auto row = workbench::parse_json(line);
        if (row.ok() && row->is_object() && row->value("config", "") == "full" && row->value("status", "") == "ok" &&
            row->value("model", model) == model && (grid.empty() || retrieval_grid_of(*row) == grid))
            return retrieval_outcomes(*row);
    }
    return {};
}

// " (-0.050 vs full: 2 found only here, 6 only there, McNemar p 0.29)" on the same prompts.
std::string versus_full(const std::vector<uint8_t>& mine, const std::vector<uint8_t>& full) {
    if (mine.empty() || mine.size() != full.size()) return {};
    const workbench::PairedCounts pairs = workbench::paired_counts(mine, full);
    char buf[160];
    std::snprintf(buf, sizeof buf, " (%+.3f vs full: %lld found only here, %lld only there, McNemar p %.2g)",
                  static_cast<double>(pairs.a_only - pairs.b_only) / static_cast<double>(mine.size()), static_cast<long long>(pairs.a_only),
                  static_cast<long long>(pairs.b_only), workbench::mcnemar_exact_p(pairs.a_only, pairs.b_only));
    return buf;
}

// --db: the sweep's record — when the -o file has rows already, the one the run that wrote them
// started (the newest with that file as its source), else a new one.
workbench::RowId sweep_record(HistoryRecorder& recorder, const std::string& out_path, const std::string& name, const std::string& model,
                              const workbench::Json& settings, bool resuming) {
    const std::string source = std::filesystem::absolute(out_path).lexically_normal().string();
    if (auto sweeps = recorder.store().list_sweeps(); resuming && sweeps.ok()) {
        for (const workbench::SweepRecord& s : *sweeps)
            if (s.source == source) return s.id;
    }
    workbench::SweepRecord record;
    record.name = name;
    record.model = model;
    record.source = source;
    record.settings = workbench::dump_json(settings);
    auto id = recorder.store().create_sweep(record);
    if (!id.ok()) {
        recorder.warn(id.status());
        return 0;
    }
    return *id;
}

// --plot-y's choices: the row's key and the map's axis.
struct QualityAxis {
    const char* flag;
    const char* key;
    MapAxis axis;
};
const QualityAxis kQualityAxes[] = {
    {"dppl", "delta_ppl_pct", {"ΔPPL vs full attention (%)", false}},
    {"kl", "kl", {"KL vs full attention", false}},
    {"top1", "top1", {"top-1 agreement with full attention", true}},
    {"retrieval", "retrieval_accuracy", {"retrieval accuracy (every task the sweep ran)", true}},
};

const QualityAxis* quality_axis(const std::string& flag) {
    for (const QualityAxis& a : kQualityAxes)
        if (flag == a.flag) return &a;
    return nullptr;
}

int write_plot(const std::string& out_path, const std::string& plot_path, const QualityAxis& chosen, const std::string& model) {
    std::vector<MapPoint> points;
    std::ifstream in(out_path);
    const std::string key = chosen.key;
    for (std::string line; std::getline(in, line);) {
        auto row = workbench::parse_json(line);
        if (!row.ok() || !row->is_object() || row->value("status", "") != "ok" || !row->contains(key) || !(*row)[key].is_number()) continue;
        MapPoint p;
        p.label = workbench::sweep_row_label(*row);
        p.kv_bytes = (*row)["kv_bytes"].get<double>();
        p.quality = (*row)[key].get<double>();
        if ((*row)["decode_tok_s"].is_number()) p.decode_tok_s = (*row)["decode_tok_s"].get<double>();
        points.push_back(p);
    }
    std::ofstream svg(plot_path);
    svg << variants_map_svg(points, chosen.axis, "Variants map: " + model);
    if (!svg.flush()) return runtime_error(plot_path + ": cannot write the plot");
    std::cerr << "wrote " << plot_path << " (" << points.size() << " configurations)\n";
    return 0;
}

// Every measured row with retrieval cells in `out_path`, as heatmap panels.
int write_heatmap(const std::string& out_path, const std::string& heatmap_path, const std::string& model) {
    std::vector<HeatmapPanel> panels;
    std::ifstream in(out_path);
    for (std::string line; std::getline(in, line);) {
        auto row = workbench::parse_json(line);
        if (!row.ok() || !row->is_object() || row->value("status", "") != "ok" || !row->contains("retrieval_cells")) continue;
        panels.push_back({workbench::sweep_row_label(*row), workbench::retrieval_grid((*row)["retrieval_cells"])});
    }
    std::ofstream svg(heatmap_path);
    svg << retrieval_heatmap_svg(panels, "Retrieval by length and depth: " + model);
    if (!svg.flush()) return runtime_error(heatmap_path + ": cannot write the heatmap");
    std::cerr << "wrote " << heatmap_path << " (" << panels.size() << " configurations)\n";
    return 0;
}

// --remote: one row for a remote server, its retrieval on the local rows' prompts, appended to -o.
int sweep_remote_row(const CommandContext& ctx, const workbench::SweepSettings& s, const std::string& out_path, const std::string& model) {
    wbremote::RemoteEndpoint endpoint;
    endpoint.base_url = ctx.args.get("--remote");
    const char* env_key = std::getenv("OPENAI_API_KEY");
    endpoint.api_key = ctx.args.get("--api-key", env_key ? env_key : "");
    endpoint.read_timeout_s = 600;   // a long prompt's prefill on a slow server
    wbremote::RemoteRowOptions o{ctx.args.get("--remote-model"), ctx.args.get("--remote-kv-type"), ctx.args.get("--remote-attention")};
    if (const std::string key = wbremote::remote_sweep_row_key(endpoint, o); rows_done(out_path, model).count(key)) {
        std::fprintf(stderr, "sweep: %s already has the row '%s'; nothing measured\n", out_path.c_str(), key.c_str());
        return 0;
    }
    const bool tty = isatty(STDERR_FILENO);
    auto progress = [&](int64_t done, int64_t total) {
        if (tty) std::fprintf(stderr, "\r%s: %lld/%lld prompts", endpoint.base_url.c_str(), static_cast<long long>(done), static_cast<long long>(total));
    };
    const workbench::Json row = wbremote::measure_remote_sweep_row(endpoint, o, *ctx.engine, s, progress);
    if (tty) std::fprintf(stderr, "\r%*s\r", 80, "");
    if (row["status"] != "ok") return runtime_error("sweep --remote: " + row["error"].get<std::string>());
    std::ofstream out(out_path, std::ios::app);
    out << workbench::dump_json(row) << "\n" << std::flush;
    if (!out) return runtime_error(out_path + ": cannot write (disk full?); the rows before this one are kept");
    const std::vector<uint8_t> paired_full = full_outcomes_in(out_path, model, retrieval_grid_of(row));
    // Beside the predicted bytes, the peak the server's /metrics showed while it answered.
    const std::string measured = row.contains("kv_bytes_measured_peak")
                                     ? ", its /metrics peak " + format_bytes(row["kv_bytes_measured_peak"].get<uint64_t>()) +
                                           (row.contains("kv_tokens_measured_peak")
                                                ? " (" + std::to_string(row["kv_tokens_measured_peak"].get<int64_t>()) + " tokens)"
                                                : "")
                                     : "";
    std::printf("%-50s  KV %-10s (%s%s)  retrieval %s%s\n", workbench::sweep_row_label(row).c_str(),
                format_bytes(row["kv_bytes"].get<uint64_t>()).c_str(), row["kv_source"].get<std::string>().c_str(), measured.c_str(),
                std::to_string(row["retrieval_accuracy"].get<double>()).substr(0, 5).c_str(),
                versus_full(retrieval_outcomes(row), paired_full).c_str());
    if (paired_full.empty() && !full_outcomes_in(out_path, model).empty())
        std::fprintf(stderr, "sweep --remote: the full attention row in %s ran another retrieval grid (its --ctx, --trials or --tasks): "
                             "the rows do not pair\n", out_path.c_str());
    return 0;
}

}  // namespace

int cmd_sweep(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--preset", "", true, "standard|presses  the built-in presets and a spread of each variant's main parameter (the default), or "
                              "the eviction presses at keep 0.25 and 0.5 beside full attention"},
        {"--file", "-f", true, "CONFIGS  one configuration a line: an attention spec, then optionally --kv-type T --weights W; # comments"},
        {"--windows", "", true, "N  --ctx-long windows of the text scored per row (default 1)"},
        {"--retrieval", "", false, "also long-context retrieval per row (lengths up to --ctx, 5 depths, --trials each)"},
        {"--tasks", "", true, "LIST  the retrieval tasks, as eval --retrieval names them, or all (default passkey,multi_key)"},
        {"--trials", "", true, "N  retrieval trials per cell and kind (default 2; eval --retrieval's is 4)"},
        {"--follow-up", "", false, "retrieval scores a second question asked after each answer (multi_key only; --tasks multi_key)"},
        {"--question-agnostic", "", false, "retrieval prompts' context read before their question (eviction presses compress without it)"},
        {"--text", "", true, "PATH  the scored text (default resources/eval/alice_wonderland.txt)"},
        {"--out", "-o", true, "PATH  the rows as JSON lines (default sweep.jsonl); a rerun skips rows already there"},
        {"--plot", "", true, "PATH  the variants map as SVG: KV bytes (log) against --plot-y, colour = decode tok/s"},
        {"--plot-y", "", true, "dppl|kl|top1|retrieval  the map's quality axis (default dppl)"},
        {"--heatmap", "", true, "PATH  retrieval accuracy by length and depth as SVG, a panel per row (with --retrieval)"},
        {"--remote", "", true, "URL  one row for a remote OpenAI-compatible server instead: the retrieval prompts of the local rows (this "
                              "GGUF's tokens, the model the server runs) over its /v1/completions, appended to -o"},
        {"--remote-model", "", true, "NAME  the remote model to ask for (default: the first of its /v1/models)"},
        {"--remote-kv-type", "", true, "T  the remote's KV cache type as it was started (llama-server -ctk/-ctv q8_0, vLLM fp8); "
                                      "needed where the server does not report it (ours does)"},
        {"--remote-attention", "", true, "SPEC  the remote's attention, as our specs write it (default: as it reports, else full)"},
        {"--api-key", "", true, "KEY  sent to --remote as 'Authorization: Bearer KEY' (default: $OPENAI_API_KEY)"},
        db_flag(),
    };
    const std::string synopsis = "[--preset standard|presses | -f CONFIGS] [--ctx 4096] [--windows 1] [--retrieval] [-o sweep.jsonl] [--db PATH] "
                                 "[--plot map.svg] | --remote URL [--remote-kv-type T] [-o sweep.jsonl]";
    add_engine_flags(flags);
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "sweep", synopsis, flags, ctx, false); rc >= 0) return rc;
    std::string err;
    workbench::SweepSettings s;
    s.ctx = ctx.config.n_ctx > 0 ? ctx.config.n_ctx : 4096;
    s.windows = ctx.args.get_int("--windows", 1, 1, 1 << 16, err);
    s.retrieval = ctx.args.has("--retrieval");
    s.retrieval_options.trials = ctx.args.get_int("--trials", s.retrieval_options.trials, 1, 1000, err);
    s.retrieval_options.question_agnostic = ctx.args.has("--question-agnostic");
    s.retrieval_options.follow_up = ctx.args.has("--follow-up");
    if (ctx.args.has("--tasks")) {
        auto kinds = workbench::parse_retrieval_kinds(ctx.args.get("--tasks"));
        if (kinds.ok()) s.retrieval_options.kinds = *kinds;
        else err = "--tasks: " + kinds.status().message();
    }
    if (ctx.args.has("--preset") && ctx.args.get("--preset") != "standard" && ctx.args.get("--preset") != "presses")
        err = "--preset '" + ctx.args.get("--preset") + "': expected standard or presses";
    if (ctx.args.has("--preset") && ctx.args.has("--file")) err = "--preset and --file: give one list";
    const QualityAxis* plot_y = quality_axis(ctx.args.get("--plot-y", "dppl"));
    if (!plot_y) err = "--plot-y: dppl, kl, top1 or retrieval";
    const bool remote = ctx.args.has("--remote");
    if (remote && (ctx.args.has("--preset") || ctx.args.has("--file")))
        err = "--remote measures the server's row alone (run the local rows as a sweep of their own into the same -o)";
    if (remote && (s.retrieval_options.question_agnostic || s.retrieval_options.follow_up))
        err = "--remote reads each prompt whole: --question-agnostic and --follow-up are for local presses";
    if (!remote && (ctx.args.has("--remote-model") || ctx.args.has("--remote-kv-type") || ctx.args.has("--remote-attention") ||
                    ctx.args.has("--api-key")))
        err = "--remote-model, --remote-kv-type, --remote-attention and --api-key describe a --remote server";
    if (remote && (ctx.args.has("--db") || ctx.args.has("--windows")))
        err = "--remote measures retrieval alone, into -o: --db and --windows are for local rows";
    if (remote) s.retrieval = true;
    if (!err.empty()) return usage_error("sweep: " + err);
    const std::vector<std::string> lines = read_lines(ctx.args, err);
    if (!err.empty()) return runtime_error(err);
    auto parsed = workbench::parse_sweep_configs(lines);
    if (!parsed.ok()) return runtime_error((ctx.args.has("--file") ? ctx.args.get("--file") + ": " : std::string()) + parsed.status().message());
    const std::vector<workbench::SweepConfig>& configs = *parsed;
    const std::string out_path = ctx.args.get("--out", "sweep.jsonl");
    const std::string text_path = ctx.args.get("--text", WB_EVAL_TEXT_PATH);
    std::ifstream text_in(text_path, std::ios::binary);
    if (!text_in) return runtime_error(text_path + ": cannot read the text to score");
    std::stringstream text;
    text << text_in.rdbuf();
    // The baseline, loaded once: full attention, f16 KV, the file's weights.
    // --remote: the local model only builds the prompts, with room for the longest and its answer (as a row's engine).
    auto adjust = [&](workbench::EngineConfig& c) {
        c = remote ? workbench::sweep_engine_config({"full", "full", "f16", ""}, c, s) : workbench::sweep_baseline_config(c, s);
    };
    if (int rc = prepare_command(argc, argv, "sweep", synopsis, flags, ctx, true, adjust); rc >= 0) return rc;
    const workbench::EngineConfig base = ctx.config;   // the model and threads; each row sets the rest
    workbench::Engine& baseline = *ctx.engine;
    if (remote) {
        const std::string model = std::filesystem::path(ctx.config.model_path).filename().string();
        if (int rc = sweep_remote_row(ctx, s, out_path, model); rc != 0) return rc;
        if (ctx.args.has("--plot"))
            if (int rc = write_plot(out_path, ctx.args.get("--plot"), *plot_y, model); rc != 0) return rc;
        return ctx.args.has("--heatmap") ? write_heatmap(out_path, ctx.args.get("--heatmap"), model) : 0;
    }
    const std::vector<workbench::TokenId> tokens = baseline.tokenize(text.str(), true, false);
    if (tokens.size() < static_cast<size_t>(s.ctx) + 1)
        return runtime_error(text_path + " has " + std::to_string(tokens.size()) + " tokens, fewer than one window of --ctx " + std::to_string(s.ctx));
    if (auto ref = workbench::measure_decode_reference(baseline, tokens, s); ref.ok()) {
        s.reference_gb_s = ref->gb_s;
        std::fprintf(stderr, "decode reference: full attention at %d tokens of context, %.1f tok/s × %s a token = %.1f GB/s\n", ref->ctx,
                     ref->decode_tok_s, format_bytes(ref->bytes_per_token).c_str(), ref->gb_s);
    } else {
        std::fprintf(stderr, "decode reference: %s (rows carry no predicted decode time)\n", ref.status().message().c_str());
    }
    const std::string model = std::filesystem::path(ctx.config.model_path).filename().string();
    const std::string text_name = std::filesystem::path(text_path).filename().string();
    const std::set<std::string> done = rows_done(out_path, model);
    std::vector<uint8_t> full_outcomes = full_outcomes_in(out_path, model);
    std::unique_ptr<HistoryRecorder> recorder = HistoryRecorder::open_if_asked(ctx.args, baseline, ctx.config);
    workbench::RowId sweep_id = 0;
    if (recorder) {
        sweep_id = sweep_record(*recorder, out_path, ctx.args.has("--file") ? std::filesystem::path(ctx.args.get("--file")).filename().string()
                                                                             : std::string("standard"), model,
                                workbench::sweep_settings_json(s, configs.size()), !done.empty());
    }
    workbench::QualityBaseline baseline_logits(baseline);   // kept after the first row where they fit
    std::ofstream out(out_path, std::ios::app);
    if (!out) return runtime_error(out_path + ": cannot open for appending");
    const bool tty = isatty(STDERR_FILENO);
    const auto t0 = std::chrono::steady_clock::now();
    int measured = 0, skipped = 0, failed = 0;
    const int total = static_cast<int>(configs.size());
    for (int i = 0; i < total; ++i) {
        const workbench::SweepConfig& c = configs[static_cast<size_t>(i)];
        if (done.count(c.line)) {
            ++skipped;
            continue;
        }
        if (tty) {
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const int left = total - i;
            std::string eta = measured > 0 ? std::to_string(static_cast<int>(elapsed / measured * left / 60.0 + 0.5)) + " min left" : "ETA after the first row";
            const int fill = 30 * i / total;
            std::fprintf(stderr, "\r[%s%s] %d/%d  %s  %-48.48s", std::string(static_cast<size_t>(fill), '#').c_str(),
                         std::string(static_cast<size_t>(30 - fill), '.').c_str(), i, total, eta.c_str(), c.line.c_str());
        }
        workbench::Json row = workbench::measure_sweep_row(c, base, baseline_logits, tokens, s);
        out << workbench::dump_json(row) << "\n" << std::flush;
        if (!out) return runtime_error(out_path + ": cannot write (disk full?); the rows before this one are kept");
        if (recorder && sweep_id != 0)
            if (auto st = workbench::record_sweep_row(recorder->store(), sweep_id, recorder->configuration_id(),
                                                      workbench::sweep_engine_config(c, base, s), row, text_name);
                !st.ok())
                recorder->warn(st);
        ++measured;
        if (row["status"] != "ok") ++failed;
        const std::vector<uint8_t> outcomes = retrieval_outcomes(row);
        if (c.line == "full") full_outcomes = outcomes;
        if (tty) std::fprintf(stderr, "\r%*s\r", 110, "");
        if (row["status"] != "ok") {
            std::printf("%2d/%d  %-50s  failed: %s\n", i + 1, total, c.line.c_str(), row["error"].get<std::string>().c_str());
        } else {
            const std::string vs_predicted = row.contains("decode_ms_predicted") && row["decode_ms"].is_number()
                                                 ? " (" + std::to_string(row["decode_ms"].get<double>() / row["decode_ms_predicted"].get<double>()).substr(0, 4) + "× predicted)"
                                                 : std::string();
            std::printf("%2d/%d  %-50s  KV %-10s  dPPL %+7.2f%%  KL %.4f  top-1 %5.1f%%  decode %6.1f tok/s%s%s\n", i + 1, total, c.line.c_str(),
                        format_bytes(row["kv_bytes"].get<uint64_t>()).c_str(), row["delta_ppl_pct"].get<double>(), row["kl"].get<double>(),
                        100 * row["top1"].get<double>(), row["decode_tok_s"].is_number() ? row["decode_tok_s"].get<double>() : 0.0, vs_predicted.c_str(),
                        row.contains("retrieval_accuracy") ? ("  retrieval " + std::to_string(row["retrieval_accuracy"].get<double>()).substr(0, 5) +
                                                              (c.line == "full" ? std::string() : versus_full(outcomes, full_outcomes))).c_str() : "");
        }
        std::fflush(stdout);
    }
    if (recorder) recorder->finish();
    std::fprintf(stderr, "sweep: %d measured (%d failed), %d already in %s\n", measured, failed, skipped, out_path.c_str());
    if (!full_outcomes.empty())
        std::fprintf(stderr, "retrieval: %zu paired prompts a row, the same for every row; McNemar's test at 5 %% resolves differences of %.3f "
                             "and more (bench/sweep_table.py pairs each row with full attention)\n",
                     full_outcomes.size(), workbench::smallest_resolvable_difference(static_cast<int64_t>(full_outcomes.size())));
    if (ctx.args.has("--plot"))
        if (int rc = write_plot(out_path, ctx.args.get("--plot"), *plot_y, model); rc != 0) return rc;
    if (ctx.args.has("--heatmap"))
        if (int rc = write_heatmap(out_path, ctx.args.get("--heatmap"), model); rc != 0) return rc;
    return failed > 0 ? 1 : 0;
}

}  // namespace wbcli
