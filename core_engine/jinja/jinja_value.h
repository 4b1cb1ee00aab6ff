// The values a chat template computes with, as jinja2 (on Python) has them: undefined, none,
// booleans, integers and floats kept apart (tojson prints 1 and 1.0 differently), strings
// (UTF-8, measured in code points), lists, dicts in insertion order, callables (macros, builtins,
// bound methods) and namespace() objects. Lists and dicts are shared, as Python's are; the
// sandbox never mutates them (Hugging Face renders in jinja2's immutable sandbox).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workbench/json.h"
#include "workbench/status.h"

namespace workbench::jinja {

class Value;
using List = std::vector<Value>;

// Which bytes of a string came from the conversation (a message's text, a tool's definition)
// rather than from the template: sorted, disjoint [begin, end) ranges. The tokenizer keeps them
// text, so a control token typed into a message never becomes a control token.
struct Mark {
    size_t begin = 0, end = 0;
};
using Marks = std::vector<Mark>;

// Keys are strings (JSON's); a dict literal's other keys are printed to their string.
struct Dict {
    std::vector<std::pair<std::string, Value>> items;
    const Value* find(std::string_view key) const;
    void set(const std::string& key, Value value);
};

struct CallArgs;
using Builtin = std::function<Result<Value>(CallArgs&)>;
struct Callable {
    std::string name;
    Builtin call;
};

class Value {
public:
    enum class Type : uint8_t { undefined, none, boolean, integer, floating, string, list, dict, callable, ns };

    Value() = default;   // undefined
    static Value undefined(std::string name = {}) { Value v; v.text_ = std::make_shared<std::string>(std::move(name)); return v; }
    static Value none() { Value v; v.type_ = Type::none; return v; }
    Value(bool b) : type_(Type::boolean), int_(b) {}
    Value(int64_t i) : type_(Type::integer), int_(i) {}
    Value(int i) : type_(Type::integer), int_(i) {}
    Value(double f) : type_(Type::floating), float_(f) {}
    Value(std::string s) : type_(Type::string), text_(std::make_shared<std::string>(std::move(s))) {}
    Value(const char* s) : Value(std::string(s)) {}
    Value(List l);
    // A Python tuple: a list that prints as (a, b) and equals only tuples (dict items, (a, b) literals).
    static Value tuple(List l) { Value v(std::move(l)); v.tuple_ = true; return v; }
    Value(Dict d);
    static Value callable(std::string name, Builtin fn);
    static Value ns(Dict attributes);   // namespace(): attributes set later by `set ns.x = …`
    // `marked`: every string in it is the conversation's.
    static Value from_json(const Json& j, bool marked = false);
    static Value marked_string(std::string s, Marks marks);

    Type type() const { return type_; }
    // Lists and dicts inside one another: 0 for a scalar (the interpreter refuses deep ones, so
    // printing, comparing and freeing them never recurse far).
    int32_t depth() const { return depth_; }
    bool is_undefined() const { return type_ == Type::undefined; }
    bool is_none() const { return type_ == Type::none; }
    bool is_string() const { return type_ == Type::string; }
    bool is_number() const { return type_ == Type::integer || type_ == Type::floating || type_ == Type::boolean; }
    bool is_list() const { return type_ == Type::list; }
    bool is_tuple() const { return type_ == Type::list && tuple_; }
    bool is_dict() const { return type_ == Type::dict; }
    bool is_callable() const { return type_ == Type::callable; }
    bool is_namespace() const { return type_ == Type::ns; }

    bool as_bool() const { return int_ != 0; }
    // A float truncated toward zero, saturating past int64's range (NaN: 0): a template's 4e36 must
    // not be undefined behaviour.
    int64_t as_int() const {
        if (type_ != Type::floating) return int_;
        if (!(float_ == float_)) return 0;
        if (float_ >= 9.2233720368547758e18) return INT64_MAX;
        if (float_ <= -9.2233720368547758e18) return -INT64_MAX;   // not INT64_MIN: negating it must stay defined
        return static_cast<int64_t>(float_);
    }
    double as_double() const { return type_ == Type::floating ? float_ : static_cast<double>(int_); }
    const std::string& as_string() const { return *text_; }
    // A string's marks (empty for the template's own text and for anything not a string).
    const Marks& marks() const { static const Marks none; return marks_ ? *marks_ : none; }
    // A list or dict that came from the conversation: its keys are the conversation's text too.
    bool from_conversation() const { return conversation_; }
    // One of this dict's keys as a value (marked when the dict came from the conversation).
    Value key(const std::string& k) const;
    const List& as_list() const { return *list_; }
    const Dict& as_dict() const { return *dict_; }
    Dict& namespace_attributes() const { return *dict_; }   // a namespace's own, mutable
    const Callable& as_callable() const { return *callable_; }
    // The name an undefined value was looked up by, for the error its use raises.
    const std::string& undefined_name() const { static const std::string none; return text_ ? *text_ : none; }

    // Python's truth: empty strings, lists and dicts, 0, none and undefined are false.
    bool truthy() const;
    // Python's str(): None, True, False; floats as repr; lists and dicts as their repr; undefined "".
    std::string str() const;
    // Python's repr() (strings quoted as Python quotes them).
    std::string repr() const;
    // Python's ==, deep for lists and dicts; 1 == 1.0 == True.
    bool equals(const Value& other) const;
    // For error messages: "string", "list", "undefined", …
    const char* type_name() const;

private:
    Type type_ = Type::undefined;
    bool tuple_ = false;
    int32_t depth_ = 0;
    int64_t int_ = 0;
    double float_ = 0;
    std::shared_ptr<std::string> text_;       // string; undefined: its name
    std::shared_ptr<List> list_;
    std::shared_ptr<Dict> dict_;              // dict; namespace attributes
    std::shared_ptr<Callable> callable_;
    std::shared_ptr<const Marks> marks_;     // string: its marked bytes; null when none
    bool conversation_ = false;              // list, dict: from a marked variable
};

// A call's arguments: positional, then keyword.
struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;
    // The argument at `index` or named `name`, else `fallback`; an error names `where` when it is
    // required and missing.
    const Value* get(size_t index, std::string_view name) const;
};

// Python's str.isspace() on a code point.
bool is_python_space(uint32_t cp);
// UTF-8 to code points and back (strings are measured, sliced and stripped by code point).
std::u32string to_code_points(std::string_view s);
std::string from_code_points(std::u32string_view s);

// Python's repr of a float (shortest round trip: 1.0, 2.5, 1e-07, 1e+16, inf, nan).
std::string float_repr(double f);

}  // namespace workbench::jinja
