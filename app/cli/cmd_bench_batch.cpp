// `bench -b 1,2,4,...`: the throughput-vs-latency curve. For each batch size B, B sequences of
// -p random tokens are prefilled (in steps of up to 512 tokens), then all B decode -n tokens
// together, as llama-batched-bench does: pp_tok_s = B·p / prefill time, tg_tok_s = B·n / decode
// time (aggregate over the batch), tpot_ms_p50 = the median decode step (each sequence gets one
// token per step). Runs go through the engine's continuous-batching loop.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>

#include "commands.h"
#include "json_writer.h"

namespace wbcli {
namespace {

struct SweepRun {
    double t_pp_s = 0, t_tg_s = 0, tpot_ms_p50 = 0;
    uint64_t kv_bytes_peak = 0;
};

struct SweepRow {
    int batch = 0;
    std::vector<SweepRun> runs;
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

workbench::Result<SweepRun> run_once(workbench::Engine& engine, int batch, int n_prompt, int n_gen, std::mt19937& rng) {
    const int32_t n_vocab = engine.model_info().n_vocab;
    std::vector<workbench::BatchRequest> reqs(static_cast<size_t>(batch));
    for (auto& r : reqs) {
        r.prompt.resize(static_cast<size_t>(n_prompt));
        for (auto& t : r.prompt) t = static_cast<workbench::TokenId>(rng() % static_cast<unsigned>(n_vocab));
        r.generation.max_tokens = n_gen + 1;   // the first token comes from the prefill; n decode steps follow
        r.generation.ignore_eos = true;
        r.generation.sampling.temperature = 0;
    }
    workbench::BatchOptions o;
    o.max_running = batch;
    o.max_batch_tokens = std::max(512, batch);
    o.prefill_before_decode = true;
    std::vector<double> steps;
    double first_token_last = 0, last_token = 0;
    std::vector<bool> started(static_cast<size_t>(batch), false);
    auto res = engine.run_batch(reqs, o, [&](const workbench::BatchEvent& ev) {
        if (ev.kind == workbench::BatchEvent::Kind::step) steps.push_back(ev.t_ms);
        if (ev.kind != workbench::BatchEvent::Kind::token) return;
        if (!started[static_cast<size_t>(ev.request)]) started[static_cast<size_t>(ev.request)] = true, first_token_last = ev.t_ms;
        last_token = ev.t_ms;
    });
    if (!res.ok()) return res.status();
    for (const auto& c : res->completions)
        if (!c.ok) return workbench::error(workbench::StatusCode::internal, "bench: a sequence failed: " + c.error);
    if (res->metrics.n_preemptions > 0)
        return workbench::error(workbench::StatusCode::resource_exhausted, "bench: the KV pool ran out at batch " + std::to_string(batch) +
                                                                              " (raise --kv-budget or lower -p/-n)");
    SweepRun run;
    run.t_pp_s = first_token_last / 1000.0;
    run.t_tg_s = (last_token - first_token_last) / 1000.0;
    std::vector<double> decode_steps;
    for (size_t i = 1; i < steps.size(); ++i)
        if (steps[i - 1] >= first_token_last) decode_steps.push_back(steps[i] - steps[i - 1]);
    run.tpot_ms_p50 = median(decode_steps);
    run.kv_bytes_peak = res->metrics.kv_bytes_peak;
    return run;
}

}  // namespace

int bench_batch_sweep(workbench::Engine& engine, const std::vector<int>& batches, int n_prompt, int n_gen, int reps, bool json,
                      const std::string& model_type) {
    const auto& info = engine.model_info();
    std::mt19937 rng(1234);
    if (auto warm = run_once(engine, 1, n_prompt, std::min(n_gen, 8), rng); !warm.ok()) return runtime_error(warm.status().message());
    std::vector<SweepRow> rows;
    for (int b : batches) {
        SweepRow row;
        row.batch = b;
        for (int r = 0; r < reps; ++r) {
            auto run = run_once(engine, b, n_prompt, n_gen, rng);
            if (!run.ok()) return runtime_error(run.status().message());
            row.runs.push_back(*run);
            row.samples_ts.push_back(static_cast<double>(b) * (n_prompt + n_gen) / (run->t_pp_s + run->t_tg_s));
            if (!json) std::cerr << "." << std::flush;
        }
        std::vector<double> pp, tg, tpot;
        for (const auto& run : row.runs) {
            pp.push_back(b * n_prompt / run.t_pp_s);
            tg.push_back(n_gen > 0 ? b * n_gen / run.t_tg_s : 0);
            tpot.push_back(run.tpot_ms_p50);
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
    if (json) {
        JsonWriter j;
        j.begin_array();
        for (const auto& r : rows) {
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
        }
        j.end_array();
        std::cout << j.str() << "\n";
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
