// Passkey and multi-key retrieval. A prompt is built from token pieces (header, filler sentences,
// the facts, the question) so its length is exact to the token; one trial's numbers, keys and
// distractor positions are the same at every length and depth, so prompts differ only by where
// the asked fact sits and consecutive prompts share their filler up to it (the conversation path
// reuses that prefix). Filler and question follow the passkey test of Mohtashami & Jaggi (2023).
#include <algorithm>
#include <random>

#include "workbench/paired_stats.h"
#include "workbench/retrieval.h"

namespace workbench {
namespace {

constexpr const char* kHeader =
    "There is an important piece of information hidden inside a lot of irrelevant text. Find it and memorize it. "
    "I will quiz you about it.\n";
constexpr const char* kFiller[] = {" The grass is green.", " The sky is blue.", " The sun is yellow.", " Here we go.",
                                   " There and back again."};
constexpr const char* kKeys[] = {"apple", "river", "candle", "falcon", "marble", "violet",
                                 "copper", "meadow", "harbor", "lantern", "pepper", "glacier"};
constexpr int kMultiKeyPairs = 4;      // the asked one and three distractors
constexpr int32_t kAnswerTokens = 8;   // greedy tokens read for the answer

std::vector<TokenId> tokens_of(const Engine& engine, const std::string& text) { return engine.tokenize(text, false, false); }

// What one trial hides: its numbers, keys and where the distractors sit (fractions of the filler).
struct TrialFacts {
    std::string value;                 // the asked fact's number
    std::string key;                   // multi-key: the asked key
    std::vector<std::pair<std::string, std::string>> distractors;   // (key, value)
    std::vector<double> distractor_at;
};

TrialFacts trial_facts(RetrievalKind kind, int32_t trial, uint64_t seed) {
    std::mt19937_64 rng(seed * 1000003u + static_cast<uint64_t>(trial) * 7919u + (kind == RetrievalKind::multi_key ? 17u : 0u));
    auto number = [&] { return std::to_string(10000 + rng() % 90000); };
    TrialFacts f;
    f.value = number();
    if (kind == RetrievalKind::multi_key) {
        std::vector<int> order(std::size(kKeys));
        for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
        for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng() % (i + 1)]);
        f.key = kKeys[order[0]];
        for (int i = 1; i < kMultiKeyPairs; ++i) {
            f.distractors.emplace_back(kKeys[order[static_cast<size_t>(i)]], number());
            f.distractor_at.push_back(static_cast<double>(rng() % 1000) / 1000.0);
        }
    }
    return f;
}

std::string fact_text(RetrievalKind kind, const std::string& key, const std::string& value) {
    if (kind == RetrievalKind::passkey) return " The pass key is " + value + ". Remember it. " + value + " is the pass key.";
    return " The value of key " + key + " is " + value + ".";
}

}  // namespace

const char* retrieval_kind_name(RetrievalKind kind) { return kind == RetrievalKind::passkey ? "passkey" : "multi_key"; }

std::vector<uint8_t> RetrievalReport::outcomes() const {
    std::vector<uint8_t> all;
    for (const RetrievalCell& c : cells) all.insert(all.end(), c.outcomes.begin(), c.outcomes.end());
    return all;
}

double RetrievalReport::kind_accuracy(RetrievalKind kind) const {
    int n = 0, ok = 0;
    for (const RetrievalCell& c : cells)
        if (c.kind == kind) n += c.n_trials, ok += c.n_correct;
    return n > 0 ? static_cast<double>(ok) / n : 0.0;
}

RetrievalPrompt make_retrieval_prompt(const Engine& engine, RetrievalKind kind, int32_t length, int32_t depth_pct, int32_t trial,
                                      uint64_t seed) {
    const TrialFacts f = trial_facts(kind, trial, seed);
    const std::vector<TokenId> header = engine.tokenize(kHeader, true, false);
    const std::string question = kind == RetrievalKind::passkey
                                     ? std::string("\nWhat is the pass key? The pass key is")
                                     : "\nWhat is the value of key " + f.key + "? The value of key " + f.key + " is";
    const std::vector<TokenId> asked = tokens_of(engine, fact_text(kind, f.key, f.value)), tail = tokens_of(engine, question);
    std::vector<std::vector<TokenId>> distractors;
    size_t fixed = header.size() + asked.size() + tail.size();
    for (const auto& [key, value] : f.distractors) {
        distractors.push_back(tokens_of(engine, fact_text(kind, key, value)));
        fixed += distractors.back().size();
    }
    // Filler sentences, in their fixed cycle, as many as fit.
    std::vector<std::vector<TokenId>> filler;
    size_t total = fixed;
    for (size_t i = 0;; ++i) {
        std::vector<TokenId> s = tokens_of(engine, kFiller[i % std::size(kFiller)]);
        if (total + s.size() > static_cast<size_t>(std::max(0, length))) break;
        total += s.size();
        filler.push_back(std::move(s));
    }
    // Facts go between sentences: sentence index → the facts before it (distractors first).
    const size_t n = filler.size();
    std::vector<std::vector<const std::vector<TokenId>*>> before(n + 1);
    for (size_t i = 0; i < distractors.size(); ++i)
        before[std::min(n, static_cast<size_t>(f.distractor_at[i] * static_cast<double>(n) + 0.5))].push_back(&distractors[i]);
    before[std::min(n, static_cast<size_t>(std::clamp(depth_pct, 0, 100) / 100.0 * static_cast<double>(n) + 0.5))].push_back(&asked);
    RetrievalPrompt p;
    p.answer = f.value;
    p.tokens = header;
    for (size_t i = 0; i <= n; ++i) {
        for (const std::vector<TokenId>* fact : before[i]) p.tokens.insert(p.tokens.end(), fact->begin(), fact->end());
        if (i < n) p.tokens.insert(p.tokens.end(), filler[i].begin(), filler[i].end());
    }
    p.tokens.insert(p.tokens.end(), tail.begin(), tail.end());
    return p;
}

Result<RetrievalReport> evaluate_retrieval(Engine& engine, const RetrievalOptions& options, const ProgressCallback& progress,
                                           const std::atomic<bool>* cancel) {
    if (options.lengths.empty() || options.depths_pct.empty() || options.kinds.empty() || options.trials < 1)
        return error(StatusCode::invalid_argument, "retrieval: the grid is empty (lengths, depths, kinds and trials ≥ 1 are needed)");
    const ModelInfo& info = engine.model_info();
    for (int32_t length : options.lengths)
        if (length < 64 || (info.context_bounded && length + kAnswerTokens > info.n_ctx))
            return error(StatusCode::invalid_argument, "retrieval: a prompt of " + std::to_string(length) + " tokens (+" +
                                                           std::to_string(kAnswerTokens) + " answer tokens) does not fit the context of " +
                                                           std::to_string(info.n_ctx) + " (lengths run from 64 to the context)");
    RetrievalReport report;
    for (RetrievalKind kind : options.kinds)
        for (int32_t length : options.lengths)
            for (int32_t depth : options.depths_pct) report.cells.push_back({kind, length, depth, 0, 0, {}});
    auto cell = [&](RetrievalKind kind, int32_t length, int32_t depth) -> RetrievalCell& {
        for (RetrievalCell& c : report.cells)
            if (c.kind == kind && c.length == length && c.depth_pct == depth) return c;
        return report.cells.front();   // unreachable: every cell was made above
    };
    GenerationRequest request;
    request.max_tokens = kAnswerTokens;
    request.sampling.temperature = 0;
    // Deepest fact first: each next prompt shares the filler up to its own fact with the last.
    std::vector<int32_t> depths = options.depths_pct;
    std::sort(depths.begin(), depths.end(), std::greater<>());
    const int64_t total = static_cast<int64_t>(report.cells.size()) * options.trials;
    int64_t done = 0, correct = 0;
    engine.reset();
    for (RetrievalKind kind : options.kinds)
        for (int32_t trial = 0; trial < options.trials; ++trial)
            for (int32_t length : options.lengths)
                for (int32_t depth : depths) {
                    if (cancel && cancel->load()) return error(StatusCode::cancelled, "retrieval: cancelled");
                    const RetrievalPrompt p = make_retrieval_prompt(engine, kind, length, depth, trial, options.seed);
                    auto out = engine.generate_tokens(p.tokens, request);
                    if (!out.ok()) return out.status().with_context("retrieval, " + std::to_string(length) + " tokens: ");
                    RetrievalCell& c = cell(kind, length, depth);
                    ++c.n_trials;
                    const bool found = out->text.find(p.answer) != std::string::npos;
                    c.n_correct += found;
                    c.outcomes.push_back(found ? 1 : 0);
                    correct += found;
                    if (progress) progress(++done, total);
                }
    engine.reset();
    report.accuracy = total > 0 ? static_cast<double>(correct) / static_cast<double>(total) : 0.0;
    return report;
}

Json retrieval_report_json(const RetrievalReport& r) {
    Json cells = Json::array();
    int64_t n = 0, k = 0;
    for (const RetrievalCell& c : r.cells) {
        std::string outcomes;
        for (uint8_t o : c.outcomes) outcomes += o ? '1' : '0';
        cells.push_back({{"kind", retrieval_kind_name(c.kind)}, {"length", c.length}, {"depth", c.depth_pct},
                         {"trials", c.n_trials}, {"correct", c.n_correct}, {"accuracy", json_rounded(c.accuracy(), 4)},
                         {"outcomes", outcomes}});
        n += c.n_trials;
        k += c.n_correct;
    }
    const Interval w = wilson_interval(k, n);
    return {{"retrieval_accuracy", json_rounded(r.accuracy, 4)},
            {"retrieval_trials", n},
            {"retrieval_interval", Json::array({json_rounded(w.low, 4), json_rounded(w.high, 4)})},
            {"passkey_accuracy", json_rounded(r.kind_accuracy(RetrievalKind::passkey), 4)},
            {"multi_key_accuracy", json_rounded(r.kind_accuracy(RetrievalKind::multi_key), 4)},
            {"cells", cells}};
}

}  // namespace workbench
