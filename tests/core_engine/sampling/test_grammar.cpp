// Grammars for constrained sampling: GBNF parse errors name the line; matching is byte-exact
// (UTF-8 classes, repetition bounds, bounded whitespace); the trie mask agrees token for token
// with checking each token alone, on the default model's real vocabulary; JSON Schemas outside
// the supported subset are refused naming the keyword; and random walks through the vocabulary
// under a schema's mask always end in JSON that parses and has the schema's shape.
#include <QFile>
#include <QTest>

#include <random>

#include "gguf/gguf_file.h"
#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
#include "sampling/sampler.h"
#include "sampling/token_mask.h"
#include "tests/skip_missing.h"
#include "tokenizer/vocab_loader.h"
#include "workbench/structured_output.h"

using namespace workbench;

namespace {

// Whether `text` is a whole match of the grammar, byte by byte (a trie of one-byte tokens).
class ByteTokenizer final : public Tokenizer {
public:
    static std::unique_ptr<Tokenizer> make() {
        TokenizerVocab v;
        v.model = "gpt2";
        for (int b = 0; b < 256; ++b) v.tokens.push_back(std::string(1, static_cast<char>(b)));
        v.tokens.push_back("</s>");
        v.token_types.assign(256, 1);
        v.token_types.push_back(3);
        v.eos_id = 256;
        return std::unique_ptr<Tokenizer>(new ByteTokenizer(std::move(v)));
    }
    std::vector<TokenId> encode(std::string_view, bool, bool, std::span<const TextRange>) const override { return {}; }
    std::string token_to_piece(TokenId id, bool) const override { return id < 256 ? std::string(1, static_cast<char>(id)) : std::string(); }
    TokenId find_token(std::string_view) const override { return -1; }

private:
    explicit ByteTokenizer(TokenizerVocab v) : Tokenizer(std::move(v)) { eog_ids_ = {256}; }
};

std::shared_ptr<const TokenTrie> byte_trie() {
    static const auto tok = ByteTokenizer::make();
    static const auto trie = std::make_shared<const TokenTrie>(*tok);
    return trie;
}

bool matches(const std::string& gbnf, const std::string& text) {
    auto g = parse_grammar(gbnf);
    if (!g.ok()) return false;
    GrammarMatcher m(std::make_shared<const Grammar>(std::move(*g)), byte_trie());
    for (const char c : text) {
        const auto b = static_cast<TokenId>(static_cast<unsigned char>(c));
        if (!m.allows(b)) return false;
        m.accept(b);
    }
    return m.complete();
}

Result<std::unique_ptr<Tokenizer>> default_tokenizer() {
    WB_ASSIGN_OR_RETURN(auto file, GgufFile::open(WB_DEFAULT_MODEL_PATH));
    WB_ASSIGN_OR_RETURN(TokenizerVocab v, load_tokenizer_vocab(*file));
    return Tokenizer::create(std::move(v));
}

}  // namespace

class TestGrammar : public QObject {
    Q_OBJECT
private slots:
    void errors_name_the_line();
    void matches_byte_for_byte();
    void json_grammar_bounds_whitespace();
    void schemas_compile_to_their_shape();
    void unsupported_keywords_are_named();
    void mask_agrees_with_each_token_on_the_real_vocabulary();
    void bias_and_grammar_share_one_mask_stage();
    void random_walks_end_in_valid_json();
    void hostile_grammars_end_with_an_error();
};

// The bodies are hidden from moc, which misreads some of their raw string literals.
#ifndef Q_MOC_RUN

void TestGrammar::errors_name_the_line() {
    auto expect = [](const char* gbnf, const char* fragment) {
        const auto g = parse_grammar(gbnf);
        QVERIFY2(!g.ok(), gbnf);
        QVERIFY2(g.status().message().find(fragment) != std::string::npos, g.status().message().c_str());
    };
    expect("root ::= \"a\"\nx ::= y", "grammar line 2: rule 'y' is used but not defined");
    expect("x ::= \"a\"", "no 'root' rule");
    expect("root ::= root \"a\" | \"b\"", "left-recursive");
    expect("root ::= x\nx ::= \"a\"? root", "left-recursive");
    expect("root ::= \"abc", "closing '\"'");
    expect("root ::= [a-", "']'");
    expect("root ::= (\"a\"", "')'");
    expect("root ::= \"a\"{3,1}", "n below m");
    expect("root ::= \"a\"\nroot ::= \"b\"", "defined twice");
    expect("root ::= [z-a]", "backwards");
}

void TestGrammar::matches_byte_for_byte() {
    QVERIFY(matches("root ::= \"ab\" | \"c\"+", "ccc"));
    QVERIFY(!matches("root ::= \"ab\" | \"c\"+", "abc"));
    QVERIFY(matches("root ::= [a-c]{2,3}", "abc"));
    QVERIFY(!matches("root ::= [a-c]{2,3}", "a"));
    QVERIFY(!matches("root ::= [a-c]{2,3}", "abca"));
    QVERIFY(matches("root ::= x*\nx ::= \"(\" x* \")\"", "(()(()))"));
    QVERIFY(!matches("root ::= x*\nx ::= \"(\" x* \")\"", "(()"));
    // Classes are code points: é is two bytes, 中 three, 😀 four; a negated class admits only
    // whole, valid characters (never a lone continuation byte or a surrogate).
    QVERIFY(matches("root ::= [a-zé]+", "café"));
    QVERIFY(matches("root ::= [^a]", "中"));
    QVERIFY(matches("root ::= [^a]", "\xF0\x9F\x98\x80"));
    QVERIFY(!matches("root ::= [^a]", "\x80"));
    QVERIFY(!matches("root ::= [^a]", "\xED\xA0\x80"));   // U+D800
    QVERIFY(!matches("root ::= [^a]", "\xC0\xAF"));       // overlong '/'
    QVERIFY(matches("root ::= [\\u4E00-\\u4E2D] \"\\x41\"", "中A"));
    QVERIFY(matches("# a comment\nroot ::= ( \"a\"\n  | \"b\" ) # trailing\n", "b"));
}

void TestGrammar::json_grammar_bounds_whitespace() {
    const std::string g = json_object_grammar();
    QVERIFY(matches(g, "{\"a\": [1, 2.5e3, \"x\\u00e9\", true, null, {}]}"));
    QVERIFY(matches(g, "{\n  \"a\": 1\n}"));
    QVERIFY(!matches(g, "[1]"));                              // an object, not any value
    QVERIFY(!matches(g, "{\"a\": 01}"));
    QVERIFY(!matches(g, "{\"a\":   1}"));                     // three spaces: past the bound
    QVERIFY(!matches(g, "{\"a\": 12345678901234567}"));       // 17 digits
    QVERIFY(!matches(g, "{\"a\": \"\x01\"}"));                // a raw control character
}

void TestGrammar::schemas_compile_to_their_shape() {
    auto grammar = [](const char* schema) {
        auto g = json_schema_grammar(*parse_json(schema));
        return g.ok() ? *g : "error: " + g.status().message();
    };
    const std::string person = grammar(R"({"type":"object","properties":{"name":{"type":"string","maxLength":5},
        "age":{"type":"integer","minimum":18,"maximum":130},"tags":{"type":"array","items":{"enum":["a","b"]},"maxItems":2}},
        "required":["name"]})");
    QVERIFY(matches(person, R"({"name": "Ann", "age": 30, "tags": ["a", "b"]})"));
    QVERIFY(matches(person, R"({"name": "Ann"})"));
    QVERIFY(matches(person, R"({"name": "Ann", "tags": []})"));
    QVERIFY(!matches(person, R"({"age": 30})"));                          // name is required
    QVERIFY(!matches(person, R"({"name": "Annabel"})"));                  // maxLength 5
    QVERIFY(!matches(person, R"({"name": "A", "age": 17})"));             // minimum 18
    QVERIFY(!matches(person, R"({"name": "A", "age": 131})"));            // maximum 130
    QVERIFY(matches(person, R"({"name": "A", "age": 130})"));
    QVERIFY(!matches(person, R"({"name": "A", "tags": ["a", "b", "a"]})"));
    QVERIFY(!matches(person, R"({"name": "A", "extra": 1})"));            // no additionalProperties
    QVERIFY(!matches(person, R"({"age": 30, "name": "A"})"));             // the schema's order
    const std::string ranged = grammar(R"({"type":"integer","exclusiveMinimum":-105,"maximum":-7})");
    for (int v = -110; v <= 0; ++v) QCOMPARE(matches(ranged, std::to_string(v)), v > -105 && v <= -7);
    const std::string refs = grammar(R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},
        "next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},"required":["v","next"]}},"$ref":"#/$defs/node"})");
    QVERIFY(matches(refs, R"({"v": 1, "next": {"v": 2, "next": null}})"));
    QVERIFY(!matches(refs, R"({"v": 1})"));
    const std::string pattern = grammar(R"({"type":"string","pattern":"^[A-Z]{2}-\\d{3}$"})");
    QVERIFY(matches(pattern, "\"AB-123\""));
    QVERIFY(!matches(pattern, "\"AB-12\""));
    QVERIFY(!matches(pattern, "\"ab-123\""));
    const std::string unanchored = grammar(R"({"type":"string","pattern":"cat|dog"})");
    QVERIFY(matches(unanchored, "\"a dog here\""));
    QVERIFY(!matches(unanchored, "\"a bird\""));
    const std::string extra = grammar(R"({"type":"object","additionalProperties":{"type":"number"}})");
    QVERIFY(matches(extra, R"({"x": 1.5, "y": 2})"));
    QVERIFY(matches(extra, R"({})"));
    QVERIFY(!matches(extra, R"({"x": "s"})"));
    const std::string any = grammar(R"({"type":"object"})");   // no properties listed: any object
    QVERIFY(matches(any, R"({"k": [1, {"z": null}]})"));
    QVERIFY(matches(any, "{}"));
    QVERIFY(!matches(any, "[]"));
}

void TestGrammar::unsupported_keywords_are_named() {
    auto refused = [](const char* schema, const char* keyword) {
        auto g = json_schema_grammar(*parse_json(schema));
        QVERIFY2(!g.ok(), schema);
        QVERIFY2(g.status().message().find(keyword) != std::string::npos, g.status().message().c_str());
    };
    refused(R"({"type":"string","format":"date-time"})", "'format'");
    refused(R"({"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}})", "'uniqueItems' at #/properties/a");
    refused(R"({"type":"number","minimum":0.5})", "'minimum' on a number");
    refused(R"({"allOf":[{"type":"string"},{"maxLength":3}]})", "'allOf' of more than one");
    refused(R"({"$ref":"#/$defs/missing"})", "points at nothing");
    refused(R"({"$ref":"https://example.com/s.json"})", "only references within the schema");
    refused(R"({"type":"string","pattern":"(a)\\1"})", "back-references");
    refused(R"({"type":"integer","minimum":10,"maximum":3})", "no integer");
    refused(R"({"anyOf":[{"type":"integer"}],"minimum":5})", "'minimum' beside 'anyOf'");
    refused(R"({"properties":{"a":{"type":"integer"}},"additionalProperties":true})", "'additionalProperties' other than false beside 'properties'");
    // A type listed twice is compiled once (else 40 levels would cost 2^40); a grammar past 4 MiB is refused.
    Json deep = Json{{"type", "string"}};
    for (int i = 0; i < 40; ++i) deep = Json{{"type", Json::array({"object", "object"})}, {"properties", {{"a", deep}}}};
    QVERIFY(json_schema_grammar(deep).ok());
    refused(dump_json(Json{{"enum", Json::array({std::string(5u << 20, 'x')})}}).c_str(), "more than 4 MiB");
    // Annotations are not constraints: accepted.
    QVERIFY(json_schema_grammar(*parse_json(R"({"title":"T","description":"d","type":"string","examples":["x"]})")).ok());
}

// The trie walk and the one-token check are separate code: they must agree on every token of
// the real vocabulary, in states inside and between the grammar's tokens.
void TestGrammar::mask_agrees_with_each_token_on_the_real_vocabulary() {
    if (!QFile::exists(WB_DEFAULT_MODEL_PATH)) WB_SKIP_MISSING("the default model is not installed");
    auto tok = default_tokenizer();
    QVERIFY(tok.ok());
    const auto trie = std::make_shared<const TokenTrie>(**tok);
    auto g = json_schema_grammar(*parse_json(R"({"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer"}},"required":["name","n"]})"));
    QVERIFY(g.ok());
    const auto grammar = std::make_shared<const Grammar>(*parse_grammar(*g));
    for (const char* prefix : {"", "{", "{\"na", "{\"name\": \"Jo", "{\"name\": \"Jo\", \"n\": 1", "{\"name\": \"Jo\", \"n\": 12}"}) {
        GrammarMatcher m(grammar, trie);
        for (TokenId t : (*tok)->encode(prefix, false, false)) {
            QVERIFY2(m.allows(t), prefix);
            m.accept(t);
        }
        std::vector<float> logits(static_cast<size_t>((*tok)->n_vocab()), 0.0f);
        const int32_t n = m.mask(logits);
        int32_t agree = 0;
        for (TokenId t = 0; t < (*tok)->n_vocab(); ++t) {
            const bool allowed = std::isfinite(logits[static_cast<size_t>(t)]);
            if (allowed != m.allows(t)) QFAIL(qPrintable(QStringLiteral("token %1 after '%2': mask %3, allows %4").arg(t).arg(prefix).arg(allowed).arg(!allowed)));
            agree += allowed;
        }
        QCOMPARE(agree, n);
        QVERIFY2(n > 0, prefix);
        if (std::string(prefix).back() == '}') QCOMPARE(n, static_cast<int32_t>(trie->end_tokens().size()));   // done: only the end
    }
}

// logit_bias and the grammar in one stage (sampling/token_mask.h): a bias moves only the tokens
// the grammar allows (a refused token stays refused whatever its bias), nothing to apply leaves
// the row itself, and a bias alone shapes a copy.
void TestGrammar::bias_and_grammar_share_one_mask_stage() {
    if (!QFile::exists(WB_DEFAULT_MODEL_PATH)) WB_SKIP_MISSING("the default model is not installed");
    auto tok = default_tokenizer();
    QVERIFY(tok.ok());
    const auto trie = std::make_shared<const TokenTrie>(**tok);
    const auto grammar = std::make_shared<const Grammar>(*parse_grammar(R"(root ::= "yes" | "no")"));
    GrammarMatcher m(grammar, trie);
    const std::vector<TokenId> yes = (*tok)->encode("yes", false, false), no = (*tok)->encode("no", false, false);
    QCOMPARE(yes.size(), size_t(1));
    QCOMPARE(no.size(), size_t(1));
    const TokenId refused = (*tok)->encode("maybe", false, false).front();
    const std::vector<float> row(static_cast<size_t>((*tok)->n_vocab()), 1.0f);
    std::vector<float> scratch;
    QCOMPARE(mask_logits(row, {}, nullptr, scratch).data(), row.data());   // nothing to apply: the row itself
    const std::vector<LogitBias> bias = {{yes[0], -100.0f}, {no[0], 2.5f}, {refused, 100.0f}, {-3, 1.0f}, {1 << 30, 1.0f}};
    const std::span<const float> biased = mask_logits(row, bias, nullptr, scratch);
    QCOMPARE(biased[static_cast<size_t>(yes[0])], -99.0f);
    QCOMPARE(biased[static_cast<size_t>(refused)], 101.0f);
    QCOMPARE(row[static_cast<size_t>(refused)], 1.0f);   // the model's row is not touched
    int32_t n_allowed = 0;
    const std::span<const float> masked = mask_logits(row, bias, &m, scratch, &n_allowed);
    QVERIFY(n_allowed >= 2);
    QCOMPARE(masked[static_cast<size_t>(no[0])], 3.5f);
    QCOMPARE(masked[static_cast<size_t>(yes[0])], -99.0f);   // allowed, pushed down
    QVERIFY(std::isinf(masked[static_cast<size_t>(refused)]));   // refused, whatever its bias
    // Greedy over that row: "no" (yes is banned by the bias, maybe by the grammar).
    SamplingParams params;
    params.temperature = 0.0f;
    Sampler greedy(params);
    QCOMPARE(greedy.sample(masked), no[0]);
}

// Random walks: at each step a uniformly random allowed token of the real vocabulary, until
// an end token. Every walk's text parses as JSON of the schema's shape.
void TestGrammar::random_walks_end_in_valid_json() {
    if (!QFile::exists(WB_DEFAULT_MODEL_PATH)) WB_SKIP_MISSING("the default model is not installed");
    auto tok = default_tokenizer();
    QVERIFY(tok.ok());
    const auto trie = std::make_shared<const TokenTrie>(**tok);
    const Json schema = *parse_json(R"({"type":"object","properties":{"id":{"type":"integer","minimum":0,"maximum":999},
        "label":{"type":"string","maxLength":12},"ok":{"type":"boolean"},"kind":{"enum":["x","y",3]},
        "xs":{"type":"array","items":{"type":"number"},"maxItems":3}},"required":["id","label","kind"]})");
    const auto grammar = std::make_shared<const Grammar>(*parse_grammar(*json_schema_grammar(schema)));
    int32_t finished = 0;
    for (uint32_t seed = 1; seed <= 40; ++seed) {
        std::mt19937 rng(seed);
        GrammarMatcher m(grammar, trie);
        std::string text;
        std::vector<float> logits(static_cast<size_t>((*tok)->n_vocab()));
        bool ended = false;
        for (int step = 0; step < 400 && !ended; ++step) {
            std::fill(logits.begin(), logits.end(), 0.0f);
            QVERIFY(m.mask(logits) > 0);
            std::vector<TokenId> allowed;
            for (TokenId t = 0; t < (*tok)->n_vocab(); ++t)
                if (std::isfinite(logits[static_cast<size_t>(t)])) allowed.push_back(t);
            // Half the time an end token when one is allowed, so walks finish.
            TokenId pick = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
            if (m.complete() && rng() % 2 == 0) pick = trie->end_tokens().front();
            if ((*tok)->is_eog(pick)) {
                ended = true;
                break;
            }
            text += (*tok)->token_to_piece(pick, false);
            m.accept(pick);
        }
        if (!ended) continue;   // ran out of steps inside a long string: not a failure of the grammar
        ++finished;
        auto j = parse_json(text);
        QVERIFY2(j.ok(), text.c_str());
        QVERIFY2(j->is_object() && (*j)["id"].is_number_integer() && (*j)["id"].get<int64_t>() >= 0 && (*j)["id"].get<int64_t>() <= 999, text.c_str());
        QVERIFY2((*j)["label"].is_string(), text.c_str());
        QVERIFY2((*j)["kind"] == "x" || (*j)["kind"] == "y" || (*j)["kind"] == 3, text.c_str());
        if (j->contains("xs")) QVERIFY2((*j)["xs"].is_array() && (*j)["xs"].size() <= 3, text.c_str());
        if (j->contains("ok")) QVERIFY2((*j)["ok"].is_boolean(), text.c_str());
    }
    QVERIFY2(finished >= 20, qPrintable(QString::number(finished)));
}

// What a client may send: deep nesting, long chains of empty rules, grammars that keep
// exponentially many parses alive, huge names. Each ends with an error, within its budget.
void TestGrammar::hostile_grammars_end_with_an_error() {
    const std::string deep = "root ::= " + std::string(100000, '(') + "\"a\"" + std::string(100000, ')');
    QVERIFY(!parse_grammar(deep).ok());
    QVERIFY(parse_grammar(deep).status().message().find("nested deeper") != std::string::npos);
    QVERIFY(!parse_grammar("root ::= " + std::string(300, 'n') + "\n" + std::string(300, 'n') + " ::= \"a\"").ok());
    auto overflows = [](const std::string& gbnf, const std::string& text) {
        auto g = parse_grammar(gbnf);
        if (!g.ok()) return false;
        GrammarMatcher m(std::make_shared<const Grammar>(std::move(*g)), byte_trie());
        for (const char c : text) {
            if (m.overflowed()) return true;
            const auto b = static_cast<TokenId>(static_cast<unsigned char>(c));
            if (!m.allows(b)) return m.overflowed();
            m.accept(b);
        }
        std::vector<float> logits(257, 0.0f);
        m.mask(logits);
        return m.overflowed();
    };
    QVERIFY(overflows("root ::= (\"a\"?){0,100000}", "aaa"));                               // empty rules chained deep
    QVERIFY(overflows("root ::= a\na ::= \"(\" a \")\" | \"(\" a \"]\"", std::string(40, '(')));   // parses doubling per byte
    QVERIFY(!overflows("root ::= a\na ::= \"(\" a \")\" | \"x\"", std::string(200, '(')));        // deep but one parse: fine
    // Patterns: deep groups refused; \x and \u escapes read, in and out of classes.
    QVERIFY(!json_schema_grammar(Json{{"type", "string"}, {"pattern", std::string(1000, '(') + "a" + std::string(1000, ')')}}).ok());
    const auto cjk = json_schema_grammar(*parse_json(R"({"type":"string","pattern":"^[\\u4e00-\\u9fa5]+\\x21$"})"));
    QVERIFY2(cjk.ok(), cjk.ok() ? "" : cjk.status().message().c_str());
    QVERIFY(matches(*cjk, "\"中文!\""));
    QVERIFY(!matches(*cjk, "\"abc!\""));
}

#endif

QTEST_APPLESS_MAIN(TestGrammar)
#include "test_grammar.moc"
