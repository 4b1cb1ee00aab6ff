// Filters, tests and methods with jinja2's and Python's semantics (the cases chat templates rely
// on: a string is iterable, tojson keeps insertion order and raw UTF-8, strip() removes Unicode
// whitespace, slicing and length count code points).
#include "jinja/jinja_builtins.h"

#include "jinja/jinja_marks.h"

#include <algorithm>
#include <charconv>
#include <unordered_set>
#include <cmath>
#include <cstdio>

namespace workbench::jinja {
namespace {

Status fail(const std::string& what) { return error(StatusCode::invalid_argument, what); }

Value arg_or(const CallArgs& a, size_t i, std::string_view name, Value fallback) {
    const Value* v = a.get(i, name);
    return v ? *v : fallback;
}

Result<std::string> string_arg(const CallArgs& a, size_t i, std::string_view name, const char* where) {
    const Value* v = a.get(i, name);
    if (!v || !v->is_string()) return fail(std::string(where) + " needs a string " + std::string(name));
    return v->as_string();
}

}  // namespace

Result<List> iterate(const Value& v, const char* where) {
    if (v.is_list()) return v.as_list();
    if (v.is_dict()) {
        List keys;
        for (const auto& [k, _] : v.as_dict().items) keys.push_back(v.key(k));
        return keys;
    }
    if (v.is_string()) {   // characters, each with its own mark
        List chars;
        const std::string& s = v.as_string();
        for (size_t i = 0; i < s.size();) {
            size_t n = 1;
            while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
            chars.push_back(Value::marked_string(s.substr(i, n), sub_marks(v.marks(), i, i + n)));
            i += n;
        }
        return chars;
    }
    if (v.is_undefined()) return List{};
    return fail(std::string(where) + ": a " + v.type_name() + " is not iterable");
}

namespace {

// jinja2's attribute lookup for selectattr/map/sort: "a.b" walks dicts.
Value attribute_of(const Value& v, const std::string& path) {
    Value cur = v;
    size_t start = 0;
    while (start <= path.size()) {
        const size_t dot = path.find('.', start);
        const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (cur.is_dict() || cur.is_namespace()) {
            const Dict& d = cur.is_dict() ? cur.as_dict() : cur.namespace_attributes();
            const Value* f = d.find(key);
            cur = f ? *f : Value::undefined(key);
        } else if (cur.is_list() && !key.empty() && std::all_of(key.begin(), key.end(), ::isdigit)) {
            size_t i = 0;
            const bool ok = std::from_chars(key.data(), key.data() + key.size(), i).ec == std::errc();
            cur = ok && i < cur.as_list().size() ? cur.as_list()[i] : Value::undefined(key);
        } else {
            return Value::undefined(key);
        }
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return cur;
}

std::string lower_ascii(std::string s);

// Python's < for sort, min and max: numbers with numbers, strings with strings (jinja2's filters
// compare strings case-insensitively unless asked not to).
Result<bool> less(const Value& a, const Value& b, bool case_sensitive = true) {
    if (a.is_number() && b.is_number()) return a.as_double() < b.as_double();
    if (a.is_string() && b.is_string()) return case_sensitive ? a.as_string() < b.as_string() : lower_ascii(a.as_string()) < lower_ascii(b.as_string());
    return fail(std::string("cannot order a ") + a.type_name() + " and a " + b.type_name());
}

std::string lower_ascii(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
std::string upper_ascii(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}
std::string title_ascii(const std::string& s) {
    std::string out = s;
    bool start = true;
    for (char& c : out) {
        const bool alpha = std::isalpha(static_cast<unsigned char>(c));
        c = static_cast<char>(alpha ? (start ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c))) : c);
        start = !alpha;
    }
    return out;
}

// Python's strip family: `chars` a set of code points, or Unicode whitespace when absent.
std::string strip(const std::string& s, const Value* chars, bool left, bool right) {
    const std::u32string cps = to_code_points(s);
    const std::u32string set = chars && chars->is_string() ? to_code_points(chars->as_string()) : std::u32string();
    auto drop = [&](char32_t c) { return chars && chars->is_string() ? set.find(c) != std::u32string::npos : is_python_space(c); };
    size_t b = 0, e = cps.size();
    if (left)
        while (b < e && drop(cps[b])) ++b;
    if (right)
        while (e > b && drop(cps[e - 1])) --e;
    return from_code_points(std::u32string_view(cps).substr(b, e - b));
}

// Python's str.split: on whitespace runs (no separator) or on every `sep`; maxsplit -1 = all.
List split(const std::string& s, const Value* sep, int64_t maxsplit, bool from_right) {
    List out;
    if (!sep || sep->is_none() || sep->is_undefined()) {
        const std::u32string cps = to_code_points(s);
        std::vector<std::pair<size_t, size_t>> words;
        for (size_t i = 0; i < cps.size();) {
            while (i < cps.size() && is_python_space(cps[i])) ++i;
            const size_t b = i;
            while (i < cps.size() && !is_python_space(cps[i])) ++i;
            if (i > b) words.emplace_back(b, i);
        }
        if (maxsplit >= 0 && static_cast<int64_t>(words.size()) > maxsplit + 1) {
            if (from_right) {
                const size_t keep_from = words.size() - static_cast<size_t>(maxsplit);
                std::vector<std::pair<size_t, size_t>> merged = {{words.front().first, words[keep_from - 1].second}};
                merged.insert(merged.end(), words.begin() + static_cast<std::ptrdiff_t>(keep_from), words.end());
                words = merged;
            } else {
                size_t last = cps.size();
                while (last > 0 && is_python_space(cps[last - 1])) --last;
                words.resize(static_cast<size_t>(maxsplit) + 1);
                words.back().second = last;
            }
        }
        for (auto [b, e] : words) out.emplace_back(from_code_points(std::u32string_view(cps).substr(b, e - b)));
        return out;
    }
    const std::string& d = sep->as_string();
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t at = s.find(d); at != std::string::npos && !d.empty(); at = s.find(d, start)) {
        parts.push_back(s.substr(start, at - start));
        start = at + d.size();
    }
    parts.push_back(s.substr(start));
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) > maxsplit + 1) {
        std::vector<std::string> merged;
        if (from_right) {
            const size_t head = parts.size() - static_cast<size_t>(maxsplit);
            std::string first = parts[0];
            for (size_t i = 1; i < head; ++i) first += d + parts[i];
            merged.push_back(first);
            merged.insert(merged.end(), parts.begin() + static_cast<std::ptrdiff_t>(head), parts.end());
        } else {
            merged.assign(parts.begin(), parts.begin() + maxsplit);
            std::string rest = parts[static_cast<size_t>(maxsplit)];
            for (size_t i = static_cast<size_t>(maxsplit) + 1; i < parts.size(); ++i) rest += d + parts[i];
            merged.push_back(rest);
        }
        parts = merged;
    }
    for (std::string& p : parts) out.emplace_back(std::move(p));
    return out;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
    if (from.empty()) return s;   // Python inserts between characters; no template does it
    std::string out;
    size_t start = 0;
    int64_t done = 0;
    for (size_t at = s.find(from); at != std::string::npos && (count < 0 || done < count); at = s.find(from, start), ++done) {
        out.append(s, start, at - start);
        out += to;
        start = at + from.size();
    }
    return out + s.substr(start);
}

void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
    out += '"';
    const std::u32string cps = to_code_points(s);
    for (char32_t c : cps) {
        char b[16];
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20 || (ensure_ascii && c > 0x7e)) {
                    if (c > 0xFFFF) {
                        const uint32_t v = static_cast<uint32_t>(c) - 0x10000;
                        std::snprintf(b, sizeof b, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
                    } else {
                        std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(c));
                    }
                    out += b;
                } else {
                    out += from_code_points(std::u32string(1, c));
                }
        }
    }
    out += '"';
}

Status json_value(std::string& out, const Value& v, const JsonStyle& st, int depth) {
    if (depth > 128) return fail("tojson: nested deeper than 128");
    auto newline = [&](int d) {
        if (st.indent < 0) return;
        out += '\n';
        out.append(static_cast<size_t>(st.indent * d), ' ');
    };
    switch (v.type()) {
        case Value::Type::none: out += "null"; return Status::ok_status();
        case Value::Type::boolean: out += v.as_bool() ? "true" : "false"; return Status::ok_status();
        case Value::Type::integer: out += std::to_string(v.as_int()); return Status::ok_status();
        case Value::Type::floating: {
            const double f = v.as_double();
            out += std::isnan(f) ? "NaN" : std::isinf(f) ? (f > 0 ? "Infinity" : "-Infinity") : float_repr(f);
            return Status::ok_status();
        }
        case Value::Type::string: json_string(out, v.as_string(), st.ensure_ascii); return Status::ok_status();
        case Value::Type::list: {
            const List& l = v.as_list();
            if (l.empty()) {
                out += "[]";
                return Status::ok_status();
            }
            out += '[';
            for (size_t i = 0; i < l.size(); ++i) {
                if (i) out += st.item_separator;
                newline(depth + 1);
                WB_RETURN_IF_ERROR(json_value(out, l[i], st, depth + 1));
            }
            newline(depth);
            out += ']';
            return Status::ok_status();
        }
        case Value::Type::dict:
        case Value::Type::ns: {
            std::vector<const std::pair<std::string, Value>*> items;
            const Dict& d = v.is_dict() ? v.as_dict() : v.namespace_attributes();
            for (const auto& kv : d.items) items.push_back(&kv);
            if (st.sort_keys) std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
            if (items.empty()) {
                out += "{}";
                return Status::ok_status();
            }
            out += '{';
            for (size_t i = 0; i < items.size(); ++i) {
                if (i) out += st.item_separator;
                newline(depth + 1);
                json_string(out, items[i]->first, st.ensure_ascii);
                out += st.key_separator;
                WB_RETURN_IF_ERROR(json_value(out, items[i]->second, st, depth + 1));
            }
            newline(depth);
            out += '}';
            return Status::ok_status();
        }
        case Value::Type::undefined: return fail("tojson: '" + v.undefined_name() + "' is undefined");
        default: return fail(std::string("tojson: a ") + v.type_name() + " is not JSON");
    }
}

Result<Value> string_method(const std::string& s, const std::string& name, CallArgs& a) {
    if (name == "strip" || name == "lstrip" || name == "rstrip")
        return Value(strip(s, a.get(0, "chars"), name != "rstrip", name != "lstrip"));
    if (name == "split" || name == "rsplit") {
        const Value* sep = a.get(0, "sep");
        if (sep && !sep->is_string() && !sep->is_none()) return fail(name + "() needs a string separator, not a " + sep->type_name());
        if (sep && sep->is_string() && sep->as_string().empty()) return fail(name + "(): an empty separator");
        const Value max = arg_or(a, 1, "maxsplit", Value(-1));
        return Value(split(s, a.get(0, "sep"), max.as_int(), name == "rsplit"));
    }
    if (name == "splitlines") {
        List out;
        size_t start = 0;
        for (size_t i = 0; i < s.size(); ++i)
            if (s[i] == '\n' || s[i] == '\r') {
                out.emplace_back(s.substr(start, i - start));
                if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
                start = i + 1;
            }
        if (start < s.size()) out.emplace_back(s.substr(start));
        return Value(std::move(out));
    }
    if (name == "startswith" || name == "endswith") {
        const Value* p = a.get(0, "prefix");
        if (!p) return fail(name + "() needs an argument");
        List options = p->is_list() ? p->as_list() : List{*p};
        for (const Value& o : options) {
            if (!o.is_string()) return fail(name + "() takes a string or a tuple of strings");
            const std::string& x = o.as_string();
            if (x.size() <= s.size() && (name == "startswith" ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0))
                return Value(true);
        }
        return Value(false);
    }
    if (name == "replace") {
        WB_ASSIGN_OR_RETURN(const std::string from, string_arg(a, 0, "old", "replace()"));
        WB_ASSIGN_OR_RETURN(const std::string to, string_arg(a, 1, "new", "replace()"));
        return Value(replace_all(s, from, to, arg_or(a, 2, "count", Value(-1)).as_int()));
    }
    if (name == "upper") return Value(upper_ascii(s));
    if (name == "lower") return Value(lower_ascii(s));
    if (name == "title") return Value(title_ascii(s));
    if (name == "capitalize") return Value(s.empty() ? s : upper_ascii(s.substr(0, 1)) + lower_ascii(s.substr(1)));
    if (name == "find" || name == "count") {
        WB_ASSIGN_OR_RETURN(const std::string x, string_arg(a, 0, "sub", "find()"));
        if (name == "find") {
            const size_t at = s.find(x);
            return Value(at == std::string::npos ? int64_t{-1} : static_cast<int64_t>(to_code_points(s.substr(0, at)).size()));
        }
        int64_t n = 0;
        for (size_t at = s.find(x); at != std::string::npos && !x.empty(); at = s.find(x, at + x.size())) ++n;
        return Value(n);
    }
    if (name == "join") {
        const Value* it = a.get(0, "iterable");
        if (!it) return fail("join() needs an iterable");
        WB_ASSIGN_OR_RETURN(const List items, iterate(*it, "join()"));
        std::string out;
        for (size_t i = 0; i < items.size(); ++i) out += (i ? s : "") + items[i].str();
        return Value(std::move(out));
    }
    return fail("strings have no method " + name + "()");
}

Result<Value> dict_method(const Value& d, const std::string& name, CallArgs& a) {
    const Dict& dict = d.as_dict();
    if (name == "items") {
        List out;
        for (const auto& [k, v] : dict.items) out.push_back(Value::tuple(List{d.key(k), v}));
        return Value(std::move(out));
    }
    if (name == "keys" || name == "values") {
        List out;
        for (const auto& [k, v] : dict.items) out.push_back(name == "keys" ? d.key(k) : v);
        return Value(std::move(out));
    }
    if (name == "get") {
        const Value* k = a.get(0, "key");
        if (!k) return fail("get() needs a key");
        const Value* f = dict.find(k->str());
        return f ? *f : arg_or(a, 1, "default", Value::none());
    }
    return fail("dicts have no method " + name + "()");
}

}  // namespace

Result<std::string> to_json(const Value& v, const JsonStyle& style) {
    std::string out;
    WB_RETURN_IF_ERROR(json_value(out, v, style, 0));
    return out;
}

Value bound_method(const Value& target, const std::string& name) {
    static const char* const kString[] = {"strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith",
                                          "replace", "upper", "lower", "title", "capitalize", "find", "count", "join"};
    static const char* const kDict[] = {"items", "keys", "values", "get"};
    if (target.is_string() && std::find(std::begin(kString), std::end(kString), name) != std::end(kString)) {
        return Value::callable(name, [target, name](CallArgs& a) -> Result<Value> {
            WB_ASSIGN_OR_RETURN(Value r, string_method(target.as_string(), name, a));
            return carry_marks(name, target, a, std::move(r));
        });
    }
    if (target.is_dict() && std::find(std::begin(kDict), std::end(kDict), name) != std::end(kDict))
        return Value::callable(name, [target, name](CallArgs& a) { return dict_method(target, name, a); });
    return Value::undefined(name);
}

Result<bool> apply_test(const std::string& name, const Value& v, CallArgs& a, const BuiltinContext&) {
    const Value* x = a.get(0, "other");
    auto need = [&]() -> Result<const Value*> {
        if (!x) return fail("the test '" + name + "' needs an argument");
        return x;
    };
    if (name == "defined") return !v.is_undefined();
    if (name == "undefined") return v.is_undefined();
    if (name == "none") return v.is_none();
    if (name == "string") return v.is_string();
    if (name == "mapping") return v.is_dict();
    if (name == "iterable") return v.is_list() || v.is_dict() || v.is_string();
    if (name == "sequence") return v.is_list() || v.is_dict() || v.is_string();
    if (name == "number") return v.is_number();
    if (name == "integer") return v.type() == Value::Type::integer;
    if (name == "float") return v.type() == Value::Type::floating;
    if (name == "boolean") return v.type() == Value::Type::boolean;
    if (name == "true") return v.type() == Value::Type::boolean && v.as_bool();
    if (name == "false") return v.type() == Value::Type::boolean && !v.as_bool();
    if (name == "callable") return v.is_callable();
    if (name == "lower") return v.is_string() && lower_ascii(v.as_string()) == v.as_string();
    if (name == "upper") return v.is_string() && upper_ascii(v.as_string()) == v.as_string();
    if (name == "odd" || name == "even") {
        if (!v.is_number()) return fail("the test '" + name + "' needs a number");
        return (v.as_int() % 2 != 0) == (name == "odd");
    }
    if (name == "divisibleby") {
        WB_ASSIGN_OR_RETURN(const Value* d, need());
        if (!v.is_number() || !d->is_number() || d->as_int() == 0) return fail("divisibleby needs two numbers, the second not 0");
        return v.as_int() % d->as_int() == 0;
    }
    if (name == "eq" || name == "equalto" || name == "==" || name == "sameas") {
        WB_ASSIGN_OR_RETURN(const Value* o, need());
        if (name == "sameas" && v.type() != o->type()) return false;
        return v.equals(*o);
    }
    if (name == "ne" || name == "!=") {
        WB_ASSIGN_OR_RETURN(const Value* o, need());
        return !v.equals(*o);
    }
    if (name == "lt" || name == "gt" || name == "le" || name == "ge" || name == "<" || name == ">" || name == "<=" || name == ">=") {
        WB_ASSIGN_OR_RETURN(const Value* o, need());
        const bool lt = name == "lt" || name == "<", gt = name == "gt" || name == ">", le = name == "le" || name == "<=";
        if (lt) return less(v, *o);
        if (gt) return less(*o, v);
        WB_ASSIGN_OR_RETURN(const bool o_less, less(*o, v));
        WB_ASSIGN_OR_RETURN(const bool v_less, less(v, *o));
        return le ? !o_less : !v_less;
    }
    if (name == "in") {
        WB_ASSIGN_OR_RETURN(const Value* o, need());
        if (o->is_string()) return v.is_string() && o->as_string().find(v.as_string()) != std::string::npos;
        if (o->is_dict()) return o->as_dict().find(v.str()) != nullptr;
        if (o->is_list()) return std::any_of(o->as_list().begin(), o->as_list().end(), [&](const Value& e) { return e.equals(v); });
        return false;
    }
    return fail("no test named '" + name + "'");
}

namespace {

Result<Value> filter_impl(const std::string& name, const Value& v, CallArgs& a, const BuiltinContext& ctx) {
    auto defined = [&]() -> Status {
        if (v.is_undefined()) return fail("the filter '" + name + "' was given '" + v.undefined_name() + "', which is undefined");
        return Status::ok_status();
    };
    if (name == "tojson") {
        JsonStyle st;
        if (const Value* i = a.get(0, "indent"); i && !i->is_none()) {
            if (i->as_int() < 0 || i->as_int() > 1024) return fail("tojson: an indent of " + i->str() + " (0 to 1024)");
            st.indent = static_cast<int>(i->as_int());
            st.item_separator = ",";
        }
        if (const Value* e = a.get(99, "ensure_ascii")) st.ensure_ascii = e->truthy();
        if (const Value* k = a.get(99, "sort_keys")) st.sort_keys = k->truthy();
        if (const Value* s = a.get(99, "separators"); s && s->is_list() && s->as_list().size() == 2) {
            st.item_separator = s->as_list()[0].str();
            st.key_separator = s->as_list()[1].str();
        }
        WB_ASSIGN_OR_RETURN(std::string j, to_json(v, st));
        return Value(std::move(j));
    }
    if (name == "string") return Value(v.str());
    if (name == "safe") return v;
    if (name == "trim") {
        if (v.is_undefined()) return Value(std::string());
        return Value(strip(v.str(), a.get(0, "chars"), true, true));
    }
    if (name == "length" || name == "count") {
        if (v.is_string()) return Value(static_cast<int64_t>(to_code_points(v.as_string()).size()));
        if (v.is_list()) return Value(static_cast<int64_t>(v.as_list().size()));
        if (v.is_dict()) return Value(static_cast<int64_t>(v.as_dict().items.size()));
        if (v.is_undefined()) return Value(int64_t{0});
        return fail("the filter 'length' was given a " + std::string(v.type_name()));
    }
    if (name == "default" || name == "d") {
        const bool boolean = arg_or(a, 1, "boolean", Value(false)).truthy();
        if (v.is_undefined() || (boolean && !v.truthy())) return arg_or(a, 0, "default_value", Value(std::string()));
        return v;
    }
    if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
        if (v.is_undefined()) return Value(std::string());   // jinja2 prints an undefined value as ''
        CallArgs none;
        return string_method(v.str(), name, none);
    }
    if (name == "replace") {
        if (v.is_undefined()) return Value(std::string());
        return string_method(v.str(), "replace", a);
    }
    if (name == "items") {
        if (v.is_undefined()) return Value(List{});
        if (!v.is_dict()) return fail("the filter 'items' needs a mapping, not a " + std::string(v.type_name()));
        CallArgs none;
        return dict_method(v, "items", none);
    }
    if (name == "list") {
        WB_ASSIGN_OR_RETURN(List l, iterate(v, "list"));
        return Value(std::move(l));
    }
    if (name == "first" || name == "last") {
        WB_ASSIGN_OR_RETURN(const List l, iterate(v, name.c_str()));
        if (l.empty()) return Value::undefined(name);
        return name == "first" ? l.front() : l.back();
    }
    if (name == "reverse") {
        if (v.is_string()) {
            std::u32string cps = to_code_points(v.as_string());
            std::reverse(cps.begin(), cps.end());
            return Value(from_code_points(cps));
        }
        WB_ASSIGN_OR_RETURN(List l, iterate(v, "reverse"));
        std::reverse(l.begin(), l.end());
        return Value(std::move(l));
    }
    if (name == "join") {
        WB_ASSIGN_OR_RETURN(const List l, iterate(v, "join"));
        const std::string sep = arg_or(a, 0, "d", Value(std::string())).str();
        const Value* attr = a.get(1, "attribute");
        std::string out;
        for (size_t i = 0; i < l.size(); ++i) out += (i ? sep : "") + (attr ? attribute_of(l[i], attr->str()) : l[i]).str();
        return Value(std::move(out));
    }
    if (name == "unique") {
        WB_ASSIGN_OR_RETURN(const List l, iterate(v, "unique"));
        const bool case_sensitive = arg_or(a, 0, "case_sensitive", Value(false)).truthy();
        // Python hashes them: equal numbers (1, 1.0, True) are one; lists and dicts cannot be hashed.
        std::unordered_set<std::string> seen;
        List out;
        for (const Value& e : l) {
            std::string key;
            if (e.is_number()) key = "n" + float_repr(e.as_double());
            else if (e.is_string()) key = "s" + (case_sensitive ? e.as_string() : lower_ascii(e.as_string()));
            else if (e.is_none()) key = "none";
            else return fail(std::string("unique: a ") + e.type_name() + " cannot be hashed");
            if (seen.insert(std::move(key)).second) out.push_back(e);
        }
        return Value(std::move(out));
    }
    if (name == "sort" || name == "min" || name == "max") {
        WB_ASSIGN_OR_RETURN(List l, iterate(v, name.c_str()));
        const bool is_sort = name == "sort";
        const Value* attr = a.get(is_sort ? 2 : 1, "attribute");
        const bool reverse = is_sort && arg_or(a, 0, "reverse", Value(false)).truthy();
        const bool case_sensitive = arg_or(a, is_sort ? 1 : 0, "case_sensitive", Value(false)).truthy();
        auto key = [&](const Value& e) { return attr ? attribute_of(e, attr->str()) : e; };
        Status bad = Status::ok_status();
        // Python's sort is stable in both directions: reverse compares the other way round.
        std::stable_sort(l.begin(), l.end(), [&](const Value& x, const Value& y) {
            auto r = reverse ? less(key(y), key(x), case_sensitive) : less(key(x), key(y), case_sensitive);
            if (!r.ok()) bad = r.status();
            return r.ok() && *r;
        });
        WB_RETURN_IF_ERROR(bad);
        if (name == "sort") return Value(std::move(l));
        if (l.empty()) return Value::undefined(name);
        return name == "min" ? l.front() : l.back();
    }
    if (name == "dictsort") {
        if (!v.is_dict()) return fail("the filter 'dictsort' needs a mapping");
        std::vector<std::pair<std::string, Value>> items = v.as_dict().items;
        std::stable_sort(items.begin(), items.end(), [](const auto& x, const auto& y) { return lower_ascii(x.first) < lower_ascii(y.first); });
        List out;
        for (auto& [k, e] : items) out.push_back(Value::tuple(List{v.key(k), e}));
        return Value(std::move(out));
    }
    if (name == "sum") {
        WB_ASSIGN_OR_RETURN(const List l, iterate(v, "sum"));
        const Value* attr = a.get(0, "attribute");
        bool is_float = false;
        int64_t si = 0;
        double sf = 0;
        for (const Value& e0 : l) {
            const Value e = attr ? attribute_of(e0, attr->str()) : e0;
            if (!e.is_number()) return fail("sum: a " + std::string(e.type_name()) + " is not a number");
            is_float = is_float || e.type() == Value::Type::floating;
            si += e.as_int();
            sf += e.as_double();
        }
        return is_float ? Value(sf) : Value(si);
    }
    if (name == "abs") {
        if (!v.is_number()) return fail("abs needs a number");
        return v.type() == Value::Type::floating ? Value(std::fabs(v.as_double())) : Value(static_cast<int64_t>(std::llabs(v.as_int())));
    }
    if (name == "int" || name == "float") {
        // The whole (stripped) string must be the number, as Python's int() and float() want.
        const bool is_int = name == "int";
        if (v.is_number()) return is_int ? Value(v.as_int()) : Value(v.as_double());
        if (v.is_string()) {
            const std::string t = strip(v.as_string(), nullptr, true, true);
            const char* b = t.data() + (!t.empty() && t[0] == '+' ? 1 : 0);
            const char* e = t.data() + t.size();
            if (is_int) {
                int64_t i = 0;
                if (auto r = std::from_chars(b, e, i); r.ec == std::errc() && r.ptr == e && b != e) return Value(i);
            } else {
                double f = 0;
                if (auto r = std::from_chars(b, e, f); r.ec == std::errc() && r.ptr == e && b != e) return Value(f);
            }
        }
        return arg_or(a, 0, "default", is_int ? Value(int64_t{0}) : Value(0.0));
    }
    if (name == "round") {
        if (!v.is_number()) return fail("round needs a number");
        const int64_t p = arg_or(a, 0, "precision", Value(int64_t{0})).as_int();
        if (v.type() != Value::Type::floating) return Value(v.as_int());   // Python's round keeps an int an int
        const double m = std::pow(10.0, static_cast<double>(std::clamp<int64_t>(p, -300, 300)));
        return Value(std::nearbyint(v.as_double() * m) / m);
    }
    if (name == "indent") {
        // jinja2: every line after the first indented unless empty (blank=True: empty ones too),
        // the first only with first=True.
        WB_RETURN_IF_ERROR(defined());
        const Value w = arg_or(a, 0, "width", Value(int64_t{4}));
        if (!w.is_string() && (w.as_int() < 0 || w.as_int() > 4096)) return fail("indent: a width of " + w.str() + " (0 to 4096)");
        const std::string pad = w.is_string() ? w.as_string() : std::string(static_cast<size_t>(w.as_int()), ' ');
        const bool first = arg_or(a, 1, "first", Value(false)).truthy(), blank = arg_or(a, 2, "blank", Value(false)).truthy();
        const std::string s = v.str() + "\n";
        std::vector<std::string> lines;
        for (size_t start = 0; start < s.size();) {
            const size_t nl = s.find('\n', start);
            lines.push_back(s.substr(start, nl - start));
            start = nl + 1;
        }
        std::string out = lines.empty() ? std::string() : lines[0];
        for (size_t i = 1; i < lines.size(); ++i) out += "\n" + ((blank || !lines[i].empty()) ? pad : "") + lines[i];
        if (first) out = pad + out;
        return Value(std::move(out));
    }
    if (name == "map" || name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
        WB_ASSIGN_OR_RETURN(const List l, iterate(v, name.c_str()));
        List out;
        if (name == "map") {
            if (const Value* attr = a.get(99, "attribute")) {
                const Value* def = a.get(99, "default");
                for (const Value& e : l) {
                    Value got = attribute_of(e, attr->str());
                    out.push_back(got.is_undefined() && def ? *def : got);
                }
                return Value(std::move(out));
            }
            if (a.positional.empty() || !a.positional[0].is_string()) return fail("map needs a filter name or attribute=");
            CallArgs rest;
            rest.positional.assign(a.positional.begin() + 1, a.positional.end());
            rest.keyword = a.keyword;
            for (const Value& e : l) {
                WB_ASSIGN_OR_RETURN(Value m, ctx.filter(a.positional[0].as_string(), e, rest));
                out.push_back(std::move(m));
            }
            return Value(std::move(out));
        }
        const bool by_attr = name == "selectattr" || name == "rejectattr", keep_if = name == "select" || name == "selectattr";
        size_t at = 0;
        std::string attr;
        if (by_attr) {
            if (a.positional.empty()) return fail(name + " needs an attribute");
            attr = a.positional[0].str();
            at = 1;
        }
        std::string test = at < a.positional.size() ? a.positional[at].str() : "";
        CallArgs rest;
        if (at + 1 < a.positional.size()) rest.positional.assign(a.positional.begin() + static_cast<std::ptrdiff_t>(at + 1), a.positional.end());
        for (const Value& e : l) {
            const Value x = by_attr ? attribute_of(e, attr) : e;
            bool pass = false;
            if (test.empty()) {
                pass = x.truthy();
            } else {
                WB_ASSIGN_OR_RETURN(pass, ctx.test(test, x, rest));
            }
            if (pass == keep_if) out.push_back(e);
        }
        return Value(std::move(out));
    }
    return fail("no filter named '" + name + "'");
}

}  // namespace

Result<Value> apply_filter(const std::string& name, const Value& v, CallArgs& a, const BuiltinContext& ctx) {
    WB_ASSIGN_OR_RETURN(Value r, filter_impl(name, v, a, ctx));
    return carry_marks(name, v, a, std::move(r));
}

}  // namespace workbench::jinja
