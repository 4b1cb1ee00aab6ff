// Prometheus text exposition (version 0.0.4) of the serving figures. Buckets follow vLLM's, so a
// dashboard made for vLLM reads ours after swapping the prefix.
#include "server_metrics.h"

#include <algorithm>
#include <cstdio>

namespace wbserver {
namespace {

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// A label value: backslash, double quote and newline escaped.
std::string label_value(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

// A gauge or counter: its HELP and TYPE lines, then its one sample.
void metric(std::string& out, const char* name, const char* type, const char* help, const std::string& labels, double value) {
    header(out, name, type, help);
    out += std::string(name) + "{" + labels + "} " + number(value) + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
    const size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
    ++counts_[i];
    sum_ += value;
    ++count_;
}

std::string Histogram::render(const std::string& name, const std::string& labels) const {
    std::string out;
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
        cumulative += counts_[i];
        const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
        out += name + "_bucket{" + labels + ",le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += name + "_sum{" + labels + "} " + number(sum_) + "\n";
    out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
    return out;
}

ServerMetrics::ServerMetrics(std::string model_name)
    : model_name_(std::move(model_name)),
      ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}),
      answer_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}),
      tpot_({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      itl_({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      e2e_({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}),
      queue_({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}) {}

void ServerMetrics::set_model_name(std::string model_name) {
    std::lock_guard lock(mutex_);
    model_name_ = std::move(model_name);
}

void ServerMetrics::record_step(const workbench::StepReport& step, const workbench::LoopCounters& counters) {
    std::lock_guard lock(mutex_);
    now_.n_running = step.n_running;
    now_.n_waiting = step.n_waiting;
    now_.kv_bytes_in_use = step.kv_bytes_in_use;
    now_.kv_bytes_allocated = step.kv_bytes_allocated;
    now_.counters = counters;
}

void ServerMetrics::record_finished(const workbench::RequestMetrics& m) {
    std::lock_guard lock(mutex_);
    e2e_.observe(m.e2e_ms / 1000.0);
    queue_.observe(m.queue_ms / 1000.0);
    if (m.n_output_tokens == 0) return;
    ttft_.observe(m.ttft_ms / 1000.0);
    if (m.first_answer_ms) answer_.observe(*m.first_answer_ms / 1000.0);
    if (m.tpot_ms) tpot_.observe(*m.tpot_ms / 1000.0);
    for (double gap : m.itl_ms) itl_.observe(gap / 1000.0);
}

ServerMetrics::Snapshot ServerMetrics::snapshot() const {
    std::lock_guard lock(mutex_);
    return now_;
}

std::string ServerMetrics::render() const {
    std::lock_guard lock(mutex_);
    const std::string labels = "model_name=\"" + label_value(model_name_) + "\"";
    const workbench::LoopCounters& c = now_.counters;
    std::string out;
    metric(out, "workbench:num_requests_running", "gauge", "Sequences in the running batch (completions; n > 1 counts each).", labels, now_.n_running);
    metric(out, "workbench:num_requests_waiting", "gauge", "Sequences waiting to be scheduled.", labels, now_.n_waiting);
    const double kv_share =
        now_.kv_bytes_allocated ? static_cast<double>(now_.kv_bytes_in_use) / static_cast<double>(now_.kv_bytes_allocated) : 0.0;
    metric(out, "workbench:kv_cache_usage_perc", "gauge", "KV-cache usage: 1 means the pool is full.", labels, kv_share);
    metric(out, "workbench:kv_cache_usage_bytes", "gauge", "KV-cache bytes held by sequences.", labels, static_cast<double>(now_.kv_bytes_in_use));
    metric(out, "workbench:prefix_cache_queries_total", "counter", "Prompt tokens looked up in the prefix cache.", labels, static_cast<double>(c.prefix_cache_queries));
    metric(out, "workbench:prefix_cache_hits_total", "counter", "Prompt tokens found in the prefix cache.", labels, static_cast<double>(c.prefix_cache_hits));
    metric(out, "workbench:prompt_tokens_total", "counter", "Prompt tokens processed.", labels, static_cast<double>(c.n_prompt_tokens));
    metric(out, "workbench:generation_tokens_total", "counter", "Tokens generated.", labels, static_cast<double>(c.n_generation_tokens));
    metric(out, "workbench:request_success_total", "counter", "Completions finished.", labels, static_cast<double>(c.n_requests_finished));
    metric(out, "workbench:num_preemptions_total", "counter", "Sequences paused for KV room and recomputed.", labels, static_cast<double>(c.n_preemptions));
    metric(out, "workbench:spec_decode_num_draft_tokens_total", "counter", "Speculative decoding: drafted tokens verified.", labels, static_cast<double>(c.n_draft_tokens));
    metric(out, "workbench:spec_decode_num_accepted_tokens_total", "counter", "Speculative decoding: drafted tokens accepted.", labels, static_cast<double>(c.n_accepted_tokens));
    header(out, "workbench:time_to_first_token_seconds", "histogram", "Arrival to first token, queueing included.");
    out += ttft_.render("workbench:time_to_first_token_seconds", labels);
    header(out, "workbench:time_to_first_answer_token_seconds", "histogram", "Arrival to the answer's first token, after any thinking.");
    out += answer_.render("workbench:time_to_first_answer_token_seconds", labels);
    header(out, "workbench:time_per_output_token_seconds", "histogram", "Per completion: (e2e - ttft) / (tokens - 1).");
    out += tpot_.render("workbench:time_per_output_token_seconds", labels);
    header(out, "workbench:inter_token_latency_seconds", "histogram", "Every gap between consecutive tokens.");
    out += itl_.render("workbench:inter_token_latency_seconds", labels);
    header(out, "workbench:e2e_request_latency_seconds", "histogram", "Arrival to last token.");
    out += e2e_.render("workbench:e2e_request_latency_seconds", labels);
    header(out, "workbench:request_queue_time_seconds", "histogram", "Arrival to first scheduled.");
    out += queue_.render("workbench:request_queue_time_seconds", labels);
    return out;
}

}  // namespace wbserver
