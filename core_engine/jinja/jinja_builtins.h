// The filters, tests, value methods and tojson of the interpreter: what Hugging Face chat
// templates call, with jinja2's and Python's semantics.
//   filters: abs capitalize count d default dictsort first float indent int items join last length
//     list lower map max min reject rejectattr replace reverse round safe select selectattr sort
//     string sum title tojson trim unique upper
//   tests: boolean callable defined divisibleby eq equalto even false float ge gt in integer iterable
//     le lower lt mapping ne none number odd sameas sequence string true undefined upper
//   methods: str.strip lstrip rstrip split rsplit splitlines startswith endswith replace upper lower
//     title capitalize find count join; dict.items keys values get
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "jinja/jinja_value.h"

namespace workbench::jinja {

// Calls back into the interpreter (filters such as map and select apply other filters and tests).
struct BuiltinContext {
    std::function<Result<Value>(const std::string& name, const Value& target, CallArgs& args)> filter;
    std::function<Result<bool>(const std::string& name, const Value& target, CallArgs& args)> test;
};

Result<Value> apply_filter(const std::string& name, const Value& target, CallArgs& args, const BuiltinContext& ctx);
Result<bool> apply_test(const std::string& name, const Value& target, CallArgs& args, const BuiltinContext& ctx);
// A method of a string or dict bound to it (a callable value); undefined when it has none by that name.
Value bound_method(const Value& target, const std::string& name);

// json.dumps as transformers' tojson calls it: insertion order, ", " and ": " (with indent: "," and
// newlines), raw UTF-8 unless ensure_ascii.
struct JsonStyle {
    int indent = -1;   // -1: none
    bool ensure_ascii = false, sort_keys = false;
    std::string item_separator = ", ", key_separator = ": ";
};
Result<std::string> to_json(const Value& v, const JsonStyle& style);

// The items a loop or filter walks: a list's elements, a dict's keys, a string's characters;
// nothing for an undefined value; an error naming `where` for anything else.
Result<List> iterate(const Value& v, const char* where);

}  // namespace workbench::jinja
