// The server's /metrics: the loop's counters and gauges, and latency histograms of finished
// requests, in Prometheus' text format with vLLM's names under our prefix ("workbench:").
// Thread-safe: the engine's thread records, HTTP threads render.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "workbench/metrics.h"
#include "workbench/request.h"

namespace wbserver {

class Histogram {
public:
    explicit Histogram(std::vector<double> upper_bounds);
    void observe(double value);
    // Lines of `name`'s buckets (cumulative, then +Inf), _sum and _count, with `labels` ("a=\"b\"").
    std::string render(const std::string& name, const std::string& labels) const;

private:
    std::vector<double> bounds_;
    std::vector<uint64_t> counts_;   // per bucket, the last for +Inf
    double sum_ = 0;
    uint64_t count_ = 0;
};

class ServerMetrics {
public:
    explicit ServerMetrics(std::string model_name);
    // The engine's thread: after each step, and for each finished completion.
    void record_step(const workbench::StepReport& step, const workbench::LoopCounters& counters);
    void record_finished(const workbench::RequestMetrics& m);
    void set_model_name(std::string model_name);
    std::string render() const;

    // For the GUI and tests as well as /metrics.
    struct Snapshot {
        int32_t n_running = 0, n_waiting = 0;
        uint64_t kv_bytes_in_use = 0, kv_bytes_allocated = 0;
        workbench::LoopCounters counters;
    };
    Snapshot snapshot() const;

private:
    mutable std::mutex mutex_;
    std::string model_name_;
    Snapshot now_;
    Histogram ttft_, answer_, tpot_, itl_, e2e_, queue_;
};

}  // namespace wbserver
