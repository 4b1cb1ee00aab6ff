// libFuzzer target: what a client can send to constrain a reply. The first byte picks the form —
// a GBNF grammar (then followed byte by byte, with masks, over a vocabulary of single bytes and
// a few words), a JSON Schema, or a schema's regular-expression pattern. Every input must end in
// a grammar or an error, never a crash, hang or sanitizer report; and every grammar we make of a
// schema must itself parse.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
#include "workbench/json.h"
#include "workbench/structured_output.h"

namespace {

std::shared_ptr<const workbench::TokenTrie> vocabulary() {
    static const auto trie = [] {
        std::vector<std::string> pieces;
        for (int b = 0; b < 256; ++b) pieces.emplace_back(1, static_cast<char>(b));
        for (const char* w : {"{\"", "\":", "true", "null", " \"", "\"}", "ab", "abc", "\xC3\xA9", "\xE4\xB8\xAD"}) pieces.emplace_back(w);
        pieces.emplace_back();   // an end token
        return std::make_shared<const workbench::TokenTrie>(pieces, std::vector<workbench::TokenId>{static_cast<workbench::TokenId>(pieces.size() - 1)});
    }();
    return trie;
}

void follow(const std::string& gbnf, std::string_view text) {
    auto g = workbench::parse_grammar(gbnf);
    if (!g.ok()) return;
    workbench::GrammarMatcher m(std::make_shared<const workbench::Grammar>(std::move(*g)), vocabulary());
    std::vector<float> logits(static_cast<size_t>(vocabulary()->n_vocab()));
    for (size_t i = 0; i < text.size() && i < 64 && !m.dead(); ++i) {
        if (i % 16 == 0) m.mask(logits);
        const auto token = static_cast<workbench::TokenId>(static_cast<unsigned char>(text[i]) % vocabulary()->n_vocab());
        if (m.allows(token)) m.accept(token);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 3) {
        case 0: {   // GBNF, then a walk driven by the input's own bytes
            const size_t split = in.find('\x01');
            follow(std::string(in.substr(0, split)), split == std::string_view::npos ? in : in.substr(split + 1));
            break;
        }
        case 1: {   // a JSON Schema
            auto schema = workbench::parse_json(in);
            if (!schema.ok()) break;
            auto g = workbench::json_schema_grammar(*schema);
            if (g.ok() && !workbench::parse_grammar(*g).ok()) std::abort();
            if (g.ok()) follow(*g, in);
            break;
        }
        default: {   // a pattern
            auto g = workbench::json_schema_grammar(workbench::Json{{"type", "string"}, {"pattern", std::string(in)}});
            if (g.ok() && !workbench::parse_grammar(*g).ok()) std::abort();
            break;
        }
    }
    return 0;
}
