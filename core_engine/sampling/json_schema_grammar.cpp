// JSON Schema to GBNF. Whitespace is written once between tokens and bounded (a space, or a
// newline and up to 20 spaces or tabs of indent) so a model cannot stall in it; numbers have at
// most 16 digits before and after the point. Object properties come in the schema's order, each
// optional one optional, extra keys only where additionalProperties allows them (or where the
// object lists no properties at all); built from two rule chains, "from property k on, none
// written yet" and "…, one written already" (which owes a comma), so the grammar stays linear
// in the number of properties.
#include "workbench/structured_output.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "sampling/grammar.h"
#include "sampling/regex_grammar.h"

namespace workbench {
namespace {

constexpr const char* kPrimitives = R"(ws ::= ( " " | "\n" [ \t]{0,20} )?
value ::= object | array | string | number | boolean | null
object ::= "{" ws ( member ( ws "," ws member )* ws )? "}"
member ::= string ws ":" ws value
array ::= "[" ws ( value ( ws "," ws value )* ws )? "]"
string ::= "\"" char* "\""
char ::= plain-char | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
plain-char ::= [^"\\\x00-\x1F]
number ::= integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?
integer ::= "-"? ( "0" | [1-9] [0-9]{0,15} )
boolean ::= "true" | "false"
null ::= "null"
)";

// A string as a GBNF literal.
std::string literal(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || u == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", u);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string json_literal(const Json& v) { return literal(dump_json(v)); }

// Digit strings of one length between lo and hi (same length, lo <= hi), as GBNF.
std::string digit_range(const std::string& lo, const std::string& hi) {
    if (lo.empty()) return "";
    if (lo == hi) return literal(lo);
    const size_t rest = lo.size() - 1;
    const std::string any_rest = rest ? " [0-9]{" + std::to_string(rest) + "}" : "";
    if (lo[0] == hi[0]) return literal(lo.substr(0, 1)) + " (" + digit_range(lo.substr(1), hi.substr(1)) + ")";
    std::vector<std::string> alts;
    const bool lo_full = lo.substr(1) == std::string(rest, '0'), hi_full = hi.substr(1) == std::string(rest, '9');
    const char first_any = static_cast<char>(lo_full ? lo[0] : lo[0] + 1), last_any = static_cast<char>(hi_full ? hi[0] : hi[0] - 1);
    if (!lo_full) alts.push_back(literal(lo.substr(0, 1)) + " (" + digit_range(lo.substr(1), std::string(rest, '9')) + ")");
    if (first_any <= last_any) alts.push_back(std::string("[") + first_any + "-" + last_any + "]" + any_rest);
    if (!hi_full) alts.push_back(literal(hi.substr(0, 1)) + " (" + digit_range(std::string(rest, '0'), hi.substr(1)) + ")");
    std::string out;
    for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
    return out;
}

// Non-negative integers in [lo, hi] without leading zeros; hi absent: up to 16 digits.
std::string natural_range(uint64_t lo, std::optional<uint64_t> hi) {
    std::vector<std::string> alts;
    if (lo == 0) {
        alts.push_back("\"0\"");
        lo = 1;
    }
    const std::string a = std::to_string(lo);
    if (!hi) {
        alts.push_back("(" + digit_range(a, std::string(a.size(), '9')) + ")");
        if (a.size() < 16) alts.push_back("[1-9] [0-9]{" + std::to_string(a.size()) + "," + std::to_string(15) + "}");
    } else if (*hi >= lo) {
        const std::string b = std::to_string(*hi);
        for (size_t len = a.size(); len <= b.size(); ++len) {
            const std::string from = len == a.size() ? a : "1" + std::string(len - 1, '0');
            const std::string to = len == b.size() ? b : std::string(len, '9');
            alts.push_back("(" + digit_range(from, to) + ")");
        }
    }
    std::string out;
    for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
    return out;
}

class SchemaCompiler {
public:
    explicit SchemaCompiler(const Json& root) : root_(root) {}

    Result<std::string> run() {
        WB_ASSIGN_OR_RETURN(const std::string top, visit(root_, "#"));
        std::string out = "root ::= " + top + "\n" + kPrimitives;
        for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
        return out;
    }

private:
    const Json& root_;
    std::vector<std::pair<std::string, std::string>> rules_;
    std::map<std::string, std::string> refs_;   // "$ref" → its rule
    int32_t depth_ = 0;
    size_t written_ = 0;   // grammar text produced so far, however the schema repeats itself

    static Status unsupported(const std::string& what, const std::string& where) {
        return error(StatusCode::invalid_argument, "json_schema: " + what + " at " + where + " is not supported");
    }

    std::string add_rule(const std::string& body) {
        written_ += body.size();
        const std::string name = "s" + std::to_string(rules_.size());
        rules_.emplace_back(name, body);
        return name;
    }

    Result<std::string> resolve(const std::string& ref, const std::string& where) {
        if (auto it = refs_.find(ref); it != refs_.end()) return it->second;
        if (ref.rfind("#", 0) != 0) return unsupported("the $ref '" + ref + "' (only references within the schema, '#/…')", where);
        // A JSON pointer after the '#': /-separated names (~1 for '/', ~0 for '~') or indices.
        const Json* target = &root_;
        for (size_t at = 1; at < ref.size();) {
            if (ref[at] != '/') return error(StatusCode::invalid_argument, "json_schema: the $ref '" + ref + "' at " + where + " is not a JSON pointer");
            size_t end = ref.find('/', at + 1);
            if (end == std::string::npos) end = ref.size();
            std::string key;
            for (size_t i = at + 1; i < end; ++i) {
                if (ref[i] == '~' && i + 1 < end && (ref[i + 1] == '0' || ref[i + 1] == '1')) {
                    key += ref[++i] == '0' ? '~' : '/';
                } else {
                    key += ref[i];
                }
            }
            at = end;
            if (target->is_object() && target->contains(key)) {
                target = &(*target)[key];
            } else if (target->is_array() && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos && key.size() < 9 &&
                       std::stoul(key) < target->size()) {
                target = &(*target)[std::stoul(key)];
            } else {
                return error(StatusCode::invalid_argument, "json_schema: the $ref '" + ref + "' at " + where + " points at nothing");
            }
        }
        const std::string name = "s" + std::to_string(rules_.size());
        rules_.emplace_back(name, "");
        const size_t slot = rules_.size() - 1;
        refs_[ref] = name;
        WB_ASSIGN_OR_RETURN(std::string body, visit(*target, ref));
        rules_[slot].second = std::move(body);
        return name;
    }

    Result<std::string> visit(const Json& s, const std::string& where) {
        constexpr size_t kMaxGrammar = 4u << 20;
        if (++depth_ > 64) return error(StatusCode::invalid_argument, "json_schema: nested deeper than 64 at " + where);
        auto r = visit_inner(s, where);
        --depth_;
        if (r.ok() && (written_ += r->size()) > kMaxGrammar)
            return error(StatusCode::invalid_argument, "json_schema: the schema makes a grammar of more than 4 MiB (at " + where + ")");
        return r;
    }

    Result<std::string> visit_inner(const Json& s, const std::string& where) {
        if (s.is_boolean()) {
            if (s.get<bool>()) return std::string("value");
            return error(StatusCode::invalid_argument, "json_schema: the schema 'false' at " + where + " matches nothing");
        }
        if (!s.is_object()) return error(StatusCode::invalid_argument, "json_schema: a schema must be an object or a boolean, at " + where);
        static const std::set<std::string> kIgnored = {"title", "description", "default", "examples", "$schema", "$id", "$comment",
                                                       "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "strict"};
        static const std::set<std::string> kKnown = {"type", "properties", "required", "additionalProperties", "enum", "const", "items",
                                                     "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
                                                     "exclusiveMinimum", "exclusiveMaximum", "anyOf", "oneOf", "allOf", "$ref"};
        for (auto it = s.begin(); it != s.end(); ++it)
            if (!kIgnored.count(it.key()) && !kKnown.count(it.key())) return unsupported("the keyword '" + it.key() + "'", where);
        if (s.contains("$ref")) {
            for (auto it = s.begin(); it != s.end(); ++it)
                if (kKnown.count(it.key()) && it.key() != "$ref") return unsupported("'" + it.key() + "' beside '$ref'", where);
            if (!s["$ref"].is_string()) return error(StatusCode::invalid_argument, "json_schema: '$ref' at " + where + " must be a string");
            return resolve(s["$ref"].get<std::string>(), where);
        }
        // Combinators and value lists take the whole schema: a constraint beside them would be dropped.
        for (const char* key : {"anyOf", "oneOf", "allOf", "enum", "const"}) {
            if (!s.contains(key)) continue;
            for (auto it = s.begin(); it != s.end(); ++it) {
                const bool type_beside_values = it.key() == "type" && (std::string(key) == "enum" || std::string(key) == "const");
                if (kKnown.count(it.key()) && it.key() != key && !type_beside_values)
                    return unsupported("'" + it.key() + "' beside '" + key + "'", where);
            }
        }
        if (s.contains("const")) return json_literal(s["const"]);
        if (s.contains("enum")) {
            if (!s["enum"].is_array() || s["enum"].empty()) return error(StatusCode::invalid_argument, "json_schema: 'enum' at " + where + " must be a non-empty array");
            std::string out = "(";
            for (size_t i = 0; i < s["enum"].size(); ++i) out += (i ? " | " : "") + json_literal(s["enum"][i]);
            return out + ")";
        }
        for (const char* key : {"anyOf", "oneOf"})
            if (s.contains(key)) {
                if (!s[key].is_array() || s[key].empty()) return error(StatusCode::invalid_argument, std::string("json_schema: '") + key + "' at " + where + " must be a non-empty array");
                std::string out = "(";
                for (size_t i = 0; i < s[key].size(); ++i) {
                    WB_ASSIGN_OR_RETURN(const std::string alt, visit(s[key][i], where + "/" + key + "/" + std::to_string(i)));
                    out += (i ? " | " : "") + alt;
                }
                return out + ")";
            }
        if (s.contains("allOf")) {
            if (!s["allOf"].is_array() || s["allOf"].size() != 1) return unsupported("'allOf' of more than one schema", where);
            return visit(s["allOf"][0], where + "/allOf/0");
        }
        std::vector<std::string> types;
        if (s.contains("type")) {
            const Json& t = s["type"];
            if (t.is_string()) types.push_back(t.get<std::string>());
            else if (t.is_array())
                for (const Json& e : t) types.push_back(e.is_string() ? e.get<std::string>() : std::string("?"));
        } else if (s.contains("properties") || s.contains("additionalProperties") || s.contains("required")) {
            types.push_back("object");
        } else if (s.contains("items") || s.contains("minItems") || s.contains("maxItems")) {
            types.push_back("array");
        } else if (s.contains("minLength") || s.contains("maxLength") || s.contains("pattern")) {
            types.push_back("string");
        } else if (s.contains("minimum") || s.contains("maximum") || s.contains("exclusiveMinimum") || s.contains("exclusiveMaximum")) {
            types.push_back("number");
        } else {
            return std::string("value");
        }
        std::sort(types.begin(), types.end());
        types.erase(std::unique(types.begin(), types.end()), types.end());
        std::string out = "(";
        for (size_t i = 0; i < types.size(); ++i) {
            WB_ASSIGN_OR_RETURN(const std::string one, typed(s, types[i], where));
            out += (i ? " | " : "") + one;
        }
        return out + ")";
    }

    Result<std::optional<uint64_t>> count(const Json& s, const char* key, const std::string& where) {
        if (!s.contains(key)) return std::optional<uint64_t>();
        const Json& v = s[key];
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 10000)
            return error(StatusCode::invalid_argument, std::string("json_schema: '") + key + "' at " + where + " must be an integer from 0 to 10000");
        return std::optional<uint64_t>(v.get<uint64_t>());
    }

    Result<std::string> typed(const Json& s, const std::string& type, const std::string& where) {
        if (type == "null") return std::string("null");
        if (type == "boolean") return std::string("boolean");
        if (type == "string") return string_schema(s, where);
        if (type == "integer") return integer_schema(s, where);
        if (type == "number") {
            for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
                if (s.contains(k)) return unsupported(std::string("'") + k + "' on a number (it is supported on integers)", where);
            return std::string("number");
        }
        if (type == "array") return array_schema(s, where);
        if (type == "object") return object_schema(s, where);
        return error(StatusCode::invalid_argument, "json_schema: unknown type '" + type + "' at " + where);
    }

    Result<std::string> string_schema(const Json& s, const std::string& where) {
        if (s.contains("pattern")) {
            if (s.contains("minLength") || s.contains("maxLength")) return unsupported("'pattern' with 'minLength' or 'maxLength'", where);
            if (!s["pattern"].is_string()) return error(StatusCode::invalid_argument, "json_schema: 'pattern' at " + where + " must be a string");
            auto body = regex_grammar(s["pattern"].get<std::string>(), "plain-char");
            if (!body.ok()) return error(StatusCode::invalid_argument, "json_schema: at " + where + ": " + body.status().message());
            return "(\"\\\"\" " + *body + " \"\\\"\")";
        }
        WB_ASSIGN_OR_RETURN(const auto min, count(s, "minLength", where));
        WB_ASSIGN_OR_RETURN(const auto max, count(s, "maxLength", where));
        if (!min && !max) return std::string("string");
        const uint64_t lo = min.value_or(0);
        if (max && *max < lo) return error(StatusCode::invalid_argument, "json_schema: 'maxLength' below 'minLength' at " + where);
        return "(\"\\\"\" char{" + std::to_string(lo) + "," + (max ? std::to_string(*max) : std::string()) + "} \"\\\"\")";
    }

    Result<std::string> integer_schema(const Json& s, const std::string& where) {
        std::optional<int64_t> lo, hi;
        for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
            if (!s.contains(k)) continue;
            if (!s[k].is_number()) return error(StatusCode::invalid_argument, std::string("json_schema: '") + k + "' at " + where + " must be a number");
            const double v = s[k].get<double>();
            if (std::fabs(v) > 9e15) return unsupported(std::string("'") + k + "' past 16 digits", where);
            const std::string key = k;
            if (key == "minimum") lo = std::max(lo.value_or(INT64_MIN), static_cast<int64_t>(std::ceil(v)));
            if (key == "exclusiveMinimum") lo = std::max(lo.value_or(INT64_MIN), static_cast<int64_t>(std::floor(v)) + 1);
            if (key == "maximum") hi = std::min(hi.value_or(INT64_MAX), static_cast<int64_t>(std::floor(v)));
            if (key == "exclusiveMaximum") hi = std::min(hi.value_or(INT64_MAX), static_cast<int64_t>(std::ceil(v)) - 1);
        }
        if (!lo && !hi) return std::string("integer");
        if (lo && hi && *lo > *hi) return error(StatusCode::invalid_argument, "json_schema: no integer lies between the bounds at " + where);
        std::vector<std::string> alts;
        // Negative values: "-" and a magnitude in [max(1, -hi), -lo] (unbounded below: up to 16 digits).
        if (!lo || *lo < 0) {
            const uint64_t from = hi && *hi < 0 ? static_cast<uint64_t>(-*hi) : 1;
            const std::optional<uint64_t> to = lo ? std::optional<uint64_t>(static_cast<uint64_t>(-*lo)) : std::nullopt;
            alts.push_back("\"-\" (" + natural_range(from, to) + ")");
        }
        if (!hi || *hi >= 0) {
            const uint64_t from = lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0;
            const std::optional<uint64_t> to = hi ? std::optional<uint64_t>(static_cast<uint64_t>(*hi)) : std::nullopt;
            alts.push_back("(" + natural_range(from, to) + ")");
        }
        std::string out = "(";
        for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
        return add_rule(out + ")");
    }

    Result<std::string> array_schema(const Json& s, const std::string& where) {
        std::string item = "value";
        if (s.contains("items")) {
            WB_ASSIGN_OR_RETURN(item, visit(s["items"], where + "/items"));
        }
        WB_ASSIGN_OR_RETURN(const auto min, count(s, "minItems", where));
        WB_ASSIGN_OR_RETURN(const auto max, count(s, "maxItems", where));
        const uint64_t lo = min.value_or(0);
        if (max && *max < lo) return error(StatusCode::invalid_argument, "json_schema: 'maxItems' below 'minItems' at " + where);
        if (max && *max == 0) return std::string("(\"[\" ws \"]\")");
        const std::string item_rule = add_rule(item);
        const std::string more = "( ws \",\" ws " + item_rule + " ){" + std::to_string(lo > 0 ? lo - 1 : 0) + "," +
                                 (max ? std::to_string(*max - 1) : std::string()) + "}";
        const std::string items = item_rule + " " + more + " ws";
        return add_rule(lo > 0 ? "\"[\" ws " + items + " \"]\"" : "\"[\" ws ( " + items + " )? \"]\"");
    }

    Result<std::string> object_schema(const Json& s, const std::string& where) {
        std::vector<std::pair<std::string, std::string>> props;   // key literal, value expression
        std::set<std::string> required;
        if (s.contains("required")) {
            if (!s["required"].is_array()) return error(StatusCode::invalid_argument, "json_schema: 'required' at " + where + " must be an array of names");
            for (const Json& r : s["required"]) {
                if (!r.is_string()) return error(StatusCode::invalid_argument, "json_schema: 'required' at " + where + " must be an array of names");
                required.insert(r.get<std::string>());
            }
        }
        std::vector<bool> is_required;
        if (s.contains("properties")) {
            if (!s["properties"].is_object()) return error(StatusCode::invalid_argument, "json_schema: 'properties' at " + where + " must be an object");
            for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it) {
                WB_ASSIGN_OR_RETURN(const std::string v, visit(it.value(), where + "/properties/" + it.key()));
                props.emplace_back(json_literal(Json(it.key())), v);
                is_required.push_back(required.count(it.key()) > 0);
            }
        }
        for (const std::string& r : required)
            if (!s.contains("properties") || !s["properties"].contains(r))
                return unsupported("the required property '" + r + "' without a schema in 'properties'", where);
        std::string extra;   // the rule for one extra member, empty when none may appear
        if (!s.contains("additionalProperties") && props.empty()) {
            extra = "member";   // {"type": "object"} alone: any object
        } else if (s.contains("additionalProperties")) {
            const Json& a = s["additionalProperties"];
            if (!(a.is_boolean() && !a.get<bool>()) && !props.empty())   // an extra key could repeat a listed one with another value
                return unsupported("'additionalProperties' other than false beside 'properties'", where);
            if (!(a.is_boolean() && !a.get<bool>())) {
                WB_ASSIGN_OR_RETURN(const std::string v, visit(a, where + "/additionalProperties"));
                extra = add_rule("string ws \":\" ws " + v);
            }
        }
        const size_t n = props.size();
        std::vector<std::string> kv(n);
        for (size_t k = 0; k < n; ++k) kv[k] = add_rule(props[k].first + " ws \":\" ws " + props[k].second);
        const std::string extras_tail = extra.empty() ? "" : "( ws \",\" ws " + extra + " )*";
        // after[k]: properties k.. when one is written already; start[k]: when none is yet (writes at least one).
        std::vector<std::string> after(n + 1), start(n + 1);
        after[n] = extras_tail.empty() ? "\"\"" : add_rule(extras_tail);
        start[n] = extra.empty() ? "" : add_rule(extra + " " + extras_tail);
        for (size_t k = n; k-- > 0;) {
            after[k] = add_rule(is_required[k] ? "ws \",\" ws " + kv[k] + " " + after[k + 1]
                                               : "( ws \",\" ws " + kv[k] + " )? " + after[k + 1]);
            std::string first = kv[k] + " " + after[k + 1];
            if (!is_required[k] && !start[k + 1].empty()) first += " | " + start[k + 1];
            start[k] = add_rule(first);
        }
        const bool any_required = std::find(is_required.begin(), is_required.end(), true) != is_required.end();
        if (start[0].empty()) return std::string("(\"{\" ws \"}\")");
        return add_rule(any_required ? "\"{\" ws " + start[0] + " ws \"}\"" : "\"{\" ws ( " + start[0] + " ws )? \"}\"");
    }
};

}  // namespace

Result<std::string> json_schema_grammar(const Json& schema) {
    WB_ASSIGN_OR_RETURN(std::string gbnf, SchemaCompiler(schema).run());
    WB_RETURN_IF_ERROR(check_grammar(gbnf));
    return gbnf;
}

std::string json_object_grammar() { return std::string("root ::= object\n") + kPrimitives; }

Status check_grammar(std::string_view gbnf) { return parse_grammar(gbnf).status(); }

}  // namespace workbench
