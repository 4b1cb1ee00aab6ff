// `bench`: llama-bench's methodology on our engine. pp<N>: a prompt of N random tokens prefilled
// into an empty cache; tg<N>: N tokens decoded one at a time from an empty cache. Each test runs
// once to warm up, then -r times; the figure is mean ± stddev of tokens/s. Rows print as a
// markdown table, or with --json as llama-bench's JSON array (plus gb_s and roofline_pct).
#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>

#include "commands.h"
#include "history_recorder.h"
#include "json_writer.h"
#include "workbench/measure.h"

namespace wbcli {
namespace {

struct Row {
    std::string test;
    int n_prompt = 0, n_gen = 0, n_depth = 0;
    double avg_ts = 0, stddev_ts = 0;
    std::vector<double> samples_ts;
    double gb_s = 0;          // weight + KV bytes read per second (tg), 0 when not meaningful
    double roofline_pct = 0;  // median over tg runs of each run's GB/s against the probe just before it
    uint64_t rss_bytes = 0;   // largest resident memory seen after a run of the test (before any probe)
};

std::string params_label(uint64_t n) {
    char buf[32];
    if (n >= 1000000000ull) std::snprintf(buf, sizeof buf, "%.1fB", static_cast<double>(n) / 1e9);
    else std::snprintf(buf, sizeof buf, "%.0fM", static_cast<double>(n) / 1e6);
    return buf;
}

std::string upper(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--n-prompt", "-p", true, "N  prompt tokens for the pp test (default 512; 0 skips it)"},
        {"--n-gen", "-n", true, "N  generated tokens for the tg test (default 128; 0 skips it)"},
        {"--n-depth", "-d", true, "N  run both tests after N tokens already in the cache (llama-bench's -d; default 0)"},
        {"--repetitions", "-r", true, "N  timed runs per test after a warm-up (default 5)"},
        {"--batch", "-b", true, "LIST  batch sizes, e.g. 1,2,4,8,16,32: one throughput row each (all prompts, then all decode together)"},
        {"--json", "", false, "print a JSON array of rows (llama-bench field names)"},
        db_flag(),
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
    const std::string model_type = info.arch + " " + params_label(info.n_params) + " " + upper(info.weight_type);
    auto recorder = HistoryRecorder::open_if_asked(ctx.args, engine, ctx.config);
    if (!batches.empty()) return bench_batch_sweep(engine, batches, n_prompt, n_gen, reps_sweep, json, model_type, recorder.get());
    // One warm-up, then `reps` timed runs from an empty cache (workbench/measure.h, shared with
    // the GUI's Benchmark page).
    // For tg, `probe_gb_s` gets one bandwidth measurement before each timed run (after the
    // warm-up and after each run but the last), so each run is judged against the machine as it
    // was that moment: on a shared host the probe itself moves by a third between minutes.
    auto run_test = [&](workbench::SpeedTestKind kind, int n_tokens, Row& r, std::vector<double>* probe_gb_s) -> workbench::Status {
        uint64_t rss = 0;
        auto test = workbench::measure_speed(
            engine, kind, n_tokens, reps, 1234, [&](int64_t done, int64_t total) {
                if (!json) std::cerr << "." << std::flush;
                rss = std::max(rss, workbench::process_resident_bytes());  // before a probe allocates
                if (probe_gb_s && done < total)
                    probe_gb_s->push_back(workbench::measure_read_bandwidth_gb_s(info.decode_weight_bytes, info.n_threads, 5, 100));
            },
            nullptr, n_depth);
        if (!test.ok()) return test.status();
        r.test = test->test;
        r.n_depth = n_depth;
        r.samples_ts = test->samples_tok_s;
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
        r.n_prompt = n_prompt;
        if (auto s = run_test(workbench::SpeedTestKind::prompt, n_prompt, r, nullptr); !s.ok()) return runtime_error(s.message());
        rows.push_back(r);
    }
    if (n_gen > 0) {
        Row r;
        r.n_gen = n_gen;
        std::vector<double> probes;
        if (auto s = run_test(workbench::SpeedTestKind::generation, n_gen, r, &probes); !s.ok()) return runtime_error(s.message());
        // Bytes per decoded token: every weight matrix once, plus the KV read at the mean context.
        const double kv_read = static_cast<double>(info.kv_bytes_per_token) * (n_depth + (n_gen + 1) / 2.0);
        const double bytes_per_token = static_cast<double>(info.decode_weight_bytes) + kv_read;
        r.gb_s = bytes_per_token * r.avg_ts / 1e9;
        // Roofline share: the median over runs of each run's rate against the probe just before it.
        std::vector<double> shares;
        for (size_t i = 0; i < r.samples_ts.size() && i < probes.size(); ++i)
            if (probes[i] > 0) shares.push_back(100.0 * bytes_per_token * r.samples_ts[i] / 1e9 / probes[i]);
        r.roofline_pct = median(shares);
        if (!json)
            std::cerr << "\nread bandwidth at the weights' working set (" << format_bytes(info.decode_weight_bytes) << ", "
                      << info.n_threads << " threads), probed before each tg run: median " << median(probes) << " GB/s (min "
                      << (probes.empty() ? 0.0 : *std::min_element(probes.begin(), probes.end())) << ", max "
                      << (probes.empty() ? 0.0 : *std::max_element(probes.begin(), probes.end())) << ")";
        rows.push_back(r);
    }

    auto label = [](const Row& r) { return r.test + (r.n_depth > 0 ? " @ d" + std::to_string(r.n_depth) : std::string()); };
    auto row_json = [&](const Row& r) {
        JsonWriter j;
        j.begin_object();
        j.key("test").value(r.test).key("n_prompt").value(r.n_prompt).key("n_gen").value(r.n_gen).key("n_depth").value(r.n_depth);
        j.key("n_threads").value(info.n_threads).key("avg_ts").value(r.avg_ts).key("stddev_ts").value(r.stddev_ts);
        j.key("samples_ts").begin_array();
        for (double v : r.samples_ts) j.value(v);
        j.end_array();
        j.key("model_type").value(model_type).key("model_size").value(info.weight_bytes).key("model_n_params").value(info.n_params);
        j.key("backend").value("CPU").key("build_commit").value(workbench::engine_version());
        j.key("rss_bytes").value(r.rss_bytes);
        j.key("cpu_info").value(info.cpu_features).key("kernels").value(info.cpu_kernels);
        if (r.n_gen > 0) j.key("gb_s").value(r.gb_s).key("roofline_pct").value(r.roofline_pct);
        else j.key("gb_s").null().key("roofline_pct").null();
        j.end_object();
        return j.str();
    };
    std::vector<std::string> objects;
    for (const auto& r : rows) objects.push_back(row_json(r));
    if (recorder) {
        for (size_t i = 0; i < rows.size(); ++i)
            recorder->save_benchmark(label(rows[i]), rows[i].n_prompt, rows[i].n_gen, 1, info.n_threads,
                                     rows[i].avg_ts, rows[i].stddev_ts, objects[i]);
        recorder->finish();
    }
    if (json) {
        print_json_array(objects);
        return 0;
    }
    std::cerr << "\nCPU: " << info.cpu_features << "; kernels: " << info.cpu_kernels << "\n";
    std::printf("| model | size | params | backend | threads | test | t/s | GB/s | roofline | RSS |\n");
    std::printf("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& r : rows) {
        std::printf("| %s | %s | %.2f M | CPU | %d | %s | %.2f ± %.2f |", model_type.c_str(), format_bytes(info.weight_bytes).c_str(),
                    static_cast<double>(info.n_params) / 1e6, info.n_threads,
                    label(r).c_str(), r.avg_ts, r.stddev_ts);
        if (r.n_gen > 0) std::printf(" %.1f | %.0f%% |", r.gb_s, r.roofline_pct);
        else std::printf(" | |");
        std::printf(" %s |\n", format_bytes(r.rss_bytes).c_str());
    }
    return 0;
}

}  // namespace wbcli
