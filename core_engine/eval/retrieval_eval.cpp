// Running the long-context tasks (prompts in retrieval_tasks.cpp) over their grid, and their
// figures as JSON. Trials of a needle kind run deepest fact first so each prompt shares its
// filler up to the fact with the one before (the conversation path reuses that prefix).
#include <algorithm>

#include "workbench/paired_stats.h"
#include "workbench/retrieval.h"

namespace workbench {

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

double RetrievalReport::kind_score(RetrievalKind kind) const {
    int n = 0;
    double sum = 0;
    for (const RetrievalCell& c : cells)
        if (c.kind == kind) n += c.n_trials, sum += c.recall_sum;
    return n > 0 ? sum / n : 0.0;
}

int32_t retrieval_tokens_after_prompt(const RetrievalOptions& options) {
    constexpr int32_t kFollowUpQuestion = 32;   // "What is the value of key …? The value of key … is", with room
    const int32_t answer = retrieval_answer_tokens(options.kinds);
    return options.follow_up ? 2 * answer + kFollowUpQuestion : answer;
}

namespace {

// The grid: every cell's trials, each prompt answered by `respond`, scored and counted.
Result<RetrievalReport> run_retrieval_grid(const Engine& prompts_from, const RetrievalOptions& options, const RetrievalResponder& respond,
                                           const ProgressCallback& progress, const std::atomic<bool>* cancel) {
    if (options.lengths.empty() || options.depths_pct.empty() || options.kinds.empty() || options.trials < 1)
        return error(StatusCode::invalid_argument, "retrieval: the grid is empty (lengths, depths, kinds and trials ≥ 1 are needed)");
    const ModelInfo& info = prompts_from.model_info();
    const int32_t answer_tokens = retrieval_tokens_after_prompt(options);
    for (int32_t length : options.lengths)
        if (length < 64 || (info.context_bounded && length + answer_tokens > info.n_ctx))
            return error(StatusCode::invalid_argument, "retrieval: a prompt of " + std::to_string(length) + " tokens (+" +
                                                           std::to_string(answer_tokens) + " answer tokens) does not fit the context of " +
                                                           std::to_string(info.n_ctx) + " (lengths run from 64 to the context)");
    if (options.follow_up)
        for (RetrievalKind kind : options.kinds)
            if (kind != RetrievalKind::multi_key)
                return error(StatusCode::invalid_argument, std::string("retrieval: a follow-up question is asked of multi_key only (another key's value); ") +
                                                               retrieval_kind_name(kind) + " has none");
    const int32_t shortest = *std::min_element(options.lengths.begin(), options.lengths.end());
    for (RetrievalKind kind : options.kinds)
        if (!make_retrieval_prompt(prompts_from, kind, shortest, 0, 0, options.seed).fits)
            return error(StatusCode::invalid_argument, std::string("retrieval: ") + retrieval_kind_name(kind) + " does not fit in " +
                                                           std::to_string(shortest) + " tokens (its facts or words alone are longer): give longer lengths");
    RetrievalReport report;
    for (RetrievalKind kind : options.kinds)
        for (int32_t length : options.lengths) {
            if (!retrieval_kind_has_depth(kind)) report.cells.push_back({kind, length, -1, 0, 0, {}, 0});
            else
                for (int32_t depth : options.depths_pct) report.cells.push_back({kind, length, depth, 0, 0, {}, 0});
        }
    auto cell = [&](RetrievalKind kind, int32_t length, int32_t depth) -> RetrievalCell& {
        for (RetrievalCell& c : report.cells)
            if (c.kind == kind && c.length == length && c.depth_pct == depth) return c;
        return report.cells.front();   // unreachable: every cell was made above
    };
    // Deepest fact first: each next prompt shares the filler up to its own fact with the last.
    std::vector<int32_t> depths = options.depths_pct;
    std::sort(depths.begin(), depths.end(), std::greater<>());
    const auto n_depths = static_cast<int32_t>(depths.size());
    const int64_t total = static_cast<int64_t>(options.kinds.size() * options.lengths.size() * depths.size()) * options.trials;
    int64_t done = 0, correct = 0;
    double recall = 0;
    auto run = [&](RetrievalKind kind, int32_t length, int32_t depth, int32_t trial) -> Status {
        if (cancel && cancel->load()) return error(StatusCode::cancelled, "retrieval: cancelled");
        const RetrievalPrompt p = make_retrieval_prompt(prompts_from, kind, length, depth, trial, options.seed);
        auto out = respond(p, retrieval_answer_tokens(kind));
        if (!out.ok()) return out.status().with_context(std::string("retrieval, ") + retrieval_kind_name(kind) + ", " + std::to_string(length) + " tokens: ");
        RetrievalCell& c = cell(kind, length, depth);
        const double found = answer_recall(*out, options.follow_up ? p.follow_up_answers : p.answers);
        const bool all = found >= 1.0;
        ++c.n_trials;
        c.n_correct += all;
        c.recall_sum += found;
        c.outcomes.push_back(all ? 1 : 0);
        correct += all;
        recall += found;
        if (progress) progress(++done, total);
        return Status::ok_status();
    };
    for (RetrievalKind kind : options.kinds)
        for (int32_t trial = 0; trial < options.trials; ++trial)
            for (int32_t length : options.lengths)
                for (int32_t d = 0; d < n_depths; ++d) {
                    // Without a depth, each of the grid's depths is one more trial of the length's cell.
                    const bool deep = retrieval_kind_has_depth(kind);
                    const Status st = run(kind, length, deep ? depths[static_cast<size_t>(d)] : -1, deep ? trial : trial * n_depths + d);
                    if (!st.ok()) return st;
                }
    report.accuracy = total > 0 ? static_cast<double>(correct) / static_cast<double>(total) : 0.0;
    report.score = total > 0 ? recall / static_cast<double>(total) : 0.0;
    return report;
}

}  // namespace

Result<RetrievalReport> evaluate_retrieval(Engine& engine, const RetrievalOptions& options, const ProgressCallback& progress,
                                           const std::atomic<bool>* cancel) {
    auto respond = [&](const RetrievalPrompt& p, int32_t max_tokens) -> Result<std::string> {
        GenerationRequest request;
        request.sampling.temperature = 0;
        if (options.question_agnostic) {
            // The context alone first: a press compresses it before the question exists.
            request.max_tokens = 0;
            const std::vector<TokenId> context(p.tokens.begin(), p.tokens.begin() + p.question_at);
            if (auto read = engine.generate_tokens(context, request); !read.ok()) return read.status();
        }
        request.max_tokens = max_tokens;
        auto out = engine.generate_tokens(p.tokens, request);
        if (out.ok() && options.follow_up) {
            // The same conversation goes on: its answer, then the second question.
            std::vector<TokenId> next = p.tokens;
            next.insert(next.end(), out->tokens.begin(), out->tokens.end());
            if (next.back() == engine.model_info().eos_id) next.pop_back();   // the turn goes on
            next.insert(next.end(), p.follow_up.begin(), p.follow_up.end());
            out = engine.generate_tokens(next, request);
        }
        if (!out.ok()) return out.status();
        return out->text;
    };
    engine.reset();
    auto report = run_retrieval_grid(engine, options, respond, progress, cancel);
    engine.reset();
    return report;
}

Result<RetrievalReport> evaluate_retrieval(const Engine& prompts_from, const RetrievalOptions& options, const RetrievalResponder& respond,
                                           const ProgressCallback& progress, const std::atomic<bool>* cancel) {
    if (options.question_agnostic || options.follow_up)
        return error(StatusCode::invalid_argument, "retrieval: the question-agnostic and follow-up modes read a conversation in turns, which "
                                                   "only the local engine does (a responder answers each prompt whole)");
    return run_retrieval_grid(prompts_from, options, respond, progress, cancel);
}

Json retrieval_report_json(const RetrievalReport& r) {
    Json cells = Json::array();
    int64_t n = 0, k = 0;
    std::vector<RetrievalKind> kinds;
    for (const RetrievalCell& c : r.cells) {
        std::string outcomes;
        for (uint8_t o : c.outcomes) outcomes += o ? '1' : '0';
        cells.push_back({{"kind", retrieval_kind_name(c.kind)}, {"length", c.length},
                         {"depth", c.depth_pct >= 0 ? Json(c.depth_pct) : Json(nullptr)}, {"trials", c.n_trials},
                         {"correct", c.n_correct}, {"accuracy", json_rounded(c.accuracy(), 4)}, {"score", json_rounded(c.score(), 4)},
                         {"outcomes", outcomes}});
        n += c.n_trials;
        k += c.n_correct;
        if (std::find(kinds.begin(), kinds.end(), c.kind) == kinds.end()) kinds.push_back(c.kind);
    }
    const Interval w = wilson_interval(k, n);
    Json j = {{"retrieval_accuracy", json_rounded(r.accuracy, 4)},
              {"retrieval_trials", n},
              {"retrieval_interval", Json::array({json_rounded(w.low, 4), json_rounded(w.high, 4)})},
              {"retrieval_score", json_rounded(r.score, 4)}};
    for (RetrievalKind kind : kinds) {
        j[std::string(retrieval_kind_name(kind)) + "_accuracy"] = json_rounded(r.kind_accuracy(kind), 4);
        j[std::string(retrieval_kind_name(kind)) + "_score"] = json_rounded(r.kind_score(kind), 4);
    }
    j["cells"] = cells;
    return j;
}

double RetrievalGrid::accuracy(size_t li, size_t di) const {
    const size_t at = li * depths.size() + di;
    return at < trials.size() && trials[at] > 0 ? static_cast<double>(correct[at]) / trials[at] : -1.0;
}

RetrievalGrid retrieval_grid(const Json& cells) {
    RetrievalGrid g;
    struct Entry {
        int32_t length, depth, trials, correct;
    };
    std::vector<Entry> entries;
    if (cells.is_array())
        for (const Json& c : cells) {
            if (!c.is_object() || !c.contains("length") || !c["length"].is_number_integer() || !c.contains("trials") ||
                !c["trials"].is_number_integer() || !c.contains("correct") || !c["correct"].is_number_integer())
                continue;
            const int32_t depth = c.contains("depth") && c["depth"].is_number_integer() ? c["depth"].get<int32_t>() : -1;
            entries.push_back({c["length"].get<int32_t>(), depth, c["trials"].get<int32_t>(), c["correct"].get<int32_t>()});
            if (std::find(g.lengths.begin(), g.lengths.end(), entries.back().length) == g.lengths.end()) g.lengths.push_back(entries.back().length);
            if (std::find(g.depths.begin(), g.depths.end(), depth) == g.depths.end()) g.depths.push_back(depth);
        }
    std::sort(g.lengths.begin(), g.lengths.end());
    std::sort(g.depths.begin(), g.depths.end(), [](int32_t a, int32_t b) { return a >= 0 && (b < 0 || a < b); });
    g.trials.assign(g.lengths.size() * g.depths.size(), 0);
    g.correct.assign(g.trials.size(), 0);
    for (const Entry& e : entries) {
        const auto li = static_cast<size_t>(std::find(g.lengths.begin(), g.lengths.end(), e.length) - g.lengths.begin());
        const auto di = static_cast<size_t>(std::find(g.depths.begin(), g.depths.end(), e.depth) - g.depths.begin());
        g.trials[li * g.depths.size() + di] += e.trials;
        g.correct[li * g.depths.size() + di] += e.correct;
    }
    return g;
}

}  // namespace workbench
