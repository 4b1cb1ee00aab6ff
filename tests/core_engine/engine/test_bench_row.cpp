// bench_row_json: llama-bench's fields in llama-bench's order (so our rows and `llama-bench -o
// json` rows line up column for column), the mean, spread and nanosecond figures derived from the
// runs the way llama-bench derives them, and the workbench's extras after them.
#include <QTest>

#include <cmath>

#include "workbench/bench_row.h"

using namespace workbench;

namespace {

// tools/llama-bench's test record, field by field (its JSON printer writes them in this order).
const std::vector<std::string> kLlamaBenchFields = {
    "build_commit", "build_number", "cpu_info",   "gpu_info",   "backends",   "model_filename", "model_type",
    "model_size",   "model_n_params", "n_batch",  "n_ubatch",   "n_threads",  "cpu_mask",       "cpu_strict",
    "poll",         "type_k",       "type_v",     "n_gpu_layers", "split_mode", "main_gpu",     "no_kv_offload",
    "flash_attn",   "tensor_split", "use_mmap",   "embeddings", "n_prompt",   "n_gen",          "n_depth",
    "test_time",    "avg_ns",       "stddev_ns",  "avg_ts",     "stddev_ts",  "samples_ns",     "samples_ts"};

ModelInfo sample_info() {
    ModelInfo info;
    info.path = "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
    info.arch = "llama";
    info.n_params = 134515008;
    info.weight_bytes = 85000000;
    info.weight_type = "q4_1";
    info.n_threads = 2;
    info.kv_types = "k=q8_0,v=q4_0";
    info.attention = "full";
    info.cpu_features = "AVX2 FMA F16C";
    info.cpu_kernels = "avx2";
    return info;
}

}  // namespace

class TestBenchRow : public QObject {
    Q_OBJECT
private slots:
    void fields_come_in_llama_bench_order_then_ours() {
        BenchRow row;
        row.test = "pp512";
        row.n_prompt = 512;
        row.n_batch = 512;
        row.samples_ts = {400, 500};
        const Json j = bench_row_json(row, sample_info());
        std::vector<std::string> keys;
        for (const auto& [key, value] : j.items()) keys.push_back(key);
        QVERIFY(keys.size() > kLlamaBenchFields.size());
        QVERIFY(std::equal(kLlamaBenchFields.begin(), kLlamaBenchFields.end(), keys.begin()));
        for (const char* ours : {"test", "batch", "attention", "kv_type", "cpu_features", "kernels", "gb_s", "roofline_pct",
                                 "pp_tok_s", "tg_tok_s", "tpot_ms_p50", "kv_bytes_peak", "rss_bytes"})
            QVERIFY2(j.contains(ours), ours);
    }

    void figures_follow_from_the_runs() {
        BenchRow row;
        row.test = "tg128";
        row.n_gen = 128;
        row.n_batch = 1;
        row.samples_ts = {100, 120, 110};
        row.test_time_unix_ms = 1764547200123;
        const Json j = bench_row_json(row, sample_info());
        QCOMPARE(j["avg_ts"].get<double>(), 110.0);
        QCOMPARE(j["stddev_ts"].get<double>(), 10.0);  // sample standard deviation (n − 1), as llama-bench
        QCOMPARE(j["samples_ts"].size(), size_t(3));
        // 128 tokens at 100 t/s: 1.28 s.
        QCOMPARE(j["samples_ns"][0].get<int64_t>(), int64_t(1280000000));
        const double mean_ns = (128e9 / 100 + 128e9 / 120 + 128e9 / 110) / 3;
        QVERIFY(std::fabs(j["avg_ns"].get<double>() - mean_ns) <= 1);
        QCOMPARE(j["test_time"].get<std::string>(), std::string("2025-12-01T00:00:00Z"));
        QCOMPARE(j["type_k"].get<std::string>(), std::string("q8_0"));
        QCOMPARE(j["type_v"].get<std::string>(), std::string("q4_0"));
        QCOMPARE(j["model_type"].get<std::string>(), std::string("llama 135M Q4_1"));
        QCOMPARE(j["model_filename"].get<std::string>(), sample_info().path);
        QCOMPARE(j["n_ubatch"].get<int>(), 1);
        QVERIFY(j["gb_s"].is_null() && j["kv_bytes_peak"].is_null());
    }

    void one_run_has_no_spread_and_a_batch_point_counts_every_sequence() {
        BenchRow row;
        row.test = "pp64+tg16";
        row.n_prompt = 64;
        row.n_gen = 16;
        row.batch = 4;
        row.n_batch = 512;
        row.samples_ts = {800};
        row.pp_tok_s = 1200;
        row.kv_bytes_peak = 1u << 20;
        const Json j = bench_row_json(row, sample_info());
        QCOMPARE(j["stddev_ts"].get<double>(), 0.0);
        QCOMPARE(bench_row_tokens(row), int64_t(320));
        QCOMPARE(j["samples_ns"][0].get<int64_t>(), int64_t(400000000));  // 320 tokens at 800 t/s
        QCOMPARE(j["n_ubatch"].get<int>(), 256);
        QCOMPARE(j["pp_tok_s"].get<double>(), 1200.0);
        QCOMPARE(j["kv_bytes_peak"].get<uint64_t>(), uint64_t(1u << 20));
        QCOMPARE(j["batch"].get<int>(), 4);
    }
};

QTEST_APPLESS_MAIN(TestBenchRow)
#include "test_bench_row.moc"
