// Reads the server's /metrics (Prometheus text exposition 0.0.4) into the figures the Server page
// shows. Pure functions on text: no network, no widgets, any thread. Unknown metrics, comments,
// histogram buckets and malformed lines are skipped, never an error: a newer server may add more.
#pragma once

#include <QString>
#include <QStringView>
#include <optional>

namespace servermetrics {

// One sample line: `name{label="value",...} 1.5 [timestamp]`.
struct Sample {
    QString name;    // "workbench:num_requests_running"
    QString labels;  // the text between the braces, escapes kept ("model_name=\"X\""); empty when none
    double value = 0;
};

// A sample line → its parts; nullopt for a comment, a blank line or a line that is not a sample
// (bad name, unclosed braces or quotes, a value that is not a number). Values may be NaN, +Inf, -Inf.
std::optional<Sample> parseLine(QStringView line);

// The serving figures of one scrape; each is absent when the text lacks its line.
struct Figures {
    std::optional<double> running;           // workbench:num_requests_running
    std::optional<double> waiting;           // workbench:num_requests_waiting
    std::optional<double> completed;         // workbench:request_success_total
    std::optional<double> generationTokens;  // workbench:generation_tokens_total
    std::optional<double> promptTokens;      // workbench:prompt_tokens_total
    std::optional<double> kvBytes;           // workbench:kv_cache_usage_bytes
    std::optional<double> kvFraction;        // workbench:kv_cache_usage_perc (0…1, despite the name)
};

// Every line of a scrape; a metric given twice (two models) is summed.
Figures parseFigures(QStringView text);

// The share of a server's KV cache in use (0…1) from its /metrics, whichever engine it is:
// workbench:kv_cache_usage_perc, vllm:kv_cache_usage_perc (vllm:gpu_cache_usage_perc before vLLM
// 0.10), sglang:token_usage, llamacpp:kv_cache_usage_ratio (all fractions despite "perc"), the
// first of these the text has; the largest when it gives one per model. nullopt: none of them,
// or not a finite value (the server does not report it).
std::optional<double> kvUsageFraction(QStringView text);

// Generated tokens per second between two scrapes `seconds` apart: 0 when the counter went back
// (the server restarted) or no time passed; nullopt when either scrape lacks the counter.
std::optional<double> tokensPerSecond(const Figures& before, const Figures& after, double seconds);

}  // namespace servermetrics
