// `bench`: llama-bench's methodology on our engine. pp<N>: a prompt of N random tokens prefilled
// into an empty cache; tg<N>: N tokens decoded one at a time from an empty cache. Each test runs
// once to warm up, then -r times; the figure is mean ± stddev of tokens/s. Rows print as a
// markdown table, or with --json as a JSON array of llama-bench's rows (workbench/bench_row.h:
// its fields in its order, then ours: gb_s, roofline_pct, RSS, kernels, …).
#include <algorithm>
#include <chrono>
#include <functional>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>

#include "commands.h"
#include "history_recorder.h"
#include "workbench/bench_row.h"
#include "workbench/measure.h"

namespace wbcli {
namespace {

// One test's result: the JSON row's figures, and its mean and spread for the table.
struct Row {
    workbench::BenchRow bench;
    double avg_ts = 0, stddev_ts = 0;
    uint64_t rss_bytes = 0;   // largest resident memory seen after a run of the test (before any probe)
};

}  // namespace

int cmd_bench(int argc, char** argv) {
    for (int i = 2; i < argc; ++i)
        if (std::string(argv[i]).rfind("--remote", 0) == 0) return bench_remote(argc, argv);
    std::vector<FlagSpec> flags = {
        {"--n-prompt", "-p", true, "N  prompt tokens for the pp test (default 512; 0 skips it)"},
        {"--n-gen", "-n", true, "N  generated tokens for the tg test (default 128; 0 skips it)"},
        {"--n-depth", "-d", true, "N  run both tests after N tokens already in the cache (llama-bench's -d; default 0)"},
        {"--repetitions", "-r", true, "N  timed runs per test after a warm-up (default 5)"},
        {"--batch", "-b", true, "LIST  batch sizes, e.g. 1,2,4,8,16,32: one throughput row each (all prompts, then all decode together)"},
        {"--json", "", false, "print a JSON array of rows (llama-bench field names)"},
        db_flag(),
        {"--remote", "", true, "URL  measure a remote OpenAI-compatible server instead, as vllm bench serve does (bench --remote URL --help)"},
    };
    const std::string synopsis = "[-p 512] [-n 128] [-d 0] [-r 5] [-b 1,2,4,...] [-t N] [--weights TYPE] [--json]";
    add_engine_flags(flags);
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "bench", synopsis, flags, ctx, false); rc >= 0) return rc;
    std::string err;
    const int n_prompt = ctx.args.get_int("--n-prompt", 512, 0, 65536, err);
    const int n_gen = ctx.args.get_int("--n-gen", 128, 0, 65536, err);
    const int reps = ctx.args.get_int("--repetitions", 5, 1, 1000, err);
    const int n_depth = ctx.args.get_int("--n-depth", 0, 0, 1 << 20, err);
    if (!err.empty()) return usage_error("bench: " + err);
    if (n_prompt == 0 && n_gen == 0) return usage_error("bench: nothing to do (-p 0 and -n 0)");
    std::vector<int> batches;
    if (ctx.args.has("--batch")) {
        std::string list = ctx.args.get("--batch");
        for (size_t at = 0; at <= list.size();) {
            const size_t comma = std::min(list.find(',', at), list.size());
            const std::string item = list.substr(at, comma - at);
            char* end = nullptr;
            const long b = std::strtol(item.c_str(), &end, 10);
            if (item.empty() || *end != '\0' || b < 1 || b > 1024)
                return usage_error("bench: --batch: '" + item + "' is not a batch size from 1 to 1024 (e.g. -b 1,2,4,8)");
            batches.push_back(static_cast<int>(b));
            at = comma + 1;
        }
        if (n_prompt == 0) return usage_error("bench: --batch needs a prompt (-p N > 0)");
        if (n_depth > 0) return usage_error("bench: --n-depth applies to the pp/tg tests, not to --batch");
    }
    const int reps_sweep = ctx.args.has("--repetitions") ? reps : 1;
    auto adjust = [&](workbench::EngineConfig& config) {
        config.n_ctx = n_depth + std::max(n_prompt, n_gen + 1) + 16;
        if (!batches.empty()) {
            // Every sequence of the largest batch holds its prompt and generation at once.
            config.n_ctx = n_prompt + n_gen + 16;
            config.n_seq_max = *std::max_element(batches.begin(), batches.end());
        }
    };
    if (int rc = prepare_command(argc, argv, "bench", synopsis, flags, ctx, true, adjust); rc >= 0) return rc;
    workbench::Engine& engine = *ctx.engine;
    const auto& info = engine.model_info();
    const bool json = ctx.args.has("--json");
    const std::string model_type = workbench::bench_model_type(info);
    auto recorder = HistoryRecorder::open_if_asked(ctx.args, engine, ctx.config);
    if (!batches.empty()) return bench_batch_sweep(engine, batches, n_prompt, n_gen, reps_sweep, json, model_type, recorder.get());
    // One warm-up, then `reps` timed runs from an empty cache (workbench/measure.h, shared with
    // the GUI's Benchmark page).
    // For tg, `probe_gb_s` gets one bandwidth measurement before each timed run (after the
    // warm-up and after each run but the last), so each run is judged against the machine as it
    // was that moment: on a shared host the probe itself moves by a third between minutes.
    auto run_test = [&](workbench::SpeedTestKind kind, int n_tokens, Row& r, std::vector<double>* probe_gb_s) -> workbench::Status {
        uint64_t rss = 0;
        r.bench.test_time_unix_ms = workbench::unix_time_ms();
        auto test = workbench::measure_speed(
            engine, kind, n_tokens, reps, 1234, [&](int64_t done, int64_t total) {
                if (!json) std::cerr << "." << std::flush;
                rss = std::max(rss, workbench::process_resident_bytes());  // before a probe allocates
                if (probe_gb_s && done < total)
                    probe_gb_s->push_back(workbench::measure_read_bandwidth_gb_s(info.decode_weight_bytes, info.n_threads, 5, 100));
            },
            nullptr, n_depth);
        if (!test.ok()) return test.status();
        r.bench.test = test->test;
        r.bench.n_prompt = test->n_prompt;
        r.bench.n_gen = test->n_gen;
        r.bench.n_depth = n_depth;
        r.bench.n_batch = kind == workbench::SpeedTestKind::prompt ? n_tokens : 1;  // a prompt in one call; tg token by token
        r.bench.samples_ts = test->samples_tok_s;
        r.bench.rss_bytes = rss;
        r.avg_ts = test->avg_tok_s;
        r.stddev_ts = test->stddev_tok_s;
        r.rss_bytes = rss;
        return {};
    };
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    };

    std::vector<Row> rows;
    if (n_prompt > 0) {
        Row r;
        if (auto s = run_test(workbench::SpeedTestKind::prompt, n_prompt, r, nullptr); !s.ok()) return runtime_error(s.message());
        rows.push_back(r);
    }
    if (n_gen > 0) {
        Row r;
        std::vector<double> probes;
        // The roofline is the host's read bandwidth: a device backend's weights are not read from it.
        const bool host_roofline = info.backend == "cpu";
        if (auto s = run_test(workbench::SpeedTestKind::generation, n_gen, r, host_roofline ? &probes : nullptr); !s.ok())
            return runtime_error(s.message());
        // Bytes per decoded token: every weight matrix once, plus the KV read at the mean context:
        // what the engine reported its last step read (the variant's, indexer included), scaled
        // from the last context to the mean as full attention's grows (exact for it).
        const double mean_ctx = n_depth + (n_gen + 1) / 2.0;
        const uint64_t last_read = engine.kv_usage().bytes_read_last_step;
        const double kv_read = last_read > 0 ? static_cast<double>(last_read) * mean_ctx / (n_depth + n_gen)
                                             : static_cast<double>(info.kv_bytes_per_token) * mean_ctx;
        const double bytes_per_token = static_cast<double>(info.decode_weight_bytes) + kv_read;
        r.bench.gb_s = bytes_per_token * r.avg_ts / 1e9;
        // Roofline share: the median over runs of each run's rate against the probe just before it.
        std::vector<double> shares;
        const std::vector<double>& samples = r.bench.samples_ts;
        for (size_t i = 0; i < samples.size() && i < probes.size(); ++i)
            if (probes[i] > 0) shares.push_back(100.0 * bytes_per_token * samples[i] / 1e9 / probes[i]);
        if (!shares.empty()) r.bench.roofline_pct = median(shares);
        if (!json && host_roofline) {
            const double probe_gb_s = median(probes);
            const char* active = info.n_expert > 0 ? " active" : "";  // of the experts, those a token runs
            std::cerr << "\nread bandwidth at the weights' working set (" << format_bytes(info.decode_weight_bytes) << active << ", "
                      << info.n_threads << " threads), probed before each tg run: median " << probe_gb_s << " GB/s (min "
                      << (probes.empty() ? 0.0 : *std::min_element(probes.begin(), probes.end())) << ", max "
                      << (probes.empty() ? 0.0 : *std::max_element(probes.begin(), probes.end())) << ")";
            // The decode time the bytes predict at that bandwidth, beside the one measured: what
            // the variant's reads (indexer included) would allow, and how far the engine is from it.
            if (probe_gb_s > 0 && r.avg_ts > 0) {
                const double predicted_ms = bytes_per_token / (probe_gb_s * 1e9) * 1000.0, measured_ms = 1000.0 / r.avg_ts;
                std::fprintf(stderr, "\ndecode per token: predicted %.2f ms (%s of%s weights + %s of KV read at the median probe), measured %.2f ms (%.2f× predicted)",
                             predicted_ms, format_bytes(info.decode_weight_bytes).c_str(), active, format_bytes(static_cast<uint64_t>(kv_read)).c_str(),
                             measured_ms, measured_ms / predicted_ms);
            }
        }
        rows.push_back(r);
    }

    auto label = [](const Row& r) {
        return r.bench.test + (r.bench.n_depth > 0 ? " @ d" + std::to_string(r.bench.n_depth) : std::string());
    };
    workbench::Json objects = workbench::Json::array();
    for (const auto& r : rows) objects.push_back(workbench::bench_row_json(r.bench, info));
    if (recorder) {
        for (size_t i = 0; i < rows.size(); ++i)
            recorder->save_benchmark(label(rows[i]), rows[i].bench.n_prompt, rows[i].bench.n_gen, 1, info.n_threads, rows[i].avg_ts,
                                     rows[i].stddev_ts, workbench::dump_json(objects[i]));
        recorder->finish();
    }
    if (json) {
        print_json_line(objects);
        return 0;
    }
    std::cerr << "\nCPU: " << info.cpu_features << "; kernels: " << info.cpu_kernels << "\n";
    if (const uint64_t device = info.device_weight_bytes + info.device_activation_bytes + info.device_workspace_bytes + info.device_kv_bytes;
        device > 0)
        std::cerr << info.backend << " device memory: " << format_bytes(device) << " (weights " << format_bytes(info.device_weight_bytes)
                  << ", KV " << format_bytes(info.device_kv_bytes) << ", activations " << format_bytes(info.device_activation_bytes) << ", workspace "
                  << format_bytes(info.device_workspace_bytes) << ")\n";
    std::string backend_label = info.backend;
    for (char& c : backend_label) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::printf("| model | size | params | backend | threads | test | t/s | GB/s | roofline | RSS |\n");
    std::printf("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& r : rows) {
        std::printf("| %s | %s | %.2f M | %s | %d | %s | %.2f ± %.2f |", model_type.c_str(), format_bytes(info.weight_bytes).c_str(),
                    static_cast<double>(info.n_params) / 1e6, backend_label.c_str(), info.n_threads,
                    label(r).c_str(), r.avg_ts, r.stddev_ts);
        if (r.bench.gb_s) std::printf(" %.1f | %.0f%% |", *r.bench.gb_s, r.bench.roofline_pct.value_or(0));
        else std::printf(" | |");
        std::printf(" %s |\n", format_bytes(r.rss_bytes).c_str());
    }
    return 0;
}

}  // namespace wbcli
