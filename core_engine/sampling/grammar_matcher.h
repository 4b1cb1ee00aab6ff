// Where a generation stands in a grammar, and which tokens may come next. The state is the set of
// the pushdown stacks still alive (each a path through the rules, its top the next byte set to
// match); a token is allowed when its bytes leave at least one alive. The mask walks a trie of
// the vocabulary's byte strings, so tokens sharing a prefix share its work, and a subtree is
// left the moment no stack survives. End-of-generation tokens are allowed exactly when a stack
// has matched all of root.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sampling/grammar.h"
#include "tokenizer/tokenizer.h"

namespace workbench {

// The vocabulary as a trie of byte strings; built once per tokenizer.
class TokenTrie {
public:
    // Each token's bytes (empty: never produced as text, a control token) and the tokens that
    // end generation, ascending.
    TokenTrie(std::vector<std::string> pieces, std::vector<TokenId> end_tokens);
    explicit TokenTrie(const Tokenizer& tokenizer) : TokenTrie(pieces_of(tokenizer), tokenizer.eog_ids()) {}
    struct Node {
        std::vector<std::pair<uint8_t, uint32_t>> children;   // by byte, ascending
        std::vector<TokenId> tokens;                           // tokens whose bytes end here
    };
    const std::vector<Node>& nodes() const { return nodes_; }
    const std::vector<std::string>& pieces() const { return pieces_; }   // per token; empty for control tokens
    const std::vector<TokenId>& end_tokens() const { return end_tokens_; }
    int32_t n_vocab() const { return static_cast<int32_t>(pieces_.size()); }

private:
    std::vector<Node> nodes_;
    std::vector<std::string> pieces_;
    std::vector<TokenId> end_tokens_;

    static std::vector<std::string> pieces_of(const Tokenizer& tokenizer) {
        std::vector<std::string> pieces(static_cast<size_t>(tokenizer.n_vocab()));
        for (TokenId id = 0; id < tokenizer.n_vocab(); ++id)
            if (!tokenizer.is_control(id)) pieces[static_cast<size_t>(id)] = tokenizer.token_to_piece(id, false);
        return pieces;
    }
};

class GrammarMatcher {
public:
    GrammarMatcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie);

    bool allows(TokenId token);
    // Sets every token the grammar does not allow next to -infinity; how many stay allowed.
    int32_t mask(std::span<float> logits);
    // Moves past `token` (one that allows() admits; anything else leaves no stack alive).
    void accept(TokenId token);
    // Root matched in full: an end-of-generation token may come now.
    bool complete() const;
    // No stack alive: nothing can follow (a token the grammar refused was accepted).
    bool dead() const { return state_ < 0; }
    // The grammar passed the matcher's budget (too many parses alive at once, or states met):
    // what it allows can no longer be told; the request must end with an error.
    bool overflowed() const { return overflow_; }

private:
    using Stack = std::vector<uint32_t>;
    using StackSet = std::vector<Stack>;   // sorted, unique
    std::shared_ptr<const Grammar> g_;
    std::shared_ptr<const TokenTrie> trie_;
    // The stack sets met so far, each a state, with its transitions by byte filled in as they are
    // first taken: a mask that walks the vocabulary's trie again through states already met costs
    // an array lookup per node instead of stack copies (inside a string, every character leads
    // back to the same few states).
    std::vector<StackSet> sets_;
    std::vector<std::array<int32_t, 256>> next_;   // kUnknown, kDead or a state
    std::vector<uint8_t> complete_;
    std::unordered_map<size_t, std::vector<int32_t>> by_hash_;
    int32_t state_ = -1;
    StackSet scratch_;
    bool overflow_ = false;

    static constexpr int32_t kUnknown = -2, kDead = -1;
    int32_t intern(StackSet set);
    int32_t step(int32_t state, uint8_t byte);
    void forget_states_if_many();
    // Pushes `s` with each rule on its top expanded until a byte set is on top (or it is empty);
    // false past the budget.
    bool expand(Stack s, StackSet& out) const;
    bool advance(const StackSet& from, uint8_t byte, StackSet& out) const;
    void walk(uint32_t node, int32_t state, std::vector<char>& allowed);
};

}  // namespace workbench
