// Content marks carried through rendering: which bytes of a string, and finally of the rendered
// prompt, came from the conversation rather than from the template. Concatenation, captured
// blocks, slices and the substring methods (strip, split, join) keep each byte's mark where it
// lands; any other value computed from marked text (replace, upper, tojson, …) is marked whole,
// so the conversation's text is never mistaken for the template's markup.
#pragma once

#include <string>
#include <string_view>

#include "jinja/jinja_value.h"

namespace workbench::jinja {

// A string built piece by piece (the output, a captured block, a concatenation).
class MarkedText {
public:
    void append_markup(std::string_view text);   // the template's own text
    // A value as it prints: a string with its marks; anything else marked whole when anything
    // inside it is marked.
    void append(const Value& v);
    size_t size() const { return text_.size(); }
    const std::string& text() const { return text_; }
    const Marks& marks() const { return marks_; }
    Value take();

private:
    void mark(size_t begin, size_t end);
    std::string text_;
    Marks marks_;
};

// Whether a value holds marked text anywhere (lists and dicts searched).
bool has_marks(const Value& v);
// The marks of [begin, end) of a string, shifted to start at 0.
Marks sub_marks(const Marks& marks, size_t begin, size_t end);
// The marks a filter's or method's result inherits from its target and arguments.
Value carry_marks(const std::string& op, const Value& target, const CallArgs& args, Value result);

}  // namespace workbench::jinja
