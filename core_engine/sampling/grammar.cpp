// GBNF parsed straight into byte-level rules: literals become one byte set per byte, classes
// become the UTF-8 sequences of their code points (the utf8-ranges construction: split a range
// where the encoded length changes, then where its continuation bytes stop spanning 0x80–0xBF),
// and each group or repetition becomes a rule of its own (x* as R ::= x R | ε, so a long run
// never deepens the matcher's stacks).
#include "sampling/grammar.h"

#include <algorithm>
#include <unordered_map>

namespace workbench {
namespace {

constexpr size_t kMaxElements = 4u << 20;   // the compiled grammar, however it is written
constexpr int64_t kMaxRepeat = 100'000;      // the n of x{m,n}
constexpr int32_t kMaxNesting = 256;          // groups inside groups
constexpr size_t kMaxName = 256;              // a rule's name

struct Sym {
    bool rule = false;
    uint32_t value = 0;
};
using Alt = std::vector<Sym>;
using ByteRange = std::pair<uint8_t, uint8_t>;

void encode_utf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// The byte-range sequences that spell exactly the scalar values in [lo, hi].
void utf8_sequences(uint32_t lo, uint32_t hi, std::vector<std::vector<ByteRange>>& out) {
    if (lo > hi) return;
    if (lo <= 0xDFFF && hi >= 0xD800) {   // surrogates are not characters
        if (lo < 0xD800) utf8_sequences(lo, 0xD7FF, out);
        if (hi > 0xDFFF) utf8_sequences(0xE000, hi, out);
        return;
    }
    for (uint32_t max : {0x7Fu, 0x7FFu, 0xFFFFu})
        if (lo <= max && hi > max) {
            utf8_sequences(lo, max, out);
            utf8_sequences(max + 1, hi, out);
            return;
        }
    if (hi <= 0x7F) {
        out.push_back({{static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)}});
        return;
    }
    const int n = lo < 0x800 ? 2 : lo < 0x10000 ? 3 : 4;
    for (int i = 1; i < n; ++i) {
        const uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if ((lo & m) != 0) {
                utf8_sequences(lo, lo | m, out);
                utf8_sequences((lo | m) + 1, hi, out);
                return;
            }
            if ((hi & m) != m) {
                utf8_sequences(lo, (hi & ~m) - 1, out);
                utf8_sequences(hi & ~m, hi, out);
                return;
            }
        }
    }
    std::string a, b;
    encode_utf8(lo, a);
    encode_utf8(hi, b);
    std::vector<ByteRange> seq;
    for (size_t i = 0; i < a.size(); ++i) seq.emplace_back(static_cast<uint8_t>(a[i]), static_cast<uint8_t>(b[i]));
    out.push_back(std::move(seq));
}

class Parser {
public:
    explicit Parser(std::string_view src) : src_(src) {}

    Result<Grammar> run() {
        skip_space(true);
        while (pos_ < src_.size()) {
            WB_ASSIGN_OR_RETURN(const std::string name, parse_name());
            const uint32_t id = rule_id(name);
            if (defined_[id]) return fail("rule '" + name + "' is defined twice");
            defined_[id] = true;
            skip_space(false);
            if (src_.substr(pos_, 3) != "::=") return fail("expected '::=' after '" + name + "'");
            pos_ += 3;
            skip_space(true);
            WB_RETURN_IF_ERROR(parse_alternates(id, false));
            skip_space(true);
        }
        for (uint32_t id = 0; id < rules_.size(); ++id)
            if (!defined_[id]) return error(StatusCode::invalid_argument, "grammar line " + std::to_string(first_use_[id]) + ": rule '" + names_[id] + "' is used but not defined");
        const auto root = ids_.find("root");
        if (root == ids_.end()) return error(StatusCode::invalid_argument, "grammar: no 'root' rule (where a match starts)");
        WB_RETURN_IF_ERROR(check_left_recursion());
        return compile(root->second);
    }

private:
    std::string_view src_;
    size_t pos_ = 0;
    int32_t line_ = 1;
    std::vector<std::vector<Alt>> rules_;
    std::vector<std::string> names_;
    std::vector<bool> defined_;
    std::vector<int32_t> first_use_;
    std::unordered_map<std::string, uint32_t> ids_;
    std::vector<std::bitset<256>> sets_;
    std::unordered_map<std::bitset<256>, uint32_t> set_ids_;
    size_t n_syms_ = 0;
    int32_t nesting_ = 0;

    Status fail(const std::string& what) const {
        return error(StatusCode::invalid_argument, "grammar line " + std::to_string(line_) + ": " + what);
    }

    uint32_t rule_id(const std::string& name) {
        if (auto it = ids_.find(name); it != ids_.end()) return it->second;
        const auto id = static_cast<uint32_t>(rules_.size());
        ids_[name] = id;
        rules_.emplace_back();
        names_.push_back(name);
        defined_.push_back(false);
        first_use_.push_back(line_);
        return id;
    }
    uint32_t synthetic(const std::string& parent) {
        const auto id = static_cast<uint32_t>(rules_.size());
        rules_.emplace_back();
        names_.push_back(parent.substr(0, 64) + "_" + std::to_string(id));   // bounded: there may be very many
        defined_.push_back(true);
        first_use_.push_back(line_);
        return id;
    }
    Sym byte_set(const std::bitset<256>& s) {
        auto [it, added] = set_ids_.try_emplace(s, static_cast<uint32_t>(sets_.size()));
        if (added) sets_.push_back(s);
        return {false, it->second};
    }
    Status add(Alt& alt, Sym s) {
        if (++n_syms_ > kMaxElements) return fail("the grammar compiles past " + std::to_string(kMaxElements) + " elements");
        alt.push_back(s);
        return Status::ok_status();
    }

    void skip_space(bool newline_ok) {
        while (pos_ < src_.size()) {
            const char c = src_[pos_];
            if (c == ' ' || c == '\t' || c == '\r') {
                ++pos_;
            } else if (c == '#') {
                while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
            } else if (c == '\n' && newline_ok) {
                ++pos_;
                ++line_;
            } else {
                break;
            }
        }
    }

    Result<std::string> parse_name() {
        const size_t start = pos_;
        while (pos_ < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '-' || src_[pos_] == '_')) ++pos_;
        if (pos_ == start) return fail(pos_ < src_.size() ? std::string("expected a rule name at '") + src_[pos_] + "'" : "expected a rule name");
        if (pos_ - start > kMaxName) return fail("a rule name longer than " + std::to_string(kMaxName) + " characters");
        return std::string(src_.substr(start, pos_ - start));
    }

    Result<uint32_t> hex(size_t digits) {
        if (pos_ + digits > src_.size()) return fail("a \\x, \\u or \\U escape needs " + std::to_string(digits) + " hex digits");
        uint32_t v = 0;
        for (size_t i = 0; i < digits; ++i) {
            const char c = src_[pos_++];
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) return fail(std::string("'") + c + "' in a hex escape");
            v = v * 16 + static_cast<uint32_t>(d);
        }
        if (v > 0x10FFFF) return fail("an escape past U+10FFFF");
        return v;
    }

    // One code point of a literal or class: an escape or a UTF-8 character.
    Result<uint32_t> parse_char() {
        if (pos_ >= src_.size()) return fail("unexpected end of the grammar");
        const auto c = static_cast<unsigned char>(src_[pos_]);
        if (c == '\\') {
            if (++pos_ >= src_.size()) return fail("a '\\' at the end");
            const char e = src_[pos_++];
            switch (e) {
                case 'n': return uint32_t{'\n'};
                case 'r': return uint32_t{'\r'};
                case 't': return uint32_t{'\t'};
                case '0': return uint32_t{0};
                case 'x': return hex(2);
                case 'u': return hex(4);
                case 'U': return hex(8);
                case '\\': case '"': case '[': case ']': case '-': case '^': case '\'': return static_cast<uint32_t>(static_cast<unsigned char>(e));
                default: return fail(std::string("unknown escape '\\") + e + "'");
            }
        }
        if (c == '\n') return fail("a newline inside a literal or class");
        const int n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || pos_ + static_cast<size_t>(n) > src_.size()) return fail("invalid UTF-8");
        uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
        for (int i = 1; i < n; ++i) {
            const auto b = static_cast<unsigned char>(src_[pos_ + static_cast<size_t>(i)]);
            if ((b & 0xC0) != 0x80) return fail("invalid UTF-8");
            cp = (cp << 6) | (b & 0x3F);
        }
        pos_ += static_cast<size_t>(n);
        return cp;
    }

    // A class's code points as symbols: one byte set when all are ASCII, else a rule whose
    // alternatives are the UTF-8 sequences.
    Result<Alt> class_syms(std::vector<std::pair<uint32_t, uint32_t>> ranges, bool negated, const std::string& parent) {
        std::sort(ranges.begin(), ranges.end());
        std::vector<std::pair<uint32_t, uint32_t>> merged;
        for (auto r : ranges) {
            if (!merged.empty() && r.first <= merged.back().second + 1) merged.back().second = std::max(merged.back().second, r.second);
            else merged.push_back(r);
        }
        if (negated) {
            std::vector<std::pair<uint32_t, uint32_t>> inverse;
            uint32_t next = 0;
            for (auto [lo, hi] : merged) {
                if (lo > next) inverse.emplace_back(next, lo - 1);
                next = hi + 1;
            }
            if (next <= 0x10FFFF) inverse.emplace_back(next, 0x10FFFF);
            merged = std::move(inverse);
        }
        std::vector<std::vector<ByteRange>> seqs;
        for (auto [lo, hi] : merged) utf8_sequences(lo, hi, seqs);
        std::bitset<256> ascii;
        bool any_ascii = false;
        std::vector<Alt> alts;
        for (const auto& seq : seqs) {
            if (seq.size() == 1) {
                for (unsigned b = seq[0].first; b <= seq[0].second; ++b) ascii.set(b);
                any_ascii = true;
                continue;
            }
            Alt alt;
            for (auto [lo, hi] : seq) {
                std::bitset<256> s;
                for (unsigned b = lo; b <= hi; ++b) s.set(b);
                WB_RETURN_IF_ERROR(add(alt, byte_set(s)));
            }
            alts.push_back(std::move(alt));
        }
        if (alts.empty()) {
            if (!any_ascii) return fail("a class that matches nothing");
            return Alt{byte_set(ascii)};
        }
        if (any_ascii) alts.insert(alts.begin(), Alt{byte_set(ascii)});
        const uint32_t id = synthetic(parent);
        rules_[id] = std::move(alts);
        return Alt{{true, id}};
    }

    Status parse_alternates(uint32_t rule, bool nested) {
        const std::string name = names_[rule];
        std::vector<Alt> alts;
        while (true) {
            Alt alt;
            WB_RETURN_IF_ERROR(parse_sequence(alt, nested, name));
            alts.push_back(std::move(alt));
            if (pos_ < src_.size() && src_[pos_] == '|') {
                ++pos_;
                skip_space(true);
                continue;
            }
            break;
        }
        rules_[rule] = std::move(alts);
        return Status::ok_status();
    }

    // A rule wrapping `syms`, for a quantifier over several symbols.
    Sym wrap(Alt syms, const std::string& parent) {
        if (syms.size() == 1) return syms[0];
        const uint32_t id = synthetic(parent);
        rules_[id] = {std::move(syms)};
        return {true, id};
    }

    Status parse_sequence(Alt& out, bool nested, const std::string& parent) {
        Alt last;   // the element a quantifier applies to
        auto flush = [&]() -> Status {
            for (const Sym& s : last) WB_RETURN_IF_ERROR(add(out, s));
            last.clear();
            return Status::ok_status();
        };
        while (pos_ < src_.size()) {
            const char c = src_[pos_];
            if (c == '"') {
                WB_RETURN_IF_ERROR(flush());
                ++pos_;
                while (pos_ < src_.size() && src_[pos_] != '"') {
                    WB_ASSIGN_OR_RETURN(const uint32_t cp, parse_char());
                    std::string bytes;
                    encode_utf8(cp, bytes);
                    for (char b : bytes) {
                        std::bitset<256> s;
                        s.set(static_cast<unsigned char>(b));
                        last.push_back(byte_set(s));
                    }
                }
                if (pos_ >= src_.size()) return fail("a literal without its closing '\"'");
                ++pos_;
            } else if (c == '[') {
                WB_RETURN_IF_ERROR(flush());
                ++pos_;
                const bool negated = pos_ < src_.size() && src_[pos_] == '^';
                if (negated) ++pos_;
                std::vector<std::pair<uint32_t, uint32_t>> ranges;
                while (pos_ < src_.size() && src_[pos_] != ']') {
                    WB_ASSIGN_OR_RETURN(const uint32_t lo, parse_char());
                    uint32_t hi = lo;
                    if (pos_ + 1 < src_.size() && src_[pos_] == '-' && src_[pos_ + 1] != ']') {
                        ++pos_;
                        WB_ASSIGN_OR_RETURN(hi, parse_char());
                        if (hi < lo) return fail("a class range that runs backwards");
                    }
                    ranges.emplace_back(lo, hi);
                }
                if (pos_ >= src_.size()) return fail("a class without its closing ']'");
                ++pos_;
                WB_ASSIGN_OR_RETURN(last, class_syms(std::move(ranges), negated, parent));
            } else if (c == '.') {
                WB_RETURN_IF_ERROR(flush());
                ++pos_;
                WB_ASSIGN_OR_RETURN(last, class_syms({}, true, parent));
            } else if (c == '(') {
                WB_RETURN_IF_ERROR(flush());
                ++pos_;
                skip_space(true);
                if (++nesting_ > kMaxNesting) return fail("groups nested deeper than " + std::to_string(kMaxNesting));
                const uint32_t id = synthetic(parent);
                WB_RETURN_IF_ERROR(parse_alternates(id, true));
                --nesting_;
                if (pos_ >= src_.size() || src_[pos_] != ')') return fail("a '(' without its ')'");
                ++pos_;
                last = {{true, id}};
            } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
                WB_RETURN_IF_ERROR(flush());
                const size_t save = pos_;
                const int32_t save_line = line_;
                WB_ASSIGN_OR_RETURN(const std::string name, parse_name());
                // The next rule's definition begins here (its name, then '::=').
                size_t look = pos_;
                while (look < src_.size() && (src_[look] == ' ' || src_[look] == '\t')) ++look;
                if (src_.substr(look, 3) == "::=") {
                    pos_ = save;
                    line_ = save_line;
                    break;
                }
                last = {{true, rule_id(name)}};
            } else if (c == '*' || c == '+' || c == '?' || c == '{') {
                if (last.empty()) return fail(std::string("'") + c + "' with nothing before it to repeat");
                ++pos_;
                int64_t min = 0, max = -1;   // -1: unbounded
                if (c == '+') min = 1;
                if (c == '?') max = 1;
                if (c == '{') {
                    auto number = [&]() -> Result<int64_t> {
                        skip_space(false);
                        const size_t start = pos_;
                        int64_t v = 0;
                        while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_])) && v <= kMaxRepeat) v = v * 10 + (src_[pos_++] - '0');
                        if (pos_ == start) return fail("expected a number in {m,n}");
                        if (v > kMaxRepeat) return fail("a repetition past " + std::to_string(kMaxRepeat));
                        skip_space(false);
                        return v;
                    };
                    WB_ASSIGN_OR_RETURN(min, number());
                    max = min;
                    if (pos_ < src_.size() && src_[pos_] == ',') {
                        ++pos_;
                        skip_space(false);
                        max = pos_ < src_.size() && src_[pos_] == '}' ? -1 : 0;
                        if (max == 0) {
                            WB_ASSIGN_OR_RETURN(max, number());
                        }
                    }
                    if (pos_ >= src_.size() || src_[pos_] != '}') return fail("a '{' without its '}'");
                    ++pos_;
                    if (max >= 0 && max < min) return fail("{m,n} with n below m");
                }
                const Sym x = wrap(std::move(last), parent);
                last.clear();
                for (int64_t i = 0; i < min; ++i) WB_RETURN_IF_ERROR(add(out, x));
                if (max < 0) {   // R ::= x R | ε
                    const uint32_t r = synthetic(parent);
                    rules_[r] = {{x, {true, r}}, {}};
                    WB_RETURN_IF_ERROR(add(out, {true, r}));
                } else if (max > min) {   // O_k ::= x O_{k-1} | ε, O_1 ::= x | ε
                    uint32_t prev = 0;
                    for (int64_t k = 1; k <= max - min; ++k) {
                        const uint32_t o = synthetic(parent);
                        rules_[o] = k == 1 ? std::vector<Alt>{{x}, {}} : std::vector<Alt>{{x, {true, prev}}, {}};
                        n_syms_ += 2;
                        if (n_syms_ > kMaxElements) return fail("the grammar compiles past " + std::to_string(kMaxElements) + " elements");
                        prev = o;
                    }
                    WB_RETURN_IF_ERROR(add(out, {true, prev}));
                }
            } else {
                break;
            }
            skip_space(nested);
        }
        WB_RETURN_IF_ERROR(flush());
        if (pos_ < src_.size() && !nested && src_[pos_] == ')') return fail("a ')' without its '('");
        return Status::ok_status();
    }

    // A rule that can reach itself before matching a byte would loop the matcher forever. Both
    // passes are iterative and linear: a grammar may chain a hundred thousand rules.
    Status check_left_recursion() const {
        const size_t n = rules_.size();
        // Nullable rules by a worklist: an alternative of rules only is nullable once all are.
        std::vector<bool> nullable(n, false);
        std::vector<std::vector<std::pair<uint32_t, uint32_t>>> users(n);   // rule → (rule, alt) it appears in
        std::vector<std::vector<uint32_t>> missing(n);                        // per rule, per alt: rules not yet nullable
        std::vector<uint32_t> queue;
        for (uint32_t r = 0; r < n; ++r) {
            missing[r].assign(rules_[r].size(), 0);
            for (uint32_t a = 0; a < rules_[r].size(); ++a) {
                const Alt& alt = rules_[r][a];
                if (std::any_of(alt.begin(), alt.end(), [](const Sym& s) { return !s.rule; })) {
                    missing[r][a] = UINT32_MAX;   // matches a byte: never empty
                    continue;
                }
                for (const Sym& s : alt) users[s.value].emplace_back(r, a);
                missing[r][a] = static_cast<uint32_t>(alt.size());
                if (alt.empty() && !nullable[r]) {
                    nullable[r] = true;
                    queue.push_back(r);
                }
            }
        }
        while (!queue.empty()) {
            const uint32_t done = queue.back();
            queue.pop_back();
            for (auto [r, a] : users[done])
                if (missing[r][a] != UINT32_MAX && --missing[r][a] == 0 && !nullable[r]) {
                    nullable[r] = true;
                    queue.push_back(r);
                }
        }
        // Depth-first over "can begin with", with an explicit stack.
        struct Frame {
            uint32_t rule;
            size_t alt = 0, sym = 0;
        };
        std::vector<uint8_t> state(n, 0);   // 0 unseen, 1 on the path, 2 done
        for (uint32_t start = 0; start < n; ++start) {
            if (state[start]) continue;
            std::vector<Frame> stack{{start}};
            state[start] = 1;
            while (!stack.empty()) {
                Frame& f = stack.back();
                const auto& alts = rules_[f.rule];
                if (f.alt >= alts.size()) {
                    state[f.rule] = 2;
                    stack.pop_back();
                    continue;
                }
                const Alt& alt = alts[f.alt];
                if (f.sym >= alt.size() || !alt[f.sym].rule) {
                    ++f.alt;
                    f.sym = 0;
                    continue;
                }
                const uint32_t next = alt[f.sym].value;
                if (nullable[next]) {
                    ++f.sym;
                } else {
                    ++f.alt;
                    f.sym = 0;
                }
                if (state[next] == 1)
                    return error(StatusCode::invalid_argument, "grammar: rule '" + names_[next] + "' is left-recursive (it can reach itself before matching anything)");
                if (state[next] == 0) {
                    state[next] = 1;
                    stack.push_back({next});
                }
            }
        }
        return Status::ok_status();
    }

    Grammar compile(uint32_t root) {
        Grammar g;
        g.root = root;
        g.byte_sets = std::move(sets_);
        g.rule_names = std::move(names_);
        g.alternatives.resize(rules_.size());
        for (size_t r = 0; r < rules_.size(); ++r)
            for (const Alt& alt : rules_[r]) {
                g.alternatives[r].push_back(static_cast<uint32_t>(g.elements.size()));
                for (const Sym& s : alt) g.elements.push_back({s.rule ? Grammar::Element::Kind::rule : Grammar::Element::Kind::bytes, s.value});
                g.elements.push_back({Grammar::Element::Kind::end, 0});
            }
        return g;
    }
};

}  // namespace

Result<Grammar> parse_grammar(std::string_view gbnf) { return Parser(gbnf).run(); }

}  // namespace workbench
