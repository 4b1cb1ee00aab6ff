// What a server's /metrics says of its KV cache while it runs, in each engine's spelling: ours
// (workbench:kv_cache_usage_bytes), llama.cpp's (llamacpp:kv_cache_tokens, in the builds that
// still export it), vLLM's (vllm:kv_cache_usage_perc, or gpu_cache_usage_perc before v1, times
// the pool that vllm:cache_config_info describes, whose cache_dtype is also its KV type) and
// SGLang's (sglang:num_used_tokens). A probe polls it beside a run and keeps the peak, so a
// remote row's measured bytes stand beside its predicted ones.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "openai_client.h"

namespace wbremote {

struct KvMetricsReading {
    std::optional<double> bytes;    // held now (ours)
    std::optional<double> tokens;   // held now (llama.cpp, SGLang; vLLM: usage × blocks × block size)
    std::string cache_dtype;        // vLLM's --kv-cache-dtype as its cache_config_info says ("auto", "fp8", …)
    bool any() const { return bytes || tokens; }
};

// Reads the KV figures out of Prometheus text; a reading with nothing set when none is there.
KvMetricsReading parse_kv_metrics(std::string_view prometheus_text);

// Our KV type for vLLM's cache_dtype: "fp8" for its fp8 spellings; empty for "auto" (the model's
// own dtype, which /metrics does not say) and anything else.
std::string kv_type_of_cache_dtype(const std::string& cache_dtype);

// Polls `endpoint`'s /metrics every `period_ms` on a thread of its own from construction until
// stop(), keeping the largest bytes and tokens seen.
class KvMetricsProbe {
public:
    KvMetricsProbe(const RemoteEndpoint& endpoint, int period_ms = 50);
    ~KvMetricsProbe();
    KvMetricsProbe(const KvMetricsProbe&) = delete;
    KvMetricsProbe& operator=(const KvMetricsProbe&) = delete;
    // Stops polling (once) and returns the peaks; what a reading never had stays unset.
    KvMetricsReading stop();

private:
    void poll(const RemoteEndpoint& endpoint, int period_ms);
    std::atomic<bool> stop_{false};
    KvMetricsReading peak_;   // written by the thread until it is joined
    std::thread thread_;
};

}  // namespace wbremote
