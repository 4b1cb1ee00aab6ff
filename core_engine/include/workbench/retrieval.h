// Retrieval beside perplexity: can the configuration still find what sits far back in its
// context? Synthetic long-context tasks generated from seeds, after RULER's families that need no
// external data (Hsieh et al. 2024): passkey; needles hidden in filler text, several keys with one
// asked (multi-key), one key with several values (multi-value), several keys asked (multi-query);
// variable tracking (a chain of assignments to follow); common- and frequent-word extraction
// (aggregation over the whole context). A grid of lengths × depths with seeded trials, so runs of
// different configurations see the same prompts and pair prompt by prompt. A sliding window's
// perplexity stays near full attention's while it has forgotten everything outside the window;
// this test shows it. Runs on the calling thread (the engine's owner).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "workbench/engine.h"
#include "workbench/json.h"
#include "workbench/measure.h"

namespace workbench {

enum class RetrievalKind { passkey, multi_key, multi_value, multi_query, variable_tracking, common_words, frequent_words };
const char* retrieval_kind_name(RetrievalKind kind);
// Every kind, in the enum's order.
const std::vector<RetrievalKind>& all_retrieval_kinds();
// "passkey,multi_value,…" (names as retrieval_kind_name spells them, or "all"). Errors:
// invalid_argument naming the unknown word and listing the names.
Result<std::vector<RetrievalKind>> parse_retrieval_kinds(const std::string& text);
// Whether a kind's answer sits at a depth. Word extraction reads the whole context: its cells
// have no depth (depth_pct -1) and take trials × the number of depths, so every kind weighs the
// same at each length.
bool retrieval_kind_has_depth(RetrievalKind kind);
// Greedy tokens read for a kind's answer (a list takes more than one number).
int32_t retrieval_answer_tokens(RetrievalKind kind);
// The most any of `kinds` reads: what a context must hold past the longest prompt.
int32_t retrieval_answer_tokens(const std::vector<RetrievalKind>& kinds);
struct RetrievalOptions;
// Tokens past its prompt one trial may hold: its answer, and with a follow-up the second question and answer.
int32_t retrieval_tokens_after_prompt(const RetrievalOptions& options);

struct RetrievalOptions {
    std::vector<int32_t> lengths = {512, 1024, 2048, 4096};   // prompt lengths in tokens
    std::vector<int32_t> depths_pct = {0, 25, 50, 75, 100};   // where the fact sits in the filler
    int32_t trials = 4;                                       // per cell and kind, each its own numbers
    std::vector<RetrievalKind> kinds = {RetrievalKind::passkey, RetrievalKind::multi_key};
    uint64_t seed = 1234;
    // Question-agnostic: each prompt's context is read as a request of its own (an eviction press
    // compresses it then) and its question follows as the conversation's next prompt; otherwise
    // the prompt is read whole and a press sees the question (question-aware).
    bool question_agnostic = false;
    // Multi-turn (SCBench's follow-up): after each answer the conversation asks a second question
    // on the same context, and the second answer is scored: what a press that kept the first
    // question's tokens lost. Only multi_key asks one (another key's value).
    bool follow_up = false;
};

struct RetrievalCell {
    RetrievalKind kind = RetrievalKind::passkey;
    int32_t length = 0, depth_pct = 0;  // depth -1: a kind without depth
    int32_t n_trials = 0, n_correct = 0;
    std::vector<uint8_t> outcomes;      // per trial in trial order: 1 every answer found, 0 not
    double recall_sum = 0;              // per trial, the fraction of its answers found, summed
    double accuracy() const { return n_trials > 0 ? static_cast<double>(n_correct) / n_trials : 0.0; }
    // RULER's string_match_all: the mean fraction of answers found (equals accuracy for one answer).
    double score() const { return n_trials > 0 ? recall_sum / n_trials : 0.0; }
};

struct RetrievalReport {
    std::vector<RetrievalCell> cells;   // kind-major, then length, then depth, as the options list them
    double accuracy = 0;                // every trial of every cell
    double score = 0;                   // RULER's score: mean fraction of answers found, every trial
    // Mean over one kind's cells (every length and depth).
    double kind_accuracy(RetrievalKind kind) const;
    double kind_score(RetrievalKind kind) const;
    // Every trial's outcome, cell by cell: two reports of the same options pair prompt by prompt.
    std::vector<uint8_t> outcomes() const;
};

// One trial's prompt: token ids of about `length` tokens (never more) and the answers the
// continuation must contain (one number for passkey and multi-key; every value, variable or word
// asked for the others). Deterministic in (seed, kind, length, depth, trial); depth is ignored
// by kinds without one.
struct RetrievalPrompt {
    std::vector<TokenId> tokens;
    std::vector<std::string> answers;
    bool fits = true;   // false: `length` is too short for the task (its facts, or its asked words, do not all fit)
    int32_t question_at = 0;   // tokens [question_at, end) ask the question; those before are the context
    // A second question on the same context, asked after the first answer (multi_key: another
    // key's value), and its answers; empty for kinds without one.
    std::vector<TokenId> follow_up;
    std::vector<std::string> follow_up_answers;
};
RetrievalPrompt make_retrieval_prompt(const Engine& engine, RetrievalKind kind, int32_t length, int32_t depth_pct, int32_t trial,
                                      uint64_t seed);

// The fraction of `answers` found in `output`, case-insensitive substring matches (RULER's
// string_match_all for one trial); a trial counts as correct when it is 1.
double answer_recall(const std::string& output, const std::vector<std::string>& answers);

// Runs every trial: the greedy continuation (retrieval_answer_tokens) must contain every answer. Prompts of a
// trial share their filler, so the cache reuses it across depths where the variant can. Errors:
// invalid_argument (a length the context cannot hold, names both; a length too short for a task,
// names both; an empty grid), cancelled,
// the engine's errors. progress(done, total) per trial.
Result<RetrievalReport> evaluate_retrieval(Engine& engine, const RetrievalOptions& options, const ProgressCallback& progress = {},
                                           const std::atomic<bool>* cancel = nullptr);

// One prompt's greedy answer from whatever runs the model: the continuation's text, at most
// `max_tokens` tokens. A remote OpenAI-compatible server is one (remote/remote_retrieval.h).
using RetrievalResponder = std::function<Result<std::string>(const RetrievalPrompt& prompt, int32_t max_tokens)>;
// The same grid, prompts and scoring with the answers from `respond`; `prompts_from` only builds
// the prompts (its tokenizer, the same model's) and bounds the lengths by its context. Errors as
// above, and invalid_argument for question_agnostic or follow_up (conversations in turns, which
// only the engine's own path reads); `respond`'s errors with the task and length named.
Result<RetrievalReport> evaluate_retrieval(const Engine& prompts_from, const RetrievalOptions& options, const RetrievalResponder& respond,
                                           const ProgressCallback& progress = {}, const std::atomic<bool>* cancel = nullptr);

// The report as JSON, the shape of `eval --retrieval` and of a sweep row's figures:
// {"retrieval_accuracy", "retrieval_trials", "retrieval_interval": [low, high] (Wilson, 95 %),
// "retrieval_score", "<kind>_accuracy" and "<kind>_score" for each kind run, "cells": [{"kind",
// "length", "depth" (null without one), "trials", "correct", "accuracy", "score",
// "outcomes": "0110" (per trial)}]}.
Json retrieval_report_json(const RetrievalReport& report);

// Accuracy by length × depth over every task (one depth's cells summed across kinds; kinds
// without a depth in a column of their own, depth -1, last): what the heatmaps draw. Read from
// the "cells" array of retrieval_report_json or a sweep row's "retrieval_cells"; entries it
// cannot read are skipped.
struct RetrievalGrid {
    std::vector<int32_t> lengths, depths;   // ascending (-1 last)
    std::vector<int32_t> trials, correct;   // lengths.size() × depths.size(), row by length
    // -1 where the grid holds no trial.
    double accuracy(size_t length_index, size_t depth_index) const;
    bool empty() const { return lengths.empty() || depths.empty(); }
};
RetrievalGrid retrieval_grid(const Json& cells);

}  // namespace workbench
