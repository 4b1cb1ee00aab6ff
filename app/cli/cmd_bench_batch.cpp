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
#include "workbench/bench_row.h"
#include "workbench/measure.h"

namespace wbcli {
namespace {

struct SweepRow {
    workbench::BenchRow bench;
    workbench::MeanStddev total_tok_s;
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double mean(const std::vector<double>& v) { return workbench::mean_stddev(v).mean; }

}  // namespace

int bench_batch_sweep(workbench::Engine& engine, const std::vector<int>& batches, int n_prompt, int n_gen, int reps, bool json,
                      const std::string& model_type, HistoryRecorder* recorder) {
    const auto& info = engine.model_info();
    uint32_t seed = 1234;   // every run's prompts differ: no prefix is shared between runs
    if (auto warm = workbench::measure_batch_throughput(engine, 1, n_prompt, std::min(n_gen, 8), seed++); !warm.ok())
        return runtime_error(warm.status().message());
    const std::string test = "pp" + std::to_string(n_prompt) + "+tg" + std::to_string(n_gen);
    std::vector<SweepRow> rows;
    for (int b : batches) {
        SweepRow row;
        workbench::BenchRow& bench = row.bench;
        bench.test = test;
        bench.n_prompt = n_prompt;
        bench.n_gen = n_gen;
        bench.batch = b;
        bench.test_time_unix_ms = workbench::unix_time_ms();
        std::vector<double> pp, tg, tpot;
        uint64_t kv_bytes_peak = 0;
        for (int r = 0; r < reps; ++r) {
            auto run = workbench::measure_batch_throughput(engine, b, n_prompt, n_gen, seed++);
            if (!run.ok()) return runtime_error(run.status().message());
            bench.samples_ts.push_back(run->total_tok_s);
            bench.n_batch = run->max_batch_tokens;
            pp.push_back(run->pp_tok_s);
            tg.push_back(run->tg_tok_s);
            tpot.push_back(run->decode_step_ms_p50);
            kv_bytes_peak = std::max(kv_bytes_peak, run->kv_bytes_peak);
            if (!json) std::cerr << "." << std::flush;
        }
        bench.pp_tok_s = mean(pp);
        bench.tg_tok_s = mean(tg);
        bench.tpot_ms_p50 = median(tpot);
        bench.kv_bytes_peak = kv_bytes_peak;
        bench.rss_bytes = workbench::process_resident_bytes();
        row.total_tok_s = workbench::mean_stddev(bench.samples_ts);
        rows.push_back(row);
    }
    workbench::Json objects = workbench::Json::array();
    for (const auto& r : rows) objects.push_back(workbench::bench_row_json(r.bench, info));
    if (recorder) {
        for (size_t i = 0; i < rows.size(); ++i)
            recorder->save_benchmark(test, n_prompt, n_gen, rows[i].bench.batch, info.n_threads, rows[i].total_tok_s.mean,
                                     rows[i].total_tok_s.stddev, workbench::dump_json(objects[i]));
        recorder->finish();
    }
    if (json) {
        print_json_line(objects);
        return 0;
    }
    std::cerr << "\nCPU: " << info.cpu_features << "; " << info.n_threads << " threads; " << model_type << "; attention " << info.attention
              << ", KV " << info.kv_types << "\n";
    std::printf("| batch | PP | TG | pp t/s | tg t/s (all sequences) | decode step p50 ms | total t/s | KV peak |\n");
    std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& r : rows)
        std::printf("| %d | %d | %d | %.1f | %.1f | %.2f | %.1f ± %.1f | %s |\n", r.bench.batch, n_prompt, n_gen, *r.bench.pp_tok_s,
                    *r.bench.tg_tok_s, *r.bench.tpot_ms_p50, r.total_tok_s.mean, r.total_tok_s.stddev,
                    format_bytes(*r.bench.kv_bytes_peak).c_str());
    return 0;
}

}  // namespace wbcli
