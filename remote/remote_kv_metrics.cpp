// Prometheus text read line by line: `name{label="value",…} number`; only the KV gauges matter.
#include "remote_kv_metrics.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>

namespace wbremote {
namespace {

struct Sample {
    std::string_view name;
    std::map<std::string, std::string, std::less<>> labels;
    double value = 0;
};

std::optional<Sample> parse_line(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') return std::nullopt;
    Sample s;
    const size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string_view::npos) return std::nullopt;
    s.name = line.substr(0, name_end);
    size_t at = name_end;
    if (line[at] == '{') {
        // key="value" pairs; a value may hold commas or escaped quotes.
        ++at;
        while (at < line.size() && line[at] != '}') {
            const size_t eq = line.find('=', at);
            if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') return std::nullopt;
            std::string key(line.substr(at, eq - at)), value;
            size_t i = eq + 2;
            for (; i < line.size() && line[i] != '"'; ++i) {
                if (line[i] == '\\' && i + 1 < line.size()) ++i;
                value += line[i];
            }
            if (i >= line.size()) return std::nullopt;
            key.erase(0, key.find_first_not_of(' '));
            s.labels[key] = value;
            at = i + 1;
            if (at < line.size() && line[at] == ',') ++at;
        }
        if (at >= line.size()) return std::nullopt;
        ++at;
    }
    std::string_view rest = line.substr(at);
    rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(' ')));
    rest = rest.substr(0, rest.find(' '));   // a timestamp may follow
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), s.value);
    // A gauge of bytes or tokens is a finite count: NaN, infinities and negatives are not read.
    if (ec != std::errc() || end != rest.data() + rest.size() || !std::isfinite(s.value) || s.value < 0) return std::nullopt;
    return s;
}

std::optional<double> label_number(const Sample& s, std::string_view key) {
    const auto it = s.labels.find(key);
    if (it == s.labels.end()) return std::nullopt;
    double v = 0;
    const auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || end != it->second.data() + it->second.size()) return std::nullopt;
    return v;
}

void keep_larger(std::optional<double>& peak, const std::optional<double>& now) {
    if (now && (!peak || *now > *peak)) peak = now;
}

}  // namespace

KvMetricsReading parse_kv_metrics(std::string_view text) {
    KvMetricsReading r;
    std::optional<double> vllm_usage, vllm_blocks, vllm_block_size;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const std::optional<Sample> s = parse_line(line);
        if (!s) continue;
        // Several engines (vLLM's data-parallel ranks) each report theirs: the sum is the server's.
        auto add = [&](std::optional<double>& to) { to = to.value_or(0) + s->value; };
        if (s->name == "workbench:kv_cache_usage_bytes") add(r.bytes);
        else if (s->name == "llamacpp:kv_cache_tokens" || s->name == "sglang:num_used_tokens") add(r.tokens);
        else if (s->name == "vllm:kv_cache_usage_perc" || s->name == "vllm:gpu_cache_usage_perc") vllm_usage = std::max(vllm_usage.value_or(0), s->value);
        else if (s->name == "vllm:cache_config_info") {
            vllm_blocks = label_number(*s, "num_gpu_blocks");
            vllm_block_size = label_number(*s, "block_size");
            if (const auto it = s->labels.find("cache_dtype"); it != s->labels.end()) r.cache_dtype = it->second;
        }
    }
    if (vllm_usage && vllm_blocks && vllm_block_size) r.tokens = *vllm_usage * *vllm_blocks * *vllm_block_size;
    return r;
}

std::string kv_type_of_cache_dtype(const std::string& cache_dtype) {
    return cache_dtype.starts_with("fp8") ? "fp8" : "";
}

KvMetricsProbe::KvMetricsProbe(const RemoteEndpoint& endpoint, int period_ms)
    : thread_([this, endpoint, period_ms] { poll(endpoint, period_ms); }) {}

KvMetricsProbe::~KvMetricsProbe() { (void)stop(); }

KvMetricsReading KvMetricsProbe::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return peak_;
}

void KvMetricsProbe::poll(const RemoteEndpoint& endpoint, int period_ms) {
    RemoteEndpoint quick = endpoint;
    quick.read_timeout_s = 2;
    while (!stop_.load()) {
        const auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(period_ms);
        if (const std::optional<std::string> text = fetch_metrics(quick)) {
            const KvMetricsReading now = parse_kv_metrics(*text);
            keep_larger(peak_.bytes, now.bytes);
            keep_larger(peak_.tokens, now.tokens);
            if (!now.cache_dtype.empty()) peak_.cache_dtype = now.cache_dtype;
        }
        while (!stop_.load() && std::chrono::steady_clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

}  // namespace wbremote
