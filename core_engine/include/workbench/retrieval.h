// Retrieval beside perplexity: can the configuration still find a fact planted far back in its
// context? Passkey retrieval (a random 5-digit number hidden at a depth of filler text, asked for
// at the end) and a multi-key variant (several key–value pairs hidden, one asked), over a grid of
// lengths × depths with seeded trials, so runs of different configurations see the same prompts.
// A sliding window's perplexity stays near full attention's while it has forgotten everything
// outside the window; this test shows it. Runs on the calling thread (the engine's owner).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "workbench/engine.h"
#include "workbench/json.h"
#include "workbench/measure.h"

namespace workbench {

enum class RetrievalKind { passkey, multi_key };
const char* retrieval_kind_name(RetrievalKind kind);

struct RetrievalOptions {
    std::vector<int32_t> lengths = {512, 1024, 2048, 4096};   // prompt lengths in tokens
    std::vector<int32_t> depths_pct = {0, 25, 50, 75, 100};   // where the fact sits in the filler
    int32_t trials = 4;                                       // per cell and kind, each its own numbers
    std::vector<RetrievalKind> kinds = {RetrievalKind::passkey, RetrievalKind::multi_key};
    uint64_t seed = 1234;
};

struct RetrievalCell {
    RetrievalKind kind = RetrievalKind::passkey;
    int32_t length = 0, depth_pct = 0;
    int32_t n_trials = 0, n_correct = 0;
    std::vector<uint8_t> outcomes;      // per trial in trial order: 1 found, 0 not
    double accuracy() const { return n_trials > 0 ? static_cast<double>(n_correct) / n_trials : 0.0; }
};

struct RetrievalReport {
    std::vector<RetrievalCell> cells;   // kind-major, then length, then depth, as the options list them
    double accuracy = 0;                // every trial of every cell
    // Mean over one kind's cells (every length and depth).
    double kind_accuracy(RetrievalKind kind) const;
    // Every trial's outcome, cell by cell: two reports of the same options pair prompt by prompt.
    std::vector<uint8_t> outcomes() const;
};

// One trial's prompt: token ids of about `length` tokens (never more), the fact's value, and the
// question's answer to look for. Deterministic in (options.seed, kind, length, depth, trial).
struct RetrievalPrompt {
    std::vector<TokenId> tokens;
    std::string answer;
};
RetrievalPrompt make_retrieval_prompt(const Engine& engine, RetrievalKind kind, int32_t length, int32_t depth_pct, int32_t trial,
                                      uint64_t seed);

// Runs every trial: the greedy continuation (a few tokens) must contain the answer. Prompts of a
// trial share their filler, so the cache reuses it across depths where the variant can. Errors:
// invalid_argument (a length the context cannot hold, names both; an empty grid), cancelled,
// the engine's errors. progress(done, total) per trial.
Result<RetrievalReport> evaluate_retrieval(Engine& engine, const RetrievalOptions& options, const ProgressCallback& progress = {},
                                           const std::atomic<bool>* cancel = nullptr);

// The report as JSON, the shape of `eval --retrieval` and of a sweep row's figures:
// {"retrieval_accuracy", "retrieval_trials", "retrieval_interval": [low, high] (Wilson, 95 %),
// "passkey_accuracy", "multi_key_accuracy", "cells": [{"kind", "length", "depth", "trials",
// "correct", "accuracy", "outcomes": "0110" (per trial)}]}.
Json retrieval_report_json(const RetrievalReport& report);

}  // namespace workbench
