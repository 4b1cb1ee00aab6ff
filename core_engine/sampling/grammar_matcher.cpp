// The pushdown matcher over a compiled grammar, and the vocabulary trie its mask walks.
#include "sampling/grammar_matcher.h"

#include <algorithm>
#include <limits>

namespace workbench {

TokenTrie::TokenTrie(std::vector<std::string> pieces, std::vector<TokenId> end_tokens)
    : pieces_(std::move(pieces)), end_tokens_(std::move(end_tokens)) {
    nodes_.emplace_back();
    std::sort(end_tokens_.begin(), end_tokens_.end());
    for (size_t id = 0; id < pieces_.size(); ++id) {
        const std::string& piece = pieces_[id];
        if (piece.empty()) continue;
        uint32_t at = 0;
        for (const char c : piece) {
            const auto b = static_cast<uint8_t>(c);
            auto& kids = nodes_[at].children;
            auto it = std::lower_bound(kids.begin(), kids.end(), b, [](const auto& kid, uint8_t x) { return kid.first < x; });
            if (it == kids.end() || it->first != b) {
                const auto child = static_cast<uint32_t>(nodes_.size());
                kids.insert(it, {b, child});
                nodes_.emplace_back();   // may move `kids`: not used after this
                at = child;
            } else {
                at = it->second;
            }
        }
        nodes_[at].tokens.push_back(static_cast<TokenId>(id));
    }
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie)
    : g_(std::move(grammar)), trie_(std::move(trie)) {
    StackSet start;
    for (uint32_t alt : g_->alternatives[g_->root]) {
        Stack s;
        if (g_->elements[alt].kind != Grammar::Element::Kind::end) s.push_back(alt);
        if (!expand(std::move(s), start)) overflow_ = true;
    }
    std::sort(start.begin(), start.end());
    start.erase(std::unique(start.begin(), start.end()), start.end());
    state_ = start.empty() || overflow_ ? kDead : intern(std::move(start));
}

int32_t GrammarMatcher::intern(StackSet set) {
    size_t h = set.size();
    for (const Stack& s : set)
        for (uint32_t v : s) h = h * 1000003u ^ v;
    auto& bucket = by_hash_[h];
    for (int32_t id : bucket)
        if (sets_[static_cast<size_t>(id)] == set) return id;
    const auto id = static_cast<int32_t>(sets_.size());
    complete_.push_back(std::any_of(set.begin(), set.end(), [](const Stack& s) { return s.empty(); }));
    sets_.push_back(std::move(set));
    next_.emplace_back();
    next_.back().fill(kUnknown);
    bucket.push_back(id);
    return id;
}

int32_t GrammarMatcher::step(int32_t state, uint8_t byte) {
    int32_t n = next_[static_cast<size_t>(state)][byte];
    if (n != kUnknown) return n;
    constexpr size_t kMaxStates = 60'000;   // within one walk (between walks: forget_states_if_many)
    if (overflow_ || sets_.size() >= kMaxStates || !advance(sets_[static_cast<size_t>(state)], byte, scratch_)) {
        overflow_ = true;
        return kDead;
    }
    n = scratch_.empty() ? kDead : intern(std::move(scratch_));
    scratch_ = {};
    next_[static_cast<size_t>(state)][byte] = n;
    return n;
}

// A long generation through a grammar of many states (bounded repetitions, long literals) must
// not grow the table without end: past a bound it starts again from the current state.
void GrammarMatcher::forget_states_if_many() {
    constexpr size_t kMaxStates = 20'000;
    if (sets_.size() < kMaxStates || state_ < 0) return;
    StackSet current = std::move(sets_[static_cast<size_t>(state_)]);
    sets_.clear();
    next_.clear();
    complete_.clear();
    by_hash_.clear();
    state_ = intern(std::move(current));
}

// Budgets against grammars that keep many parses alive (a(b|c) nested without end) or chain
// empty rules deeply; a grammar past them ends its request with an error.
constexpr size_t kMaxStacks = 4096;          // parses alive at once
constexpr size_t kMaxStackDepth = 20'000;    // rules open inside one another
constexpr size_t kMaxExpansions = 200'000;   // rule expansions for one byte

bool GrammarMatcher::expand(Stack s, StackSet& out) const {
    std::vector<Stack> work;
    work.push_back(std::move(s));
    size_t expansions = 0;
    while (!work.empty()) {
        Stack cur = std::move(work.back());
        work.pop_back();
        if (cur.empty() || g_->elements[cur.back()].kind == Grammar::Element::Kind::bytes) {
            out.push_back(std::move(cur));
            if (out.size() > kMaxStacks) return false;
            continue;
        }
        if (cur.size() > kMaxStackDepth || ++expansions > kMaxExpansions) return false;
        const uint32_t at = cur.back();
        cur.pop_back();
        if (g_->elements[at + 1].kind != Grammar::Element::Kind::end) cur.push_back(at + 1);
        const auto& alts = g_->alternatives[g_->elements[at].value];
        for (size_t i = 0; i < alts.size(); ++i) {
            Stack next = i + 1 < alts.size() ? cur : std::move(cur);
            if (g_->elements[alts[i]].kind != Grammar::Element::Kind::end) next.push_back(alts[i]);
            work.push_back(std::move(next));
        }
    }
    return true;
}

bool GrammarMatcher::advance(const StackSet& from, uint8_t byte, StackSet& out) const {
    out.clear();
    for (const Stack& s : from) {
        if (s.empty()) continue;
        const uint32_t at = s.back();
        if (!g_->byte_sets[g_->elements[at].value][byte]) continue;
        Stack next(s.begin(), s.end() - 1);
        if (g_->elements[at + 1].kind != Grammar::Element::Kind::end) next.push_back(at + 1);
        if (!expand(std::move(next), out)) return false;
    }
    if (out.size() > 1) {
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
    }
    return true;
}

bool GrammarMatcher::complete() const { return state_ >= 0 && complete_[static_cast<size_t>(state_)]; }

bool GrammarMatcher::allows(TokenId token) {
    if (token < 0 || token >= trie_->n_vocab() || state_ < 0) return false;
    const std::string& piece = trie_->pieces()[static_cast<size_t>(token)];
    if (piece.empty()) return complete() && std::binary_search(trie_->end_tokens().begin(), trie_->end_tokens().end(), token);
    int32_t s = state_;
    for (const char c : piece)
        if ((s = step(s, static_cast<uint8_t>(c))) < 0) return false;
    return true;
}

void GrammarMatcher::walk(uint32_t node, int32_t state, std::vector<char>& allowed) {
    for (const auto& [byte, child] : trie_->nodes()[node].children) {
        const int32_t s = step(state, byte);
        if (s < 0) continue;
        const TokenTrie::Node& c = trie_->nodes()[child];
        for (TokenId t : c.tokens) allowed[static_cast<size_t>(t)] = 1;
        if (!c.children.empty()) walk(child, s, allowed);
    }
}

int32_t GrammarMatcher::mask(std::span<float> logits) {
    forget_states_if_many();
    std::vector<char> allowed(static_cast<size_t>(trie_->n_vocab()), 0);
    if (state_ >= 0) walk(0, state_, allowed);
    if (complete())
        for (TokenId t : trie_->end_tokens()) allowed[static_cast<size_t>(t)] = 1;
    int32_t n = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
        if (i < allowed.size() && allowed[i]) ++n;
        else logits[i] = -std::numeric_limits<float>::infinity();
    }
    return n;
}

void GrammarMatcher::accept(TokenId token) {
    forget_states_if_many();
    if (token < 0 || token >= trie_->n_vocab() || state_ < 0) {
        state_ = kDead;
        return;
    }
    const std::string& piece = trie_->pieces()[static_cast<size_t>(token)];
    if (piece.empty()) {   // an end token: nothing follows
        state_ = kDead;
        return;
    }
    for (const char c : piece)
        if ((state_ = step(state_, static_cast<uint8_t>(c))) < 0) return;
}

}  // namespace workbench
