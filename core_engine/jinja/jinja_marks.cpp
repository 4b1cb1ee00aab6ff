// How marks follow text through the operations templates apply to it.
#include "jinja/jinja_marks.h"

#include <algorithm>
#include <optional>

namespace workbench::jinja {

void MarkedText::mark(size_t begin, size_t end) {
    if (begin >= end) return;
    if (!marks_.empty() && marks_.back().end == begin) marks_.back().end = end;   // adjacent pieces join
    else marks_.push_back({begin, end});
}

void MarkedText::append_markup(std::string_view text) { text_ += text; }

void MarkedText::append(const Value& v) {
    const size_t at = text_.size();
    if (v.is_string()) {
        text_ += v.as_string();
        for (const Mark& m : v.marks()) mark(at + m.begin, at + m.end);
        return;
    }
    text_ += v.str();
    if (has_marks(v)) mark(at, text_.size());
}

Value MarkedText::take() {
    Value v = Value::marked_string(std::move(text_), std::move(marks_));
    text_.clear();
    marks_.clear();
    return v;
}

bool has_marks(const Value& v) {
    if (v.is_string()) return !v.marks().empty();
    if (v.from_conversation()) return true;   // its keys are the conversation's text
    if (v.is_list()) return std::any_of(v.as_list().begin(), v.as_list().end(), [](const Value& e) { return has_marks(e); });
    if (v.is_dict())
        return std::any_of(v.as_dict().items.begin(), v.as_dict().items.end(), [](const auto& kv) { return has_marks(kv.second); });
    return false;
}

Marks sub_marks(const Marks& marks, size_t begin, size_t end) {
    Marks out;
    for (const Mark& m : marks) {
        const size_t b = std::max(m.begin, begin), e = std::min(m.end, end);
        if (b < e) out.push_back({b - begin, e - begin});
    }
    return out;
}

namespace {

Value whole(Value result) {
    if (!result.is_string() || result.as_string().empty()) return result;
    const size_t n = result.as_string().size();
    return Value::marked_string(result.as_string(), {{0, n}});
}

// Pieces of `source` in order (split's results), each placed after the last; a separator of
// known width is stepped over exactly, whitespace runs by searching (a piece never starts in one).
std::optional<Value> place_pieces(const Value& source, const Value& pieces, const Value* sep) {
    const std::string& s = source.as_string();
    List out;
    size_t cursor = 0;
    for (const Value& p : pieces.as_list()) {
        if (!p.is_string()) return std::nullopt;
        const std::string& piece = p.as_string();
        const size_t at = sep ? cursor : s.find(piece, cursor);
        if (at == std::string::npos || s.compare(at, piece.size(), piece) != 0) return std::nullopt;
        out.push_back(Value::marked_string(piece, sub_marks(source.marks(), at, at + piece.size())));
        cursor = at + piece.size() + (sep ? sep->as_string().size() : 0);
    }
    return Value(std::move(out));
}

}  // namespace

Value carry_marks(const std::string& op, const Value& target, const CallArgs& args, Value result) {
    const bool split_like = op == "split" || op == "rsplit" || op == "splitlines";
    if (!result.is_string() && !(split_like && result.is_list())) return result;
    if (has_marks(result)) return result;   // values passed through (first, default, …) keep their own
    const bool target_marked = has_marks(target);
    bool args_marked = false;
    for (const Value& v : args.positional) args_marked = args_marked || has_marks(v);
    for (const auto& [k, v] : args.keyword) args_marked = args_marked || has_marks(v);
    if (!target_marked && !args_marked) return result;

    if (target.is_string() && result.is_string()) {
        const std::string& s = target.as_string();
        const std::string& r = result.as_string();
        if (r == s) return Value::marked_string(r, target.marks());
        if (!args_marked && (op == "strip" || op == "lstrip" || op == "rstrip" || op == "trim")) {
            // The result starts at the first byte not stripped, so its first occurrence is it.
            const size_t at = s.find(r);
            if (at != std::string::npos) return Value::marked_string(r, sub_marks(target.marks(), at, at + r.size()));
        }
    }
    if (split_like && target.is_string() && !args_marked) {
        const Value* sep = args.get(0, "sep");
        const bool exact = op != "splitlines" && sep && sep->is_string();
        if (auto placed = place_pieces(target, result, exact ? sep : nullptr)) return *std::move(placed);
    }
    if (result.is_list()) {   // split's pieces of marked text that could not be placed: each marked whole
        List out;
        for (const Value& p : result.as_list()) out.push_back(whole(p));
        return Value(std::move(out));
    }
    if (op == "join") {   // rebuilt piece by piece; the separator is the target (str.join) or an argument (the filter)
        const bool method = target.is_string();
        const Value* sep_arg = args.get(0, method ? "iterable" : "d");
        const Value& items = method ? (sep_arg ? *sep_arg : target) : target;
        const Value sep = method ? target : (sep_arg ? *sep_arg : Value(std::string()));
        if (items.is_list() && (method ? sep_arg != nullptr : args.positional.size() + args.keyword.size() <= 1)) {
            MarkedText t;
            for (size_t i = 0; i < items.as_list().size(); ++i) {
                if (i) t.append(sep);
                t.append(items.as_list()[i]);
            }
            if (t.text() == result.as_string()) return t.take();
        }
    }
    return whole(std::move(result));
}

}  // namespace workbench::jinja
