// `bench -b 1,2,4,...`: the throughput-vs-latency curve. For each batch size B, B sequences of
// -p random tokens are prefilled (in steps of up to 512 tokens), then all B decode -n tokens
// together, as llama-batched-bench does: pp_tok_s = B·p / prefill time, tg_tok_s = B·n / decode
// time (aggregate over the batch), tpot_ms_p50 = the median decode step (each sequence gets one
// token per step). Each point is measure_batch_throughput (workbench/measure.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>

#include "commands.h"
#include "history_recorder.h"
#include "json_writer.h"
#include "workbench/measure.h"

namespace wbcli {
namespace {

struct SweepRow {
    int batch = 0;
    std::vector<workbench::ThroughputPoint> runs;
    double pp_tok_s = 0, tg_tok_s = 0, tpot_ms_p50 = 0, avg_ts = 0, stddev_ts = 0;
    std::vector<double> samples_ts;
    uint64_t kv_bytes_peak = 0, rss_bytes = 0;
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int bench_batch_sweep(workbench::Engine& engine, const std::vector<int>& batches, int n_prompt, int n_gen, int reps, bool json,
                      const std::string& model_type, HistoryRecorder* recorder) {
    const auto& info = engine.model_info();
    uint32_t seed = 1234;   // every run's prompts differ: no prefix is shared between runs
    if (auto warm = workbench::measure_batch_throughput(engine, 1, n_prompt, std::min(n_gen, 8), seed++); !warm.ok())
        return runtime_error(warm.status().message());
    std::vector<SweepRow> rows;
    for (int b : batches) {
        SweepRow row;
        row.batch = b;
        for (int r = 0; r < reps; ++r) {
            auto run = workbench::measure_batch_throughput(engine, b, n_prompt, n_gen, seed++);
            if (!run.ok()) return runtime_error(run.status().message());
            row.runs.push_back(*run);
            row.samples_ts.push_back(run->total_tok_s);
            if (!json) std::cerr << "." << std::flush;
        }
        std::vector<double> pp, tg, tpot;
        for (const auto& run : row.runs) {
            pp.push_back(run.pp_tok_s);
            tg.push_back(run.tg_tok_s);
            tpot.push_back(run.decode_step_ms_p50);
            row.kv_bytes_peak = std::max(row.kv_bytes_peak, run.kv_bytes_peak);
        }
        auto mean = [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return s / static_cast<double>(v.size()); };
        row.pp_tok_s = mean(pp);
        row.tg_tok_s = mean(tg);
        row.tpot_ms_p50 = median(tpot);
        row.avg_ts = mean(row.samples_ts);
        double var = 0;
        for (double x : row.samples_ts) var += (x - row.avg_ts) * (x - row.avg_ts);
        row.stddev_ts = row.samples_ts.size() > 1 ? std::sqrt(var / static_cast<double>(row.samples_ts.size() - 1)) : 0;
        row.rss_bytes = workbench::process_resident_bytes();
        rows.push_back(row);
    }
    const std::string test = "pp" + std::to_string(n_prompt) + "+tg" + std::to_string(n_gen);
    auto row_json = [&](const SweepRow& r) {
        JsonWriter j;
        j.begin_object();
        j.key("test").value(test).key("n_prompt").value(n_prompt).key("n_gen").value(n_gen).key("batch").value(r.batch);
        j.key("n_threads").value(info.n_threads).key("avg_ts").value(r.avg_ts).key("stddev_ts").value(r.stddev_ts);
        j.key("samples_ts").begin_array();
        for (double v : r.samples_ts) j.value(v);
        j.end_array();
        j.key("pp_tok_s").value(r.pp_tok_s).key("tg_tok_s").value(r.tg_tok_s).key("tpot_ms_p50").value(r.tpot_ms_p50);
        j.key("model_type").value(model_type).key("model_size").value(info.weight_bytes).key("model_n_params").value(info.n_params);
        j.key("backend").value("CPU").key("build_commit").value(workbench::engine_version());
        j.key("kv_bytes_peak").value(r.kv_bytes_peak).key("rss_bytes").value(r.rss_bytes);
        j.key("attention").value(info.attention).key("kv_type").value(info.kv_types);
        j.end_object();
        return j.str();
    };
    std::vector<std::string> objects;
    for (const auto& r : rows) objects.push_back(row_json(r));
    if (recorder) {
        for (size_t i = 0; i < rows.size(); ++i)
            recorder->save_benchmark(test, n_prompt, n_gen, rows[i].batch, info.n_threads,
                                     rows[i].avg_ts, rows[i].stddev_ts, objects[i]);
        recorder->finish();
    }
    if (json) {
        print_json_array(objects);
        return 0;
    }
    std::cerr << "\nCPU: " << info.cpu_features << "; " << info.n_threads << " threads; " << model_type << "; attention " << info.attention
              << ", KV " << info.kv_types << "\n";
    std::printf("| batch | PP | TG | pp t/s | tg t/s (all sequences) | decode step p50 ms | total t/s | KV peak |\n");
    std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& r : rows)
        std::printf("| %d | %d | %d | %.1f | %.1f | %.2f | %.1f ± %.1f | %s |\n", r.batch, n_prompt, n_gen, r.pp_tok_s, r.tg_tok_s,
                    r.tpot_ms_p50, r.avg_ts, r.stddev_ts, format_bytes(r.kv_bytes_peak).c_str());
    return 0;
}

}  // namespace wbcli
