// A parsed chat template: expressions and statements as jinja2's grammar builds them, each with
// the source line it came from (errors while rendering name it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/jinja_value.h"

namespace workbench::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
using KeywordArgs = std::vector<std::pair<std::string, ExprPtr>>;

struct Expr {
    enum class Kind : uint8_t {
        literal,     // value
        name,        // name
        list,        // items
        tuple,       // items
        dict,        // items: key, value, key, value, …
        attribute,   // a.name
        subscript,   // a[b]
        slice,       // a[b:c:d] (items: start, stop, step; each may be null)
        call,        // a(items…, kwargs…)
        filter,      // a | name(items…, kwargs…)
        test,        // a is [not] name(items…): `negated`
        unary,       // name: "-", "+", "not"; a
        binary,      // name: + - * / // % ** ~; a, b
        compare,     // a op1 items[0] op2 items[1] … (ops)
        and_,        // a, b (short-circuit, returns an operand)
        or_,         // a, b
        conditional, // b if a else c (c null: undefined)
    };
    Kind kind = Kind::literal;
    int32_t line = 0;
    Value value;
    std::string name;
    ExprPtr a, b, c;
    std::vector<ExprPtr> items;
    KeywordArgs kwargs;
    std::vector<std::string> ops;
    bool negated = false;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
    enum class Kind : uint8_t {
        text,        // text
        output,      // {{ expr }}
        if_,         // branches: (condition, body)…; an else branch has a null condition
        for_,        // targets in expr [if filter]: body, else_body
        set,         // targets = expr, or attribute: targets[0].attribute = expr
        set_block,   // {% set name %}body{% endset %}
        macro,       // name(params): body
        call_block,  // {% call macro(args) %}body{% endcall %}: expr the call, body the caller()
        filter_block,// {% filter name(args) %}body{% endfilter %}: expr a filter over a placeholder
        break_,
        continue_,
        scope,       // body rendered in place (generation blocks)
    };
    Kind kind = Kind::text;
    int32_t line = 0;
    std::string text;                        // text; macro's name; set's attribute
    ExprPtr expr, filter;
    std::vector<std::pair<ExprPtr, Body>> branches;
    std::vector<std::string> targets;
    Body body, else_body;
    std::vector<std::pair<std::string, ExprPtr>> params;   // macro: name, default (null: required)
};

struct Template {
    Body body;
};

}  // namespace workbench::jinja
