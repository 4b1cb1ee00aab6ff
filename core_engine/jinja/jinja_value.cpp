// Python's semantics for the values a template touches: truth, str(), repr(), ==.
#include "jinja/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace workbench::jinja {

const Value* Dict::find(std::string_view key) const {
    for (const auto& [k, v] : items)
        if (k == key) return &v;
    return nullptr;
}

void Dict::set(const std::string& key, Value value) {
    for (auto& [k, v] : items)
        if (k == key) {
            v = std::move(value);
            return;
        }
    items.emplace_back(key, std::move(value));
}

Value::Value(List l) : type_(Type::list), list_(std::make_shared<List>(std::move(l))) {
    for (const Value& e : *list_) depth_ = std::max(depth_, e.depth_ + 1);
    depth_ = std::max(depth_, 1);
}

Value::Value(Dict d) : type_(Type::dict), dict_(std::make_shared<Dict>(std::move(d))) {
    for (const auto& [k, e] : dict_->items) depth_ = std::max(depth_, e.depth_ + 1);
    depth_ = std::max(depth_, 1);
}

Value Value::callable(std::string name, Builtin fn) {
    Value v;
    v.type_ = Type::callable;
    v.callable_ = std::make_shared<Callable>(Callable{std::move(name), std::move(fn)});
    return v;
}

Value Value::ns(Dict attributes) {
    Value v;
    v.type_ = Type::ns;
    v.dict_ = std::make_shared<Dict>(std::move(attributes));
    return v;
}

Value Value::marked_string(std::string s, Marks marks) {
    Value v(std::move(s));
    if (!marks.empty()) v.marks_ = std::make_shared<const Marks>(std::move(marks));
    return v;
}

Value Value::key(const std::string& k) const {
    if (!conversation_ || k.empty()) return Value(k);
    return marked_string(k, {{0, k.size()}});
}

Value Value::from_json(const Json& j, bool marked) {
    switch (j.type()) {
        case Json::value_t::null: return none();
        case Json::value_t::boolean: return Value(j.get<bool>());
        case Json::value_t::number_integer: return Value(j.get<int64_t>());
        case Json::value_t::number_unsigned: return Value(static_cast<int64_t>(j.get<uint64_t>()));
        case Json::value_t::number_float: return Value(j.get<double>());
        case Json::value_t::string: {
            std::string s = j.get<std::string>();
            const size_t n = s.size();
            return marked && n ? marked_string(std::move(s), {{0, n}}) : Value(std::move(s));
        }
        case Json::value_t::array: {
            List l;
            l.reserve(j.size());
            for (const Json& e : j) l.push_back(from_json(e, marked));
            Value v(std::move(l));
            v.conversation_ = marked;
            return v;
        }
        case Json::value_t::object: {
            Dict d;
            for (auto it = j.begin(); it != j.end(); ++it) d.items.emplace_back(it.key(), from_json(it.value(), marked));
            Value v(std::move(d));
            v.conversation_ = marked;
            return v;
        }
        default: return Value();
    }
}

bool Value::truthy() const {
    switch (type_) {
        case Type::undefined:
        case Type::none: return false;
        case Type::boolean:
        case Type::integer: return int_ != 0;
        case Type::floating: return float_ != 0;
        case Type::string: return !text_->empty();
        case Type::list: return !list_->empty();
        case Type::dict: return !dict_->items.empty();
        default: return true;
    }
}

std::string float_repr(double f) {
    if (std::isnan(f)) return "nan";
    if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
    // The shortest digits that read back as f, then Python's layout for them.
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
    std::string sci(buf, r.ptr);
    const size_t e = sci.find('e');
    std::string mantissa = sci.substr(0, e);
    const int exp = std::stoi(sci.substr(e + 1));
    const bool negative = !mantissa.empty() && mantissa[0] == '-';
    if (negative) mantissa.erase(0, 1);
    std::string digits;
    for (char c : mantissa)
        if (c != '.') digits += c;
    std::string out;
    if (exp >= -5 + 1 && exp < 16) {   // Python's repr: fixed for 1e-4 <= |f| < 1e16
        if (exp >= 0) {
            const auto int_len = static_cast<size_t>(exp + 1);
            if (digits.size() <= int_len) out = digits, out.append(int_len - digits.size(), '0'), out += ".0";
            else out.assign(digits, 0, int_len).append(".").append(digits, int_len, std::string::npos);
        } else {
            out = "0.";
            out.append(static_cast<size_t>(-exp - 1), '0');
            out += digits;
        }
    } else {
        out = digits.substr(0, 1);
        if (digits.size() > 1) out.append(".").append(digits, 1, std::string::npos);
        char ebuf[16];
        std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
        out += ebuf;
    }
    std::string signed_out(negative ? "-" : "");
    signed_out += out;
    return signed_out;
}

namespace {

// Python's repr of a str: single quotes unless the text has ' and no ", escapes for \\, the quote,
// \n \r \t and other non-printables (\xNN, \uNNNN); printable non-ASCII kept.
std::string python_string_repr(const std::string& s) {
    const bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
    const char quote = has_single && !has_double ? '"' : '\'';
    std::string out(1, quote);
    for (size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '\\') out += "\\\\";
        else if (c == static_cast<unsigned char>(quote)) out += std::string("\\") + quote;
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", c);
            out += b;
        } else if (c >= 0x80) {
            // Decode one code point; the non-printable ones Python escapes (C1 controls, a few spaces).
            uint32_t cp = 0;
            size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
            cp = n == 1 ? c : c & (0xFF >> (n + 1));
            for (size_t k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
            const bool escaped = (cp >= 0x80 && cp <= 0xA0) || cp == 0xAD || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
                                 (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF || cp == 0x1680;
            if (escaped) {
                char b[12];
                if (cp <= 0xFF) std::snprintf(b, sizeof b, "\\x%02x", cp);
                else std::snprintf(b, sizeof b, "\\u%04x", cp);
                out += b;
            } else {
                out.append(s, i, n);
            }
            i += n - 1;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + quote;
}

}  // namespace

std::string Value::str() const {
    switch (type_) {
        case Type::undefined: return "";
        case Type::none: return "None";
        case Type::boolean: return int_ ? "True" : "False";
        case Type::integer: return std::to_string(int_);
        case Type::floating: return float_repr(float_);
        case Type::string: return *text_;
        default: return repr();
    }
}

std::string Value::repr() const {
    switch (type_) {
        case Type::string: return python_string_repr(*text_);
        case Type::list: {
            std::string out = tuple_ ? "(" : "[";
            for (size_t i = 0; i < list_->size(); ++i) out += (i ? ", " : "") + (*list_)[i].repr();
            if (tuple_ && list_->size() == 1) out += ",";
            return out + (tuple_ ? ")" : "]");
        }
        case Type::dict: {
            std::string out = "{";
            for (size_t i = 0; i < dict_->items.size(); ++i)
                out += (i ? ", " : "") + python_string_repr(dict_->items[i].first) + ": " + dict_->items[i].second.repr();
            return out + "}";
        }
        case Type::callable: return "<function " + callable_->name + ">";
        case Type::ns: return "<Namespace>";
        default: return str();
    }
}

bool Value::equals(const Value& o) const {
    if (is_number() && o.is_number()) {
        if (type_ == Type::floating || o.type_ == Type::floating) return as_double() == o.as_double();
        return int_ == o.int_;
    }
    if (type_ != o.type_) return false;
    switch (type_) {
        case Type::undefined:
        case Type::none: return true;
        case Type::string: return *text_ == *o.text_;
        case Type::list: {
            if (tuple_ != o.tuple_ || list_->size() != o.list_->size()) return false;
            for (size_t i = 0; i < list_->size(); ++i)
                if (!(*list_)[i].equals((*o.list_)[i])) return false;
            return true;
        }
        case Type::dict: {
            if (dict_->items.size() != o.dict_->items.size()) return false;
            for (const auto& [k, v] : dict_->items) {
                const Value* w = o.dict_->find(k);
                if (!w || !v.equals(*w)) return false;
            }
            return true;
        }
        case Type::callable: return callable_ == o.callable_;
        case Type::ns: return dict_ == o.dict_;
        default: return false;
    }
}

const char* Value::type_name() const {
    switch (type_) {
        case Type::undefined: return "undefined";
        case Type::none: return "none";
        case Type::boolean: return "boolean";
        case Type::integer: return "integer";
        case Type::floating: return "float";
        case Type::string: return "string";
        case Type::list: return "list";
        case Type::dict: return "dict";
        case Type::callable: return "callable";
        case Type::ns: return "namespace";
    }
    return "?";
}

const Value* CallArgs::get(size_t index, std::string_view name) const {
    for (const auto& [k, v] : keyword)
        if (k == name) return &v;
    return index < positional.size() ? &positional[index] : nullptr;
}

bool is_python_space(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::u32string to_code_points(std::string_view s) {
    // Strict UTF-8; a byte that starts no valid sequence becomes U+DC80..U+DCFF (Python's
    // surrogateescape), so from_code_points gives the same bytes back.
    std::u32string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
        bool ok = n > 0 && i + n <= s.size();
        for (size_t k = 1; ok && k < n; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            ok = (cc & 0xC0) == 0x80;
            cp = (cp << 6) | (cc & 0x3F);
        }
        // Overlong forms, surrogates and values past U+10FFFF are not UTF-8 either.
        ok = ok && !(n == 2 && cp < 0x80) && !(n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) && !(n == 4 && (cp < 0x10000 || cp > 0x10FFFF));
        if (!ok) {
            out += static_cast<char32_t>(0xDC00 + c);
            ++i;
            continue;
        }
        out += cp;
        i += n;
    }
    return out;
}

std::string from_code_points(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t cp : s) {
        if (cp >= 0xDC80 && cp <= 0xDCFF) out += static_cast<char>(cp - 0xDC00);   // an escaped byte
        else if (cp < 0x80) out += static_cast<char>(cp);
        else if (cp < 0x800) out += static_cast<char>(0xC0 | (cp >> 6)), out += static_cast<char>(0x80 | (cp & 0x3F));
        else if (cp < 0x10000)
            out += static_cast<char>(0xE0 | (cp >> 12)), out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), out += static_cast<char>(0x80 | (cp & 0x3F));
        else
            out += static_cast<char>(0xF0 | (cp >> 18)), out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
                out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return out;
}

}  // namespace workbench::jinja
