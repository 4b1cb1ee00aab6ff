// The KV gauges of each engine's /metrics as they write them (ours, llama.cpp, vLLM before and
// after v1 with its cache_config_info, SGLang), read into bytes or tokens; text without them, or
// malformed lines, read as nothing; the probe keeps the peak a server showed while it was polled.
#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>

#include "remote/remote_kv_metrics.h"
#include "tests/remote/loopback_http.h"

using namespace wbremote;

class TestRemoteKvMetrics : public QObject {
    Q_OBJECT
private slots:
    void each_engines_spelling() {
        const KvMetricsReading ours = parse_kv_metrics(
            "# HELP workbench:kv_cache_usage_bytes KV-cache bytes held by sequences.\n"
            "# TYPE workbench:kv_cache_usage_bytes gauge\n"
            "workbench:kv_cache_usage_bytes{model_name=\"SmolLM2\"} 3932160\n"
            "workbench:kv_cache_usage_perc{model_name=\"SmolLM2\"} 0.5\n");
        QCOMPARE(ours.bytes.value_or(-1), 3932160.0);
        QVERIFY(!ours.tokens);

        const KvMetricsReading llama = parse_kv_metrics("llamacpp:kv_cache_usage_ratio 0.25\r\nllamacpp:kv_cache_tokens 1234\r\n");
        QCOMPARE(llama.tokens.value_or(-1), 1234.0);
        QVERIFY(!llama.bytes);

        // vLLM: the share of its pool in use times the pool's blocks and block size; its
        // cache_dtype is its KV type. Label values may hold commas and escaped quotes.
        const KvMetricsReading vllm = parse_kv_metrics(
            "vllm:cache_config_info{block_size=\"16\",cache_dtype=\"fp8_e4m3\",note=\"a, \\\"b\\\"\",num_gpu_blocks=\"1000\"} 1.0\n"
            "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.125\n");
        QCOMPARE(vllm.tokens.value_or(-1), 2000.0);
        QCOMPARE(vllm.cache_dtype, std::string("fp8_e4m3"));
        QCOMPARE(kv_type_of_cache_dtype(vllm.cache_dtype), std::string("fp8"));
        QCOMPARE(kv_type_of_cache_dtype("auto"), std::string());
        const KvMetricsReading old_vllm = parse_kv_metrics(
            "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\nvllm:cache_config_info{block_size=\"32\",num_gpu_blocks=\"10\"} 1\n");
        QCOMPARE(old_vllm.tokens.value_or(-1), 160.0);
        // Without the pool's size the share alone says no count.
        QVERIFY(!parse_kv_metrics("vllm:kv_cache_usage_perc 0.5\n").any());

        const KvMetricsReading sglang = parse_kv_metrics("sglang:num_used_tokens{model_name=\"m\"} 777 1700000000000\n");
        QCOMPARE(sglang.tokens.value_or(-1), 777.0);
    }

    void nothing_from_other_or_broken_text() {
        QVERIFY(!parse_kv_metrics("").any());
        QVERIFY(!parse_kv_metrics("process_cpu_seconds_total 12.5\nllamacpp:requests_processing 1\n").any());
        for (const char* broken : {"workbench:kv_cache_usage_bytes{model_name=\"x 12\n", "workbench:kv_cache_usage_bytes twelve\n",
                                   "workbench:kv_cache_usage_bytes{a=b} 12\n", "llamacpp:kv_cache_tokens\n", "{}}} 1\n",
                                   "llamacpp:kv_cache_tokens NaN\n", "workbench:kv_cache_usage_bytes +Inf\n", "sglang:num_used_tokens -5\n"})
            QVERIFY2(!parse_kv_metrics(broken).any(), broken);
    }

    void the_probe_keeps_the_peak() {
        std::atomic<int> calls{0};
        wbtest::LoopbackHttp server;
        // Held bytes rise to 3000 and fall back, as a request's sequence does.
        server.http.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
            const int n = calls++;
            const int held = n < 3 ? 1000 * (n + 1) : 0;
            res.set_content("workbench:kv_cache_usage_bytes " + std::to_string(held) + "\n", "text/plain");
        });
        server.start();
        KvMetricsProbe probe(RemoteEndpoint{server.url(), "", 5, 60}, 5);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (calls.load() < 5 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const KvMetricsReading peak = probe.stop();
        QVERIFY(calls.load() >= 5);
        QCOMPARE(peak.bytes.value_or(-1), 3000.0);
        QVERIFY(!peak.tokens);
    }
};

QTEST_APPLESS_MAIN(TestRemoteKvMetrics)
#include "test_remote_kv_metrics.moc"
