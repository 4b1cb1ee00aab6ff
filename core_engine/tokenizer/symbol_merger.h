// The pair-merging loop shared by BPE (merge ranks) and SentencePiece (piece scores): start from
// one symbol per UTF-8 character and keep joining the adjacent pair the vocabulary prefers most,
// leftmost first on ties, until no pair qualifies. Same order of merges as llama.cpp's queues.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

#include "tokenizer/unicode_text.h"

namespace workbench {

// A run of bytes of the merged text.
struct SymbolSpan {
    uint32_t begin = 0;
    uint32_t size = 0;
};

// `priority(left, right)` returns how strongly the adjacent symbols should merge (higher first)
// or nullopt when they never merge; `left` and `right` are adjacent views into `text`.
template <typename PriorityFn>
std::vector<SymbolSpan> merge_symbols(std::string_view text, PriorityFn&& priority) {
    struct Symbol {
        int prev;
        int next;
        uint32_t begin;
        uint32_t size;  // 0 once merged into its left neighbour
    };
    struct Candidate {
        double priority;
        int left;
        int right;
        uint32_t size;  // combined size when queued; a mismatch later means the pair is stale
    };
    struct Lower {
        bool operator()(const Candidate& a, const Candidate& b) const {
            return a.priority < b.priority || (a.priority == b.priority && a.left > b.left);
        }
    };

    std::vector<Symbol> symbols;
    symbols.reserve(text.size());
    for (uint32_t pos = 0; pos < text.size();) {
        const auto len = static_cast<uint32_t>(
            std::min(utf8_sequence_length(static_cast<unsigned char>(text[pos])), text.size() - pos));
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({index - 1, pos + len == text.size() ? -1 : index + 1, pos, len});
        pos += len;
    }

    std::priority_queue<Candidate, std::vector<Candidate>, Lower> queue;
    const auto consider = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = symbols[static_cast<size_t>(left)];
        const Symbol& r = symbols[static_cast<size_t>(right)];
        const std::optional<double> p = priority(text.substr(l.begin, l.size), text.substr(r.begin, r.size));
        if (p) queue.push({*p, left, right, l.size + r.size});
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) consider(i - 1, i);

    while (!queue.empty()) {
        const Candidate top = queue.top();
        queue.pop();
        Symbol& left = symbols[static_cast<size_t>(top.left)];
        Symbol& right = symbols[static_cast<size_t>(top.right)];
        // Symbols only grow by absorbing their right neighbour, so equal sizes mean the pair
        // still spans the same bytes it was queued for.
        if (left.size == 0 || right.size == 0 || left.size + right.size != top.size) continue;
        left.size += right.size;
        right.size = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = top.left;
        consider(left.prev, top.left);
        consider(top.left, left.next);
    }

    std::vector<SymbolSpan> spans;
    for (const Symbol& symbol : symbols) {
        if (symbol.size > 0) spans.push_back({symbol.begin, symbol.size});
    }
    return spans;
}

}  // namespace workbench
