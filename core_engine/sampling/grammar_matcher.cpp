// The pushdown matcher over a compiled grammar, and the vocabulary trie its mask walks.
#include "sampling/grammar_matcher.h"

#include <algorithm>
#include <limits>

namespace workbench {

TokenTrie::TokenTrie(const Tokenizer& tokenizer) {
    nodes_.emplace_back();
    const int32_t n = tokenizer.n_vocab();
    pieces_.resize(static_cast<size_t>(n));
    for (TokenId id = 0; id < n; ++id) {
        if (tokenizer.is_eog(id)) end_tokens_.push_back(id);
        if (tokenizer.is_control(id)) continue;
        std::string piece = tokenizer.token_to_piece(id, false);
        if (piece.empty()) continue;
        uint32_t at = 0;
        for (const char c : piece) {
            const auto b = static_cast<uint8_t>(c);
            auto& kids = nodes_[at].children;
            auto it = std::lower_bound(kids.begin(), kids.end(), b, [](const auto& kid, uint8_t x) { return kid.first < x; });
            if (it == kids.end() || it->first != b) {
                const auto child = static_cast<uint32_t>(nodes_.size());
                it = kids.insert(it, {b, child});
                nodes_.emplace_back();   // may move kids' storage: `it` is not used after this
                at = child;
            } else {
                at = it->second;
            }
        }
        nodes_[at].tokens.push_back(id);
        pieces_[static_cast<size_t>(id)] = std::move(piece);
    }
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie)
    : g_(std::move(grammar)), trie_(std::move(trie)) {
    for (uint32_t alt : g_->alternatives[g_->root]) {
        Stack s;
        if (g_->elements[alt].kind != Grammar::Element::Kind::end) s.push_back(alt);
        expand(std::move(s), stacks_);
    }
    std::sort(stacks_.begin(), stacks_.end());
    stacks_.erase(std::unique(stacks_.begin(), stacks_.end()), stacks_.end());
}

void GrammarMatcher::expand(Stack s, std::vector<Stack>& out) const {
    if (s.empty() || g_->elements[s.back()].kind == Grammar::Element::Kind::bytes) {
        out.push_back(std::move(s));
        return;
    }
    const uint32_t at = s.back();
    s.pop_back();
    if (g_->elements[at + 1].kind != Grammar::Element::Kind::end) s.push_back(at + 1);
    const auto& alts = g_->alternatives[g_->elements[at].value];
    for (size_t i = 0; i < alts.size(); ++i) {
        Stack next = i + 1 < alts.size() ? s : std::move(s);
        if (g_->elements[alts[i]].kind != Grammar::Element::Kind::end) next.push_back(alts[i]);
        expand(std::move(next), out);
    }
}

void GrammarMatcher::advance(const std::vector<Stack>& from, uint8_t byte, std::vector<Stack>& out) const {
    out.clear();
    for (const Stack& s : from) {
        if (s.empty()) continue;
        const uint32_t at = s.back();
        if (!g_->byte_sets[g_->elements[at].value][byte]) continue;
        Stack next(s.begin(), s.end() - 1);
        if (g_->elements[at + 1].kind != Grammar::Element::Kind::end) next.push_back(at + 1);
        expand(std::move(next), out);
    }
    if (out.size() > 1) {
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
    }
}

bool GrammarMatcher::complete() const {
    return std::any_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return s.empty(); });
}

bool GrammarMatcher::allows(TokenId token) const {
    if (token < 0 || token >= trie_->n_vocab()) return false;
    const std::string& piece = trie_->pieces()[static_cast<size_t>(token)];
    if (piece.empty()) return complete() && std::binary_search(trie_->end_tokens().begin(), trie_->end_tokens().end(), token);
    std::vector<Stack> cur = stacks_, next;
    for (const char c : piece) {
        advance(cur, static_cast<uint8_t>(c), next);
        if (next.empty()) return false;
        cur.swap(next);
    }
    return true;
}

void GrammarMatcher::walk(uint32_t node, const std::vector<Stack>& stacks, std::vector<char>& allowed) const {
    std::vector<Stack> next;
    for (const auto& [byte, child] : trie_->nodes()[node].children) {
        advance(stacks, byte, next);
        if (next.empty()) continue;
        for (TokenId t : trie_->nodes()[child].tokens) allowed[static_cast<size_t>(t)] = 1;
        if (!trie_->nodes()[child].children.empty()) walk(child, next, allowed);
    }
}

int32_t GrammarMatcher::mask(std::span<float> logits) const {
    std::vector<char> allowed(static_cast<size_t>(trie_->n_vocab()), 0);
    walk(0, stacks_, allowed);
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
    if (token < 0 || token >= trie_->n_vocab()) {
        stacks_.clear();
        return;
    }
    const std::string& piece = trie_->pieces()[static_cast<size_t>(token)];
    if (piece.empty()) {   // an end token: nothing follows
        stacks_.clear();
        return;
    }
    std::vector<Stack> next;
    for (const char c : piece) {
        advance(stacks_, static_cast<uint8_t>(c), next);
        stacks_.swap(next);
        if (stacks_.empty()) return;
    }
}

}  // namespace workbench
