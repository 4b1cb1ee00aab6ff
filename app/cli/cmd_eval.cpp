// `eval`: perplexity of a text under the configured variant, KV types and weights, and — against
// full attention with f16 KV and the file's weights, run side by side in the same process — the
// mean KL divergence and top-1 agreement per token (llama-perplexity --kl-divergence's figures).
// Windows of --ctx tokens start from an empty cache; the second half of each is scored. Chunks of
// a window run through both engines in turn, so only one chunk's logits are held at a time.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "history_recorder.h"
#include "workbench/bench_row.h"
#include "workbench/digest.h"
#include "workbench/measure.h"

namespace wbcli {

int cmd_eval(int argc, char** argv) {
    for (int i = 2; i < argc; ++i)
        if (std::string_view(argv[i]) == "--retrieval") return eval_retrieval(argc, argv);
    std::vector<FlagSpec> flags = {
        {"--file", "-f", true, "PATH  the text to score (e.g. resources/eval/alice_wonderland.txt)"},
        {"--chunks", "", true, "N  score at most N windows (default: all)"},
        {"--decode", "", true, "N  after the last window, generate N tokens to time decode at that context (default 32; 0 = off)"},
        {"--json", "", false, "print one JSON object with the figures"},
        {"--retrieval", "", false, "long-context retrieval tasks instead (eval --retrieval --help lists its flags)"},
        db_flag(),
    };
    const std::string synopsis = "-f TEXT [--ctx N] [--attention SPEC] [--kv-type T] [--weights Q] [--json]";
    add_engine_flags(flags);
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "eval", synopsis, flags, ctx, false); rc >= 0) return rc;
    std::string err;
    const int max_chunks = ctx.args.get_int("--chunks", 0, 1, 1 << 20, err);
    const int n_decode = ctx.args.get_int("--decode", 32, 0, 4096, err);
    if (!err.empty()) return usage_error("eval: " + err);
    if (!ctx.args.has("--file")) return usage_error("eval: -f/--file PATH is required");
    const std::string path = ctx.args.get("--file");
    std::ifstream in(path, std::ios::binary);
    if (!in) return runtime_error("cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    int n_ctx = 512;
    workbench::EngineConfig base_config;
    auto adjust = [&](workbench::EngineConfig& c) {
        if (c.n_ctx == 0) c.n_ctx = 512;
        n_ctx = c.n_ctx;
        c.n_ctx += n_decode + 1;  // room for the decode timing after the last window
        base_config.model_path = c.model_path;
        base_config.n_threads = c.n_threads;
        base_config.n_ctx = c.n_ctx;
        base_config.backend = c.backend;   // the baseline runs where the configuration runs
    };
    if (int rc = prepare_command(argc, argv, "eval", synopsis, flags, ctx, true, adjust); rc >= 0) return rc;
    workbench::Engine& engine = *ctx.engine;
    const auto& info = engine.model_info();
    const bool same_as_base = info.attention == "full" && info.kv_types == "f16" && !ctx.args.has("--weights");
    std::unique_ptr<workbench::Engine> base_owner;
    if (!same_as_base) {
        auto b = workbench::Engine::load(base_config);
        if (!b.ok()) return runtime_error("baseline: " + b.status().message());
        base_owner = std::move(b).value();
    }
    workbench::Engine& base = same_as_base ? engine : *base_owner;

    const std::vector<workbench::TokenId> all = engine.tokenize(text.str(), true, false);
    const bool json = ctx.args.has("--json");
    const auto t0 = std::chrono::steady_clock::now();
    workbench::QualityOptions qo;
    qo.n_ctx = n_ctx;
    qo.max_windows = max_chunks;
    auto progress = [&](int64_t done, int64_t total) {
        if (json) return;
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::cerr << "\r[" << done << "/" << total << "] " << static_cast<int>(s) << " s" << std::flush;
    };
    auto quality = workbench::evaluate_quality(engine, base, all, qo, progress);
    if (!json) std::cerr << "\n";
    if (!quality.ok()) return runtime_error(path + ": " + quality.status().message());
    const size_t n_windows = static_cast<size_t>(quality->n_windows);
    uint64_t kv_peak = quality->kv_bytes_peak, kv_full = quality->kv_bytes_full;

    // Decode at the last window's context: one more text token, then greedy tokens.
    std::optional<double> decode_tok_s;
    uint64_t read_per_token = 0, read_full = 0;
    if (n_decode > 0) {
        auto out = workbench::run_after_window(engine, all, static_cast<int32_t>(n_windows), n_ctx, n_decode);
        if (!out.ok()) return runtime_error(out.status().message());
        decode_tok_s = out->decode_tok_s;
        read_per_token = out->kv_bytes_read_per_token;
        // The last step's query read every cached token under full attention.
        read_full = info.kv_bytes_per_token * static_cast<uint64_t>(out->n_context_tokens);
        kv_peak = std::max(kv_peak, out->kv_bytes_peak);
        kv_full = std::max(kv_full, out->kv_bytes_full);
    }

    const workbench::QualityReport& q = *quality;
    const double ppl = q.perplexity, ppl_base = q.perplexity_baseline, dppl = q.delta_ppl_pct;
    {
        workbench::Json j = {{"file", path}};
        j.update(workbench::evaluation_row_json(q, info, n_ctx));
        j["kv_bytes_peak"] = kv_peak;  // the decode run's too
        j["kv_bytes_full"] = kv_full;
        j["kv_bytes_read_per_token"] = read_per_token;
        j["kv_bytes_read_full"] = read_full;
        j["decode_tok_s"] = workbench::json_rounded(decode_tok_s);
        if (auto recorder = HistoryRecorder::open_if_asked(ctx.args, engine, ctx.config)) {
            workbench::EvaluationRecord e;
            e.configuration_id = recorder->configuration_id();
            e.text_name = std::filesystem::path(path).filename().string();
            e.text_sha256 = workbench::sha256_hex(text.str());
            e.n_tokens = static_cast<int32_t>(q.n_tokens_scored);
            e.perplexity = ppl;
            e.kl_mean = q.kl_mean;
            e.top1_agreement = q.top1_agreement;
            e.json = workbench::dump_json(j);
            if (auto id = recorder->store().save_evaluation(e); !id.ok()) recorder->warn(id.status());
            recorder->finish();
        }
        if (json) {
            print_json_line(j);
            return 0;
        }
    }
    std::printf("%s  kv %s  weights %s  ctx %d  windows %zu  scored %lld tokens\n", info.attention.c_str(), info.kv_types.c_str(),
                info.weight_type.c_str(), n_ctx, n_windows, static_cast<long long>(q.n_tokens_scored));
    if (info.attention.find("ranks=measured") != std::string::npos) {
        std::printf("latent ranks per layer (measured at load):");
        for (int32_t r : info.latent_ranks) std::printf(" %d", r);
        std::printf("\n");
    }
    std::printf("PPL %.4f  baseline %.4f  dPPL %+.3f%%  KL %.5f  top-1 %.2f%%\n", ppl, ppl_base, dppl, q.kl_mean, 100.0 * q.top1_agreement);
    std::printf("KV peak %s (full attention %s)  read/token %s (full %s)  decode %s\n", format_bytes(kv_peak).c_str(),
                format_bytes(kv_full).c_str(), format_bytes(read_per_token).c_str(), format_bytes(read_full).c_str(),
                decode_tok_s ? (std::to_string(*decode_tok_s) + " tok/s").c_str() : "n/a");
    return 0;
}

}  // namespace wbcli
