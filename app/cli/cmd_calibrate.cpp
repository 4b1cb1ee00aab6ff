// `calibrate`: which neighbouring layers share one KV (cross_layer), measured on a calibration
// text — each pair merged alone against full attention, the cheapest pairs shared until the
// cache is at most --kv-share of full attention's. Prints every pair's cost and the layout, and
// with --out writes an EngineConfig JSON that run/eval/bench load with --config.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "workbench/calibration.h"

namespace wbcli {

int cmd_calibrate(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--file", "-f", true, "PATH  the calibration text (default: resources/eval/paradise_lost.txt; not the evaluation text)"},
        {"--kv-share", "", true, "X  stored layers at most this share of the model's, 0.5 to 1 (default 0.75)"},
        {"--chunks", "", true, "N  windows of --ctx tokens scored per pair (default 1)"},
        {"--out", "", true, "FILE  write the calibrated configuration as EngineConfig JSON (load it with --config)"},
        {"--json", "", false, "print one JSON object with every pair's cost and the layout"},
    };
    const std::string synopsis = "[--attention cross_layer:merge=mean,sinks=4] [--kv-share 0.75] [-f TEXT] [--ctx 2048] [--out FILE]";
    add_engine_flags(flags);
    CommandContext ctx;
    // The engine loaded here tokenizes; the pairs run under the spec given with --attention.
    std::string merge_text = "cross_layer:merge=mean";
    auto adjust = [&](workbench::EngineConfig& c) {
        if (c.attention != "full") merge_text = c.attention;
        c.attention = "full";
        if (c.n_ctx == 0) c.n_ctx = 2048;
    };
    if (int rc = prepare_command(argc, argv, "calibrate", synopsis, flags, ctx, true, adjust); rc >= 0) return rc;
    std::string err;
    const int chunks = ctx.args.get_int("--chunks", 1, 1, 1 << 20, err);
    if (!err.empty()) return usage_error("calibrate: " + err);
    double max_share = 0.75;
    if (ctx.args.has("--kv-share")) {
        std::istringstream in(ctx.args.get("--kv-share"));
        if (!(in >> max_share) || !in.eof() || !(max_share >= 0.5 && max_share <= 1.0))
            return usage_error("calibrate: --kv-share takes a number from 0.5 to 1 (pairs of layers store one KV of two)");
    }
    auto merge = workbench::parse_attention_spec(merge_text);
    if (!merge.ok()) return usage_error(merge.status().message());
    if (merge->kind != workbench::AttentionKind::cross_layer)
        return usage_error("calibrate: --attention " + merge_text + " is not a cross_layer spec (e.g. cross_layer:merge=mean,sinks=4)");

    const std::string path = ctx.args.get("--file", workbench::default_calibration_text_path());
    std::ifstream in(path, std::ios::binary);
    if (!in) return runtime_error("cannot read the calibration text " + path);
    std::stringstream text;
    text << in.rdbuf();
    const std::vector<workbench::TokenId> tokens = ctx.engine->tokenize(text.str(), true, false);
    workbench::QualityOptions qo;
    qo.n_ctx = ctx.config.n_ctx;
    qo.max_windows = chunks;
    const bool json = ctx.args.has("--json");
    const auto t0 = std::chrono::steady_clock::now();
    auto progress = [&](int64_t done, int64_t total) {
        if (json) return;
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::cerr << "\rpairs [" << done << "/" << total << "] " << static_cast<int>(s) << " s" << std::flush;
    };
    ctx.engine.reset();   // the calibration loads its own engines
    auto result = workbench::calibrate_layer_sharing(ctx.config, *merge, tokens, qo, max_share, progress);
    if (!json) std::cerr << "\n";
    if (!result.ok()) return runtime_error("calibrate on " + path + ": " + result.status().message());

    workbench::EngineConfig calibrated = ctx.config;
    calibrated.attention = result->attention;
    {
        std::ostringstream by;
        by << "workbench-cli calibrate: " << workbench::attention_spec_name(*merge) << " on the pairs of layers whose merge cost "
           << "least KL on " << std::filesystem::path(path).filename().string() << " (" << chunks << " × " << qo.n_ctx
           << " tokens), until the KV is at most " << max_share << " of full attention's";
        calibrated.calibrated_by = by.str();
    }
    if (ctx.args.has("--out")) {
        const std::string out_path = ctx.args.get("--out");
        std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
        out << workbench::engine_config_json(calibrated) << "\n";
        out.close();
        if (!out) return runtime_error(out_path + ": cannot write the configuration (disk full or no permission?)");
    }
    if (json) {
        workbench::Json pairs = workbench::Json::array();
        for (const auto& p : result->pairs)
            pairs.push_back({{"layers", std::to_string(p.first_layer) + "-" + std::to_string(p.first_layer + 1)},
                             {"kl_mean", p.kl_mean},
                             {"delta_ppl_pct", p.delta_ppl_pct}});
        print_json_line({{"file", path}, {"merge", workbench::attention_spec_name(*merge)}, {"pairs", pairs},
                         {"attention", result->attention}, {"kv_share", result->kv_share}});
        return 0;
    }
    std::printf("%s on %s, %d token window%s\n", workbench::attention_spec_name(*merge).c_str(), path.c_str(), qo.n_ctx,
                chunks > 1 ? "s" : "");
    std::printf("layers   KL       dPPL %%   shared\n");
    for (const auto& p : result->pairs) {
        const bool chosen = std::find(result->chosen.begin(), result->chosen.end(), p.first_layer) != result->chosen.end();
        std::printf("%2d-%-2d  %8.4f  %+8.2f   %s\n", p.first_layer, p.first_layer + 1, p.kl_mean, p.delta_ppl_pct, chosen ? "yes" : "");
    }
    std::printf("KV share %.3f: --attention \"%s\"\n", result->kv_share, result->attention.c_str());
    return 0;
}

}  // namespace wbcli
