// The load generator: one thread dispatches at Poisson arrival times (as vLLM's benchmark does),
// each request streams on its own thread under the concurrency cap, and the results are
// aggregated by the engine's own batch_metrics so local and remote figures mean the same.
#include "serve_benchmark.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

namespace wbremote {
namespace {

using Clock = std::chrono::steady_clock;

// Common words: a prompt of them costs about one token each in most tokenizers, and random
// orders defeat prefix caches between requests.
constexpr const char* kWords[] = {
    "time",  "year",   "people", "way",    "day",    "man",   "thing", "woman", "life",   "child", "world", "school", "state",
    "family", "student", "group", "country", "problem", "hand", "part",  "place", "case",   "week",  "company", "system", "program",
    "question", "work", "government", "number", "night", "point", "home", "water", "room",  "mother", "area", "money", "story",
    "fact",  "month",  "lot",    "right",  "study",  "book",  "eye",   "job",   "word",   "business", "issue", "side", "kind",
    "head",  "house",  "service", "friend", "father", "power", "hour", "game",  "line",   "end",   "member", "law",  "car",
    "city",  "community", "name", "president", "team", "minute", "idea", "kid", "body",  "information", "back", "parent", "face",
    "others", "level", "office", "door",  "health", "person", "art",  "war",   "history", "party", "result", "change", "morning",
    "reason", "research", "girl", "guy",  "moment", "air",   "teacher", "force", "education",
};
constexpr size_t kNumWords = sizeof kWords / sizeof kWords[0];

std::string random_words(int32_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string text;
    for (int32_t i = 0; i < n; ++i) {
        if (i) text += ' ';
        text += kWords[rng() % kNumWords];
    }
    return text;
}

// How many random words the server counts as about `n_tokens` tokens (two measurements).
int32_t words_for_tokens(int32_t n_tokens, const std::function<std::optional<int32_t>(const std::string&)>& count) {
    int32_t words = std::max(1, n_tokens);
    for (int pass = 0; pass < 2; ++pass) {
        const std::optional<int32_t> got = count(random_words(words, 0x5eed + pass));
        if (!got || *got <= 0) break;
        words = std::max(1, static_cast<int32_t>(std::lround(static_cast<double>(words) * n_tokens / *got)));
    }
    return words;
}

}  // namespace

std::string sized_prompt(int32_t n_tokens, uint64_t seed, const std::function<std::optional<int32_t>(const std::string&)>& count) {
    return random_words(words_for_tokens(n_tokens, count), seed);
}

workbench::Result<ServeBenchmarkResult> run_serve_benchmark(const RemoteEndpoint& endpoint, const ServeBenchmarkOptions& o,
                                                            const std::function<void(int32_t, int32_t)>& on_progress) {
    if (o.num_prompts < 1) return workbench::error(workbench::StatusCode::invalid_argument, "the number of prompts must be at least 1");
    if (!(o.request_rate > 0)) return workbench::error(workbench::StatusCode::invalid_argument, "the request rate must be above 0 (inf: all at once)");
    if (o.prompts.empty() && (o.input_len < 1 || o.output_len < 1))
        return workbench::error(workbench::StatusCode::invalid_argument, "the input and output lengths must be at least 1");
    auto models = list_models(endpoint);
    if (!models.ok()) return models.status();
    ServeBenchmarkResult result;
    result.model = o.model.empty() ? models->front().id : o.model;
    result.server = detect_server_kind(endpoint, *models);

    // The requests, built before the clock starts.
    std::vector<RemoteRequest> requests;
    if (!o.prompts.empty()) {
        for (int32_t i = 0; i < o.num_prompts; ++i) {
            requests.push_back(o.prompts[static_cast<size_t>(i) % o.prompts.size()]);
            requests.back().model = result.model;
        }
    } else {
        result.tokens_from_tokenize = remote_token_count(endpoint, result.model, "hello world").has_value();
        auto count = [&](const std::string& text) -> std::optional<int32_t> {
            if (result.tokens_from_tokenize) return remote_token_count(endpoint, result.model, text);
            RemoteRequest probe;   // the prompt tokens the server reports for a one-token completion
            probe.model = result.model;
            probe.chat = false;
            probe.prompt = text;
            probe.generation.max_tokens = 1;
            probe.generation.sampling.temperature = 0;
            const RemoteCompletion c = stream_completion(endpoint, probe);
            if (!c.ok || c.metrics.n_prompt_tokens <= 0) return std::nullopt;
            return c.metrics.n_prompt_tokens;
        };
        const int32_t words = words_for_tokens(o.input_len, count);
        for (int32_t i = 0; i < o.num_prompts; ++i) {
            RemoteRequest r;
            r.model = result.model;
            r.chat = false;
            r.prompt = random_words(words, o.seed * 1000003 + static_cast<uint64_t>(i) + 1);
            r.generation.max_tokens = o.output_len;
            r.generation.ignore_eos = true;
            r.generation.sampling.temperature = 0;
            requests.push_back(std::move(r));
        }
    }

    std::vector<RemoteCompletion> done(requests.size());
    std::mutex mutex;
    std::condition_variable slot_free;
    int32_t in_flight = 0, n_done = 0;
    std::vector<std::thread> workers;
    std::mt19937_64 rng(o.seed);
    std::exponential_distribution<double> gap(std::isinf(o.request_rate) ? 1.0 : o.request_rate);
    const auto t0 = Clock::now();
    double next_s = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
        if (!std::isinf(o.request_rate)) {
            std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(next_s)));
            next_s += gap(rng);
        }
        {
            std::unique_lock lock(mutex);
            slot_free.wait(lock, [&] { return o.concurrency <= 0 || in_flight < o.concurrency; });
            ++in_flight;
        }
        workers.emplace_back([&, i] {
            RemoteCompletion c = stream_completion(endpoint, requests[i]);
            std::lock_guard lock(mutex);
            done[i] = std::move(c);
            --in_flight;
            ++n_done;
            if (on_progress) on_progress(n_done, static_cast<int32_t>(requests.size()));
            slot_free.notify_all();
        });
    }
    for (auto& w : workers) w.join();
    const double duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();

    for (size_t i = 0; i < done.size(); ++i) {
        workbench::BatchResult::Completion c;
        c.request = static_cast<int32_t>(i);
        c.ok = done[i].ok;
        c.text = std::move(done[i].text);
        c.error = done[i].error;
        c.metrics = done[i].metrics;
        c.stop_reason = done[i].finish_reason == "length" ? workbench::StopReason::max_tokens : workbench::StopReason::end_of_generation;
        if (!c.ok) result.errors.push_back("request " + std::to_string(i) + ": " + done[i].error);
        result.batch.completions.push_back(std::move(c));
    }
    result.batch.metrics = workbench::batch_metrics(result.batch.completions, duration_ms);
    return result;
}

}  // namespace wbremote
