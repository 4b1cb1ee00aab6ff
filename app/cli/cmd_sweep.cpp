// `sweep`: every configuration of a list measured the same way on one model — KV bytes held and
// read, prefill and decode speed at the context, perplexity with KL and top-1 against full
// attention with f16 KV (loaded once, beside), and with --retrieval passkey + multi-key accuracy —
// one JSON line a row into -o as each finishes (a rerun skips the rows already there; a row that
// fails is written as failed and the sweep goes on), optionally into the session database, and
// the variants map as an SVG (--plot).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "commands.h"
#include "history_recorder.h"
#include "sweep_plot.h"
#include "workbench/measure.h"
#include "workbench/retrieval.h"

namespace wbcli {
namespace {

// The built-in presets and a spread of each variant's main parameter.
const char* const kStandardPreset[] = {
    "full",
    "full --kv-type q8_0",
    "full --kv-type q4_0",
    "full --kv-type k=q8_0,v=q4_0",
    "full --weights q8_0",
    "sliding:window=64,sinks=4",
    "sliding:window=256,sinks=4",
    "sliding:window=1020,sinks=4",
    "sliding:window=1020,sinks=0",
    "sliding:window=2048,sinks=4",
    "topk:k=256,recent=64",
    "topk:k=512,recent=64",
    "topk:k=1024,recent=64",
    "compressed:block=2,recent=256,sinks=4",   // sinks: without them pooling loses the attention sink
    "compressed:block=4,recent=256,sinks=4",
    "compressed:block=8,recent=512,sinks=4",
    "heavy:block=16,k=32,recent=256,sinks=4",
    "heavy:block=8,k=64,recent=256,sinks=4",
    "cross_layer:group=2",
    "cross_layer:group=2,merge=mean",
    "cross_layer:group=2,layers=16-29",
    "latent:rank=256",
    "latent:rank=192",
    "latent:rank=128",
    "sliding:window=512,sinks=4,layers=0-14;topk:k=512",
};

struct SweepConfig {
    std::string line;   // as written: the row's key for resuming
    std::string attention, kv_types = "f16", weights;
};

// "SPEC [--kv-type T] [--weights W]"; the error names the line and the word.
std::optional<SweepConfig> parse_line(const std::string& line, int number, std::string& err) {
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    SweepConfig c;
    c.line = line.substr(line.find_first_not_of(" \t"));
    c.attention = words.front();
    for (size_t i = 1; i < words.size(); ++i) {
        const bool known = words[i] == "--kv-type" || words[i] == "--weights";
        if (!known || i + 1 >= words.size()) {
            err = "configuration line " + std::to_string(number) + ": '" + words[i] + "' " +
                  (known ? "needs a value" : "is not --kv-type T or --weights W");
            return std::nullopt;
        }
        (words[i] == "--kv-type" ? c.kv_types : c.weights) = words[i + 1];
        ++i;
    }
    return c;
}

std::vector<SweepConfig> read_configs(const Args& args, std::string& err) {
    std::vector<std::string> lines;
    if (args.has("--file")) {
        std::ifstream in(args.get("--file"));
        if (!in) {
            err = args.get("--file") + ": cannot read the configuration list";
            return {};
        }
        for (std::string line; std::getline(in, line);) lines.push_back(line);
    } else {
        lines.assign(std::begin(kStandardPreset), std::end(kStandardPreset));
    }
    std::vector<SweepConfig> out;
    for (size_t i = 0; i < lines.size() && err.empty(); ++i) {
        std::string line = lines[i].substr(0, lines[i].find('#'));
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (auto c = parse_line(line, static_cast<int>(i) + 1, err)) out.push_back(*c);
    }
    if (out.empty() && err.empty()) err = "the configuration list has no configurations";
    return out;
}

// The rows an earlier run wrote (their "config"), so a rerun skips them.
std::set<std::string> rows_done(const std::string& path) {
    std::set<std::string> done;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        auto row = workbench::parse_json(line);
        if (row.ok() && row->is_object() && row->contains("config") && (*row)["config"].is_string())
            done.insert((*row)["config"].get<std::string>());
    }
    return done;
}

struct SweepSettings {
    int32_t ctx = 4096, windows = 1, n_decode = 32;
    bool retrieval = false;
    workbench::RetrievalOptions retrieval_options;
};

// One configuration, measured; a failure is a row with its error.
workbench::Json measure_row(const SweepConfig& sc, const workbench::EngineConfig& base, workbench::Engine& baseline,
                            const std::vector<workbench::TokenId>& text, const SweepSettings& s, const Args& args) {
    workbench::Json row = {{"config", sc.line}, {"attention", sc.attention}, {"kv_type", sc.kv_types},
                           {"weights", sc.weights.empty() ? std::string("as stored") : sc.weights}};
    auto failed = [&](const workbench::Status& st) {
        row["status"] = "failed";
        row["error"] = st.message();
        return row;
    };
    workbench::EngineConfig c = base;
    c.attention = sc.attention;
    c.kv_types = sc.kv_types;
    c.weight_type = sc.weights;
    c.n_ctx = s.ctx + s.n_decode + 16;
    auto loaded = workbench::Engine::load(c);
    if (!loaded.ok()) return failed(loaded.status());
    workbench::Engine& engine = **loaded;
    const workbench::ModelInfo& info = engine.model_info();
    row["attention"] = info.attention;
    row["kv_type"] = info.kv_types;
    row["weights"] = info.weight_type;
    workbench::QualityOptions qo;
    qo.n_ctx = s.ctx;
    qo.max_windows = s.windows;
    auto q = workbench::evaluate_quality(engine, baseline, text, qo);
    if (!q.ok()) return failed(q.status());
    auto timed = run_after_window(engine, text, q->n_windows, s.ctx, s.n_decode);
    if (!timed.ok()) return failed(timed.status());
    const workbench::GenerationMetrics& m = *timed;
    row["kv_bytes"] = std::max(q->kv_bytes_peak, m.kv_bytes_peak);
    row["kv_bytes_full"] = std::max(q->kv_bytes_full, m.kv_bytes_full);
    row["kv_bytes_read_per_token"] = m.kv_bytes_read_per_token;
    row["prefill_tok_s"] = workbench::json_rounded(m.prefill_tok_s);
    row["decode_tok_s"] = workbench::json_rounded(m.decode_tok_s);
    row["ppl"] = workbench::json_rounded(q->perplexity);
    row["delta_ppl_pct"] = workbench::json_rounded(q->delta_ppl_pct);
    row["kl"] = workbench::json_rounded(q->kl_mean);
    row["top1"] = workbench::json_rounded(q->top1_agreement);
    std::optional<double> retrieval;
    if (s.retrieval) {
        auto r = workbench::evaluate_retrieval(engine, s.retrieval_options);
        if (!r.ok()) return failed(r.status());
        retrieval = r->accuracy;
        const workbench::Json figures = retrieval_report_json(*r);
        row["retrieval_accuracy"] = figures["retrieval_accuracy"];
        row["retrieval_cells"] = figures["cells"];
    }
    row["ctx"] = s.ctx;
    row["windows"] = q->n_windows;
    row["status"] = "ok";
    if (auto recorder = HistoryRecorder::open_if_asked(args, engine, c)) {
        workbench::EvaluationRecord e;
        e.configuration_id = recorder->configuration_id();
        e.text_name = "sweep: " + std::filesystem::path(args.get("--text", "alice_wonderland.txt")).filename().string();
        e.n_tokens = static_cast<int32_t>(q->n_tokens_scored);
        e.perplexity = q->perplexity;
        e.kl_mean = q->kl_mean;
        e.top1_agreement = q->top1_agreement;
        e.retrieval_accuracy = retrieval;
        e.json = workbench::dump_json(row);
        if (auto id = recorder->store().save_evaluation(e); !id.ok()) recorder->warn(id.status());
        recorder->finish();
    }
    return row;
}

int write_plot(const std::string& out_path, const std::string& plot_path, const std::string& y, const std::string& model) {
    std::vector<MapPoint> points;
    std::ifstream in(out_path);
    const std::string key = y == "kl" ? "kl" : y == "top1" ? "top1" : y == "retrieval" ? "retrieval_accuracy" : "delta_ppl_pct";
    for (std::string line; std::getline(in, line);) {
        auto row = workbench::parse_json(line);
        if (!row.ok() || !row->is_object() || row->value("status", "") != "ok" || !row->contains(key) || !(*row)[key].is_number()) continue;
        MapPoint p;
        p.label = row->value("attention", "") + " · KV " + row->value("kv_type", "");
        if (row->value("weights", "") != "" && row->value("config", "").find("--weights") != std::string::npos)
            p.label += " · W " + row->value("weights", "");
        p.kv_bytes = (*row)["kv_bytes"].get<double>();
        p.quality = (*row)[key].get<double>();
        if ((*row)["decode_tok_s"].is_number()) p.decode_tok_s = (*row)["decode_tok_s"].get<double>();
        points.push_back(p);
    }
    const MapAxis axis = key == "kl"          ? MapAxis{"KL vs full attention", false}
                         : key == "top1"      ? MapAxis{"top-1 agreement with full attention", true}
                         : key == "retrieval_accuracy" ? MapAxis{"retrieval accuracy (passkey + multi-key)", true}
                                                       : MapAxis{"ΔPPL vs full attention (%)", false};
    std::ofstream svg(plot_path);
    svg << variants_map_svg(points, axis, "Variants map: " + model);
    if (!svg.flush()) return runtime_error(plot_path + ": cannot write the plot");
    std::cerr << "wrote " << plot_path << " (" << points.size() << " configurations)\n";
    return 0;
}

}  // namespace

int cmd_sweep(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--preset", "", true, "standard  the built-in presets and a spread of each variant's main parameter (the default)"},
        {"--file", "-f", true, "CONFIGS  one configuration a line: an attention spec, then optionally --kv-type T --weights W; # comments"},
        {"--windows", "", true, "N  --ctx-long windows of the text scored per row (default 1)"},
        {"--retrieval", "", false, "also passkey + multi-key retrieval per row (lengths up to --ctx, 5 depths, --trials each)"},
        {"--trials", "", true, "N  retrieval trials per cell and kind (default 4)"},
        {"--text", "", true, "PATH  the scored text (default resources/eval/alice_wonderland.txt)"},
        {"--out", "-o", true, "PATH  the rows as JSON lines (default sweep.jsonl); a rerun skips rows already there"},
        {"--plot", "", true, "PATH  the variants map as SVG: KV bytes (log) against --plot-y, colour = decode tok/s"},
        {"--plot-y", "", true, "dppl|kl|top1|retrieval  the map's quality axis (default dppl)"},
        db_flag(),
    };
    const std::string synopsis = "[--preset standard | -f CONFIGS] [--ctx 4096] [--windows 1] [--retrieval] [-o sweep.jsonl] [--db PATH] [--plot map.svg]";
    add_engine_flags(flags);
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "sweep", synopsis, flags, ctx, false); rc >= 0) return rc;
    std::string err;
    SweepSettings s;
    s.ctx = ctx.config.n_ctx > 0 ? ctx.config.n_ctx : 4096;
    s.windows = ctx.args.get_int("--windows", 1, 1, 1 << 16, err);
    s.retrieval = ctx.args.has("--retrieval");
    s.retrieval_options.trials = ctx.args.get_int("--trials", 4, 1, 1000, err);
    std::erase_if(s.retrieval_options.lengths, [&](int32_t l) { return l > s.ctx; });
    if (s.retrieval_options.lengths.empty()) s.retrieval_options.lengths = {s.ctx};
    if (ctx.args.has("--preset") && ctx.args.get("--preset") != "standard") err = "--preset: 'standard' is the one preset";
    if (ctx.args.has("--preset") && ctx.args.has("--file")) err = "--preset and --file: give one list";
    const std::string plot_y = ctx.args.get("--plot-y", "dppl");
    if (plot_y != "dppl" && plot_y != "kl" && plot_y != "top1" && plot_y != "retrieval") err = "--plot-y: dppl, kl, top1 or retrieval";
    if (!err.empty()) return usage_error("sweep: " + err);
    const std::vector<SweepConfig> configs = read_configs(ctx.args, err);
    if (!err.empty()) return runtime_error(err);
    for (const SweepConfig& c : configs) {
        workbench::EngineConfig check;
        check.attention = c.attention;
        check.kv_types = c.kv_types;
        check.weight_type = c.weights;
        if (auto st = workbench::check_engine_config(check); !st.ok()) return runtime_error("configuration '" + c.line + "': " + st.message());
    }
    const std::string out_path = ctx.args.get("--out", "sweep.jsonl");
    const std::string text_path = ctx.args.get("--text", WB_EVAL_TEXT_PATH);
    std::ifstream text_in(text_path, std::ios::binary);
    if (!text_in) return runtime_error(text_path + ": cannot read the text to score");
    std::stringstream text;
    text << text_in.rdbuf();
    // The baseline, loaded once: full attention, f16 KV, the file's weights.
    auto adjust = [&](workbench::EngineConfig& c) {
        c.attention = "full";
        c.kv_types = "f16";
        c.weight_type.clear();
        c.n_ctx = s.ctx + 48;
    };
    if (int rc = prepare_command(argc, argv, "sweep", synopsis, flags, ctx, true, adjust); rc >= 0) return rc;
    workbench::Engine& baseline = *ctx.engine;
    const std::vector<workbench::TokenId> tokens = baseline.tokenize(text.str(), true, false);
    if (tokens.size() < static_cast<size_t>(s.ctx) + 1)
        return runtime_error(text_path + " has " + std::to_string(tokens.size()) + " tokens, fewer than one window of --ctx " + std::to_string(s.ctx));
    const std::set<std::string> done = rows_done(out_path);
    std::ofstream out(out_path, std::ios::app);
    if (!out) return runtime_error(out_path + ": cannot open for appending");
    const bool tty = isatty(STDERR_FILENO);
    const auto t0 = std::chrono::steady_clock::now();
    int measured = 0, skipped = 0, failed = 0;
    const int total = static_cast<int>(configs.size());
    for (int i = 0; i < total; ++i) {
        const SweepConfig& c = configs[static_cast<size_t>(i)];
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
        workbench::Json row = measure_row(c, ctx.config, baseline, tokens, s, ctx.args);
        out << workbench::dump_json(row) << "\n" << std::flush;
        if (!out) return runtime_error(out_path + ": cannot write (disk full?); the rows before this one are kept");
        ++measured;
        if (row["status"] == "failed") ++failed;
        if (tty) std::fprintf(stderr, "\r%*s\r", 110, "");
        if (row["status"] == "failed") {
            std::printf("%2d/%d  %-50s  failed: %s\n", i + 1, total, c.line.c_str(), row["error"].get<std::string>().c_str());
        } else {
            std::printf("%2d/%d  %-50s  KV %-10s  dPPL %+7.2f%%  KL %.4f  top-1 %5.1f%%  decode %6.1f tok/s%s\n", i + 1, total, c.line.c_str(),
                        format_bytes(row["kv_bytes"].get<uint64_t>()).c_str(), row["delta_ppl_pct"].get<double>(), row["kl"].get<double>(),
                        100 * row["top1"].get<double>(), row["decode_tok_s"].is_number() ? row["decode_tok_s"].get<double>() : 0.0,
                        row.contains("retrieval_accuracy") ? ("  retrieval " + std::to_string(row["retrieval_accuracy"].get<double>()).substr(0, 5)).c_str() : "");
        }
        std::fflush(stdout);
    }
    std::fprintf(stderr, "sweep: %d measured (%d failed), %d already in %s\n", measured, failed, skipped, out_path.c_str());
    if (ctx.args.has("--plot"))
        if (int rc = write_plot(out_path, ctx.args.get("--plot"), plot_y, std::filesystem::path(ctx.config.model_path).filename().string()); rc != 0)
            return rc;
    return failed > 0 ? 1 : 0;
}

}  // namespace wbcli
