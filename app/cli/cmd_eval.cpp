// `eval`: perplexity of a text under the configured variant, KV types and weights, and — against
// full attention with f16 KV and the file's weights, run side by side in the same process — the
// mean KL divergence and top-1 agreement per token (llama-perplexity --kl-divergence's figures).
// Windows of --ctx tokens start from an empty cache; the second half of each is scored. Chunks of
// a window run through both engines in turn, so only one chunk's logits are held at a time.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "json_writer.h"

namespace wbcli {
namespace {

constexpr size_t kChunk = 256;

// log-softmax of one row, in double for the sums.
void log_softmax(const float* logits, int64_t n, std::vector<double>& out) {
    out.resize(static_cast<size_t>(n));
    const float mx = *std::max_element(logits, logits + n);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - mx);
    const double lse = mx + std::log(sum);
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = logits[i] - lse;
}

struct Totals {
    double nll = 0, nll_base = 0, kl = 0;
    int64_t n = 0, top1_same = 0;
};

}  // namespace

int cmd_eval(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--file", "-f", true, "PATH  the text to score (e.g. resources/eval/alice_wonderland.txt)"},
        {"--chunks", "", true, "N  score at most N windows (default: all)"},
        {"--decode", "", true, "N  after the last window, generate N tokens to time decode at that context (default 32; 0 = off)"},
        {"--json", "", false, "print one JSON object with the figures"},
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
    const size_t window = static_cast<size_t>(n_ctx);
    size_t n_windows = all.size() / window;
    if (max_chunks > 0) n_windows = std::min(n_windows, static_cast<size_t>(max_chunks));
    if (n_windows == 0)
        return runtime_error(path + " has " + std::to_string(all.size()) + " tokens, fewer than one window of --ctx " + std::to_string(n_ctx));
    const bool json = ctx.args.has("--json");
    const int64_t n_vocab = info.n_vocab;
    Totals tot;
    uint64_t kv_peak = 0, kv_full = 0;
    std::vector<double> lp, lp_base;
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t w = 0; w < n_windows; ++w) {
        const size_t first = w * window;
        engine.reset();
        if (!same_as_base) base.reset();
        for (size_t c0 = 0; c0 < window; c0 += kChunk) {
            const size_t cn = std::min(kChunk, window - c0);
            const std::vector<workbench::TokenId> chunk(all.begin() + static_cast<std::ptrdiff_t>(first + c0),
                                                        all.begin() + static_cast<std::ptrdiff_t>(first + c0 + cn));
            if (c0 + cn <= window / 2) {
                // Nothing scored here: run the chunk without the output head.
                if (auto st = engine.eval(chunk); !st.ok()) return runtime_error(st.message());
                if (!same_as_base)
                    if (auto st = base.eval(chunk); !st.ok()) return runtime_error("baseline: " + st.message());
                continue;
            }
            auto logits = engine.eval_logits(chunk);
            if (!logits.ok()) return runtime_error(logits.status().message());
            workbench::Result<std::vector<float>> base_logits = same_as_base ? logits : base.eval_logits(chunk);
            if (!base_logits.ok()) return runtime_error("baseline: " + base_logits.status().message());
            // Position i predicts token i + 1; the second half of the window is scored.
            for (size_t i = c0; i < c0 + cn && i + 1 < window; ++i) {
                if (i < window / 2) continue;
                const float* row = logits->data() + (i - c0) * n_vocab;
                const float* brow = base_logits->data() + (i - c0) * n_vocab;
                const auto next = static_cast<size_t>(all[first + i + 1]);
                log_softmax(row, n_vocab, lp);
                tot.nll -= lp[next];
                ++tot.n;
                if (same_as_base) {
                    tot.nll_base -= lp[next];
                    ++tot.top1_same;
                    continue;
                }
                log_softmax(brow, n_vocab, lp_base);
                tot.nll_base -= lp_base[next];
                double kl = 0;
                for (int64_t v = 0; v < n_vocab; ++v) kl += std::exp(lp_base[static_cast<size_t>(v)]) * (lp_base[static_cast<size_t>(v)] - lp[static_cast<size_t>(v)]);
                tot.kl += std::max(0.0, kl);
                tot.top1_same += (std::max_element(row, row + n_vocab) - row) == (std::max_element(brow, brow + n_vocab) - brow);
            }
        }
        const auto usage = engine.kv_usage();
        kv_peak = std::max(kv_peak, usage.bytes_peak);
        kv_full = std::max(kv_full, usage.bytes_full);
        if (!json) {
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::cerr << "\r[" << (w + 1) << "/" << n_windows << "] ppl " << std::exp(tot.nll / static_cast<double>(tot.n)) << "  "
                      << static_cast<int>(s) << " s" << std::flush;
        }
    }
    if (!json) std::cerr << "\n";

    // Decode at the last window's context: one more text token, then greedy tokens.
    std::optional<double> decode_tok_s;
    uint64_t read_per_token = 0, read_full = 0;
    if (n_decode > 0) {
        const size_t end = (n_windows - 1) * window + window;
        std::vector<workbench::TokenId> prompt(all.begin() + static_cast<std::ptrdiff_t>(end - window),
                                               all.begin() + static_cast<std::ptrdiff_t>(std::min(end + 1, all.size())));
        workbench::GenerationRequest req;
        req.max_tokens = n_decode;
        req.ignore_eos = true;
        req.sampling.temperature = 0;
        auto out = engine.generate_tokens(prompt, req);
        if (!out.ok()) return runtime_error(out.status().message());
        decode_tok_s = out->metrics.decode_tok_s;
        read_per_token = out->metrics.kv_bytes_read_per_token;
        // The last step's query read every cached token under full attention.
        read_full = info.kv_bytes_per_token * static_cast<uint64_t>(out->metrics.n_context_tokens);
        kv_peak = std::max(kv_peak, out->metrics.kv_bytes_peak);
        kv_full = std::max(kv_full, out->metrics.kv_bytes_full);
    }

    const double n = static_cast<double>(tot.n);
    const double ppl = std::exp(tot.nll / n), ppl_base = std::exp(tot.nll_base / n);
    const double dppl = (ppl / ppl_base - 1.0) * 100.0;
    if (json) {
        JsonWriter j;
        j.begin_object();
        j.key("file").value(path);
        j.key("ctx").value(n_ctx);
        j.key("windows").value(static_cast<int64_t>(n_windows));
        j.key("tokens_scored").value(tot.n);
        j.key("attention").value(info.attention);
        j.key("kv_type").value(info.kv_types);
        j.key("weights").value(info.weight_type);
        j.key("ppl").value(ppl);
        j.key("ppl_baseline").value(ppl_base);
        j.key("delta_ppl_pct").value(dppl);
        j.key("kl_mean").value(tot.kl / n);
        j.key("top1_agreement").value(static_cast<double>(tot.top1_same) / n);
        j.key("kv_bytes_peak").value(kv_peak);
        j.key("kv_bytes_full").value(kv_full);
        j.key("kv_bytes_read_per_token").value(read_per_token);
        j.key("kv_bytes_read_full").value(read_full);
        j.key("decode_tok_s").value(decode_tok_s);
        j.end_object();
        std::cout << j.str() << "\n";
        return 0;
    }
    std::printf("%s  kv %s  weights %s  ctx %d  windows %zu  scored %lld tokens\n", info.attention.c_str(), info.kv_types.c_str(),
                info.weight_type.c_str(), n_ctx, n_windows, static_cast<long long>(tot.n));
    std::printf("PPL %.4f  baseline %.4f  dPPL %+.3f%%  KL %.5f  top-1 %.2f%%\n", ppl, ppl_base, dppl, tot.kl / n,
                100.0 * static_cast<double>(tot.top1_same) / n);
    std::printf("KV peak %s (full attention %s)  read/token %s (full %s)  decode %s\n", format_bytes(kv_peak).c_str(),
                format_bytes(kv_full).c_str(), format_bytes(read_per_token).c_str(), format_bytes(read_full).c_str(),
                decode_tok_s ? (std::to_string(*decode_tok_s) + " tok/s").c_str() : "n/a");
    return 0;
}

}  // namespace wbcli
