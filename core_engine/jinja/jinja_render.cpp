// The interpreter: statements rendered into a string, expressions evaluated to Values, with
// jinja2's scoping (each loop iteration and each macro call a scope of its own; `if` none; a
// namespace() the way to carry state out of a loop) and its lenient undefined values (printing
// one prints nothing; using one is an error naming it).
#include "jinja/jinja.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <unordered_map>

#include "jinja/jinja_builtins.h"
#include "jinja/jinja_marks.h"
#include "jinja/jinja_parser.h"

namespace workbench::jinja {
namespace {

using Frame = std::unordered_map<std::string, Value>;

// Where each code point of a UTF-8 string starts, and its end (slices count code points).
std::vector<size_t> code_point_offsets(const std::string& s) {
    std::vector<size_t> at;
    for (size_t i = 0; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) at.push_back(i);
    at.push_back(s.size());
    return at;
}

Value substring(const Value& s, size_t begin, size_t end) {
    return Value::marked_string(s.as_string().substr(begin, end - begin), sub_marks(s.marks(), begin, end));
}
constexpr int32_t kMaxValueDepth = 100;       // lists and dicts inside one another
constexpr size_t kMaxListItems = 1'000'000;   // one list, however it was built
enum class Flow { normal, break_loop, continue_loop };

class Renderer {
public:
    explicit Renderer(const RenderOptions& options) : opt_(options), start_(std::chrono::steady_clock::now()) {
        builtins_.filter = [this](const std::string& name, const Value& v, CallArgs& a) { return apply_filter(name, v, a, builtins_); };
        builtins_.test = [this](const std::string& name, const Value& v, CallArgs& a) { return apply_test(name, v, a, builtins_); };
    }

    Result<RenderedText> run(const Template& t, const Json& variables) {
        Frame root;
        install_globals(root);
        if (variables.is_object())
            for (auto it = variables.begin(); it != variables.end(); ++it) {
                const auto& marked = opt_.marked_variables;
                root[it.key()] = Value::from_json(it.value(), std::find(marked.begin(), marked.end(), it.key()) != marked.end());
            }
        frames_.push_back(std::move(root));
        MarkedText out;
        Flow flow = Flow::normal;
        WB_RETURN_IF_ERROR(body(t.body, out, flow));
        return RenderedText{out.text(), out.marks()};
    }

private:
    const RenderOptions& opt_;
    std::chrono::steady_clock::time_point start_;
    std::vector<Frame> frames_;
    BuiltinContext builtins_;
    int64_t steps_ = 0;
    int32_t depth_ = 0;

    static Status fail(int32_t line, const std::string& what) {
        return error(StatusCode::invalid_argument, "template line " + std::to_string(line) + ": " + what);
    }
    // A builtin's error, placed at the line that called it.
    static Status at_line(int32_t line, const Status& s) {
        if (s.ok() || s.message().rfind("template line ", 0) == 0) return s;
        return error(s.code(), "template line " + std::to_string(line) + ": " + s.message());
    }
    Status tick(int32_t line) {
        if (++steps_ > opt_.max_steps)
            return error(StatusCode::resource_exhausted, "template line " + std::to_string(line) + ": the template ran past " +
                                                             std::to_string(opt_.max_steps) + " steps (a loop that does not end?)");
        if ((steps_ & 1023) == 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() > opt_.max_seconds)
            return error(StatusCode::resource_exhausted, "template line " + std::to_string(line) + ": rendering took longer than " +
                                                             std::to_string(static_cast<int>(opt_.max_seconds)) + " s");
        return Status::ok_status();
    }
    Status too_long(int32_t line) const {
        return error(StatusCode::resource_exhausted, "template line " + std::to_string(line) + ": the output passed " +
                                                         std::to_string(opt_.max_output_bytes) + " bytes");
    }
    Status append(MarkedText& out, const std::string& text, int32_t line) {
        if (out.size() + text.size() > opt_.max_output_bytes) return too_long(line);
        out.append_markup(text);
        return Status::ok_status();
    }
    Status append(MarkedText& out, const Value& v, int32_t line) {
        if (v.is_string() && out.size() + v.as_string().size() > opt_.max_output_bytes) return too_long(line);
        out.append(v);
        if (out.size() > opt_.max_output_bytes) return too_long(line);
        return Status::ok_status();
    }

    void install_globals(Frame& root) {
        root["raise_exception"] = Value::callable("raise_exception", [](CallArgs& a) -> Result<Value> {
            const Value* m = a.get(0, "message");
            return error(StatusCode::invalid_argument, "the template raised: " + (m ? m->str() : std::string("(no message)")));
        });
        const auto clock = opt_.strftime_now;
        root["strftime_now"] = Value::callable("strftime_now", [clock](CallArgs& a) -> Result<Value> {
            const Value* f = a.get(0, "format");
            if (!f || !f->is_string()) return error(StatusCode::invalid_argument, "strftime_now needs a format string");
            if (clock) return Value(clock(f->as_string()));
            const std::time_t now = std::time(nullptr);
            std::tm tm{};
            localtime_r(&now, &tm);
            char buf[256];
            const size_t n = std::strftime(buf, sizeof buf, f->as_string().c_str(), &tm);
            return Value(std::string(buf, n));
        });
        root["namespace"] = Value::callable("namespace", [](CallArgs& a) -> Result<Value> {
            Dict d;
            if (!a.positional.empty() && a.positional[0].is_dict()) d = a.positional[0].as_dict();
            for (auto& [k, v] : a.keyword) d.set(k, v);
            return Value::ns(std::move(d));
        });
        root["dict"] = Value::callable("dict", [](CallArgs& a) -> Result<Value> {
            Dict d;
            for (auto& [k, v] : a.keyword) d.set(k, v);
            return Value(std::move(d));
        });
        root["range"] = Value::callable("range", [](CallArgs& a) -> Result<Value> {
            if (a.positional.empty() || a.positional.size() > 3) return error(StatusCode::invalid_argument, "range takes 1 to 3 numbers");
            int64_t start = 0, stop = 0, step = 1;
            if (a.positional.size() == 1) stop = a.positional[0].as_int();
            else start = a.positional[0].as_int(), stop = a.positional[1].as_int();
            if (a.positional.size() == 3) step = a.positional[2].as_int();
            if (step == 0) return error(StatusCode::invalid_argument, "range's step is 0");
            const __int128 span = step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
            const __int128 n = span <= 0 ? 0 : (span + (step > 0 ? step : -step) - 1) / (step > 0 ? step : -step);
            if (n > static_cast<__int128>(kMaxListItems))
                return error(StatusCode::resource_exhausted, "range of more than " + std::to_string(kMaxListItems) + " numbers");
            List l;
            for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) l.emplace_back(static_cast<int64_t>(start + static_cast<__int128>(k) * step));
            return Value(std::move(l));
        });
    }

    Value lookup(const std::string& name) const {
        for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
            if (auto f = it->find(name); f != it->end()) return f->second;
        return Value::undefined(name);
    }

    Status body(const Body& nodes, MarkedText& out, Flow& flow) {
        for (const NodePtr& n : nodes) {
            WB_RETURN_IF_ERROR(node(*n, out, flow));
            if (flow != Flow::normal) return Status::ok_status();
        }
        return Status::ok_status();
    }

    Status node(const Node& n, MarkedText& out, Flow& flow) {
        WB_RETURN_IF_ERROR(tick(n.line));
        switch (n.kind) {
            case Node::Kind::text: return append(out, n.text, n.line);
            case Node::Kind::output: {
                WB_ASSIGN_OR_RETURN(const Value v, eval(*n.expr));
                return append(out, v, n.line);
            }
            case Node::Kind::if_:
                for (const auto& [cond, b] : n.branches) {
                    bool take = true;
                    if (cond) {
                        WB_ASSIGN_OR_RETURN(const Value c, eval(*cond));
                        take = c.truthy();
                    }
                    if (take) return body(b, out, flow);
                }
                return Status::ok_status();
            case Node::Kind::for_: return for_loop(n, out, flow);
            case Node::Kind::set: {
                WB_ASSIGN_OR_RETURN(const Value v, eval(*n.expr));
                if (!n.text.empty()) {   // ns.attr = value
                    const Value target = lookup(n.targets[0]);
                    if (!target.is_namespace()) return fail(n.line, "'" + n.targets[0] + "' is not a namespace(); only a namespace's attributes can be set");
                    target.namespace_attributes().set(n.text, v);
                    return Status::ok_status();
                }
                return bind(n.targets, v, n.line);
            }
            case Node::Kind::set_block: {
                MarkedText captured;
                Flow inner = Flow::normal;
                WB_RETURN_IF_ERROR(body(n.body, captured, inner));
                Value v = captured.take();
                if (n.filter) {
                    WB_ASSIGN_OR_RETURN(v, filter_chain(*n.filter, v));
                }
                frames_.back()[n.targets[0]] = std::move(v);
                return Status::ok_status();
            }
            case Node::Kind::macro: {
                const Node* def = &n;
                frames_.back()[n.text] = Value::callable(n.text, [this, def](CallArgs& a) { return call_macro(*def, a, nullptr); });
                return Status::ok_status();
            }
            case Node::Kind::call_block: {
                // caller() renders the block's body where the call was written.
                const std::vector<Frame> scope = frames_;
                const Node* def = &n;
                const Value caller = Value::callable("caller", [this, def, scope](CallArgs&) -> Result<Value> {
                    if (depth_ >= opt_.max_call_depth)
                        return error(StatusCode::resource_exhausted, "template line " + std::to_string(def->line) +
                                                                         ": calls nested deeper than " + std::to_string(opt_.max_call_depth));
                    std::vector<Frame> saved = std::move(frames_);
                    frames_ = scope;
                    MarkedText text;
                    Flow inner = Flow::normal;
                    ++depth_;
                    const Status s = body(def->body, text, inner);
                    --depth_;
                    frames_ = std::move(saved);
                    WB_RETURN_IF_ERROR(s);
                    return text.take();
                });
                WB_ASSIGN_OR_RETURN(const Value callee, eval(*n.expr->a));
                WB_ASSIGN_OR_RETURN(CallArgs args, call_args(*n.expr));
                args.keyword.emplace_back("caller", caller);
                if (!callee.is_callable()) return fail(n.line, "a call block calls a macro");
                auto r = callee.as_callable().call(args);
                if (!r.ok()) return at_line(n.line, r.status());
                return append(out, *r, n.line);
            }
            case Node::Kind::filter_block: {
                MarkedText captured;
                Flow inner = Flow::normal;
                WB_RETURN_IF_ERROR(body(n.body, captured, inner));
                WB_ASSIGN_OR_RETURN(const Value v, filter_chain(*n.filter, captured.take()));
                return append(out, v, n.line);
            }
            case Node::Kind::break_: flow = Flow::break_loop; return Status::ok_status();
            case Node::Kind::continue_: flow = Flow::continue_loop; return Status::ok_status();
            case Node::Kind::scope: return body(n.body, out, flow);
        }
        return Status::ok_status();
    }

    // Names bound to a value; several names unpack a list of as many.
    Status bind(const std::vector<std::string>& names, const Value& v, int32_t line) {
        if (names.size() == 1) {
            frames_.back()[names[0]] = v;
            return Status::ok_status();
        }
        if (!v.is_list() || v.as_list().size() != names.size())
            return fail(line, "cannot unpack a " + std::string(v.type_name()) + " into " + std::to_string(names.size()) + " names");
        for (size_t i = 0; i < names.size(); ++i) frames_.back()[names[i]] = v.as_list()[i];
        return Status::ok_status();
    }

    Result<List> iterable(const Value& v, int32_t line) {
        auto items = iterate(v, "a for loop");
        if (!items.ok()) return at_line(line, items.status());
        return items;
    }

    Status for_loop(const Node& n, MarkedText& out, Flow& outer_flow) {
        WB_ASSIGN_OR_RETURN(const Value source, eval(*n.expr));
        WB_ASSIGN_OR_RETURN(List items, iterable(source, n.line));
        if (n.filter) {   // the loop filter sees the targets, not `loop`; loop counts what passes
            List kept;
            for (const Value& item : items) {
                WB_RETURN_IF_ERROR(tick(n.line));
                frames_.emplace_back();
                Status s = bind(n.targets, item, n.line);
                Result<Value> pass = s.ok() ? eval(*n.filter) : Result<Value>(s);
                frames_.pop_back();
                if (!pass.ok()) return pass.status();
                if (pass->truthy()) kept.push_back(item);
            }
            items = std::move(kept);
        }
        if (items.empty()) {
            frames_.emplace_back();
            const Status s = body(n.else_body, out, outer_flow);
            frames_.pop_back();
            return s;
        }
        const auto count = static_cast<int64_t>(items.size());
        for (int64_t i = 0; i < count; ++i) {
            WB_RETURN_IF_ERROR(tick(n.line));
            Dict loop;
            loop.set("index", Value(i + 1));
            loop.set("index0", Value(i));
            loop.set("revindex", Value(count - i));
            loop.set("revindex0", Value(count - i - 1));
            loop.set("first", Value(i == 0));
            loop.set("last", Value(i == count - 1));
            loop.set("length", Value(count));
            loop.set("depth", Value(int64_t{1}));
            loop.set("depth0", Value(int64_t{0}));
            loop.set("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("previtem"));
            loop.set("nextitem", i + 1 < count ? items[static_cast<size_t>(i + 1)] : Value::undefined("nextitem"));
            frames_.emplace_back();
            frames_.back()["loop"] = Value(std::move(loop));
            Status s = bind(n.targets, items[static_cast<size_t>(i)], n.line);
            Flow flow = Flow::normal;
            if (s.ok()) s = body(n.body, out, flow);
            frames_.pop_back();
            WB_RETURN_IF_ERROR(s);
            if (flow == Flow::break_loop) break;
        }
        return Status::ok_status();
    }

    Result<Value> call_macro(const Node& def, CallArgs& a, const Value* caller) {
        if (depth_ >= opt_.max_call_depth)
            return error(StatusCode::resource_exhausted, "template line " + std::to_string(def.line) + ": macro calls nested deeper than " +
                                                             std::to_string(opt_.max_call_depth) + " (a recursion that does not end?)");
        if (a.positional.size() > def.params.size())
            return fail(def.line, "macro " + def.text + "() takes " + std::to_string(def.params.size()) + " arguments, given " +
                                      std::to_string(a.positional.size()));
        // The macro sees the template's top level, its arguments and what it sets.
        std::vector<Frame> saved(std::make_move_iterator(frames_.begin() + 1), std::make_move_iterator(frames_.end()));
        frames_.resize(1);
        frames_.emplace_back();
        ++depth_;
        auto restore = [&] {
            --depth_;
            frames_.resize(1);
            for (Frame& f : saved) frames_.push_back(std::move(f));
        };
        for (size_t i = 0; i < def.params.size(); ++i) {
            const auto& [name, fallback] = def.params[i];
            const Value* given = a.get(i, name);
            if (given) {
                frames_.back()[name] = *given;
            } else if (fallback) {
                auto v = eval(*fallback);
                if (!v.ok()) {
                    restore();
                    return v.status();
                }
                frames_.back()[name] = *v;
            } else {
                frames_.back()[name] = Value::undefined(name);
            }
        }
        for (const auto& [k, v] : a.keyword)
            if (k == "caller") frames_.back()["caller"] = v;
        if (caller) frames_.back()["caller"] = *caller;
        MarkedText text;
        Flow flow = Flow::normal;
        const Status s = body(def.body, text, flow);
        restore();
        WB_RETURN_IF_ERROR(s);
        return text.take();
    }

    Result<CallArgs> call_args(const Expr& e) {
        CallArgs a;
        for (const ExprPtr& p : e.items) {
            WB_ASSIGN_OR_RETURN(Value v, eval(*p));
            a.positional.push_back(std::move(v));
        }
        for (const auto& [k, p] : e.kwargs) {
            WB_ASSIGN_OR_RETURN(Value v, eval(*p));
            a.keyword.emplace_back(k, std::move(v));
        }
        return a;
    }

    // A filter chain over a placeholder (filter blocks, `set x | f`): the placeholder is `input`.
    Result<Value> filter_chain(const Expr& e, const Value& input) {
        if (e.kind != Expr::Kind::filter) return input;
        WB_ASSIGN_OR_RETURN(const Value inner, filter_chain(*e.a, input));
        WB_ASSIGN_OR_RETURN(CallArgs args, call_args(e));
        auto r = apply_filter(e.name, inner, args, builtins_);
        if (!r.ok()) return at_line(e.line, r.status());
        return r;
    }

    Result<Value> attribute(const Value& target, const std::string& name, int32_t line) {
        if (target.is_undefined()) return fail(line, "'" + target.undefined_name() + "' is undefined (looking up ." + name + ")");
        if (target.is_namespace()) {
            const Value* f = target.namespace_attributes().find(name);
            return f ? *f : Value::undefined(name);
        }
        // Python's getattr first: a dict's methods shadow keys of the same name.
        const Value method = bound_method(target, name);
        if (!method.is_undefined()) return method;
        if (target.is_dict()) {
            const Value* f = target.as_dict().find(name);
            return f ? *f : Value::undefined(name);
        }
        if (target.is_list() && (name == "append" || name == "pop" || name == "extend" || name == "insert" || name == "remove"))
            return fail(line, "a template cannot change a list (." + name + "): Hugging Face renders in jinja2's immutable sandbox");
        return Value::undefined(name);
    }

    Result<Value> subscript(const Value& target, const Value& key, int32_t line) {
        if (target.is_undefined()) return fail(line, "'" + target.undefined_name() + "' is undefined (indexing it)");
        if (target.is_dict()) {
            if (const Value* f = target.as_dict().find(key.str())) return *f;
            if (key.is_string()) return attribute(target, key.as_string(), line);
            return Value::undefined(key.str());
        }
        if (target.is_namespace()) {
            const Value* f = target.namespace_attributes().find(key.str());
            return f ? *f : Value::undefined(key.str());
        }
        if ((target.is_list() || target.is_string()) && (key.type() == Value::Type::integer || key.type() == Value::Type::boolean)) {
            if (target.is_list()) {
                const auto n = static_cast<int64_t>(target.as_list().size());
                int64_t i = key.as_int();
                if (i < 0) i += n;
                if (i < 0 || i >= n) return Value::undefined("[" + key.str() + "]");
                return target.as_list()[static_cast<size_t>(i)];
            }
            const std::vector<size_t> at = code_point_offsets(target.as_string());
            const auto n = static_cast<int64_t>(at.size()) - 1;
            int64_t i = key.as_int();
            if (i < 0) i += n;
            if (i < 0 || i >= n) return Value::undefined("[" + key.str() + "]");
            return substring(target, at[static_cast<size_t>(i)], at[static_cast<size_t>(i) + 1]);
        }
        if (key.is_string()) return attribute(target, key.as_string(), line);
        return Value::undefined("[" + key.str() + "]");
    }

    // Python's slice rules (negative and out-of-range bounds, any step but 0).
    Result<Value> slice(const Value& target, const Expr& e) {
        int64_t bounds[3] = {0, 0, 1};
        bool given[3] = {false, false, false};
        for (int k = 0; k < 3; ++k)
            if (e.items[static_cast<size_t>(k)]) {
                WB_ASSIGN_OR_RETURN(const Value v, eval(*e.items[static_cast<size_t>(k)]));
                if (v.is_none()) continue;
                if (!v.is_number()) return fail(e.line, "a slice's bounds are integers");
                bounds[k] = v.as_int();
                given[k] = true;
            }
        const int64_t step = given[2] ? bounds[2] : 1;
        if (step == 0) return fail(e.line, "a slice's step is 0");
        auto indices = [&](int64_t n) {
            auto clamp = [&](int64_t v, bool is_given, int64_t fallback) {
                if (!is_given) return fallback;
                if (v < 0) v += n;
                if (step > 0) return std::clamp<int64_t>(v, 0, n);
                return std::clamp<int64_t>(v, -1, n - 1);
            };
            const int64_t start = clamp(bounds[0], given[0], step > 0 ? 0 : n - 1);
            const int64_t stop = clamp(bounds[1], given[1], step > 0 ? n : -1);
            std::vector<int64_t> out;
            for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
                out.push_back(i);
                if (step > 0 ? stop - i <= step : i - stop <= -step) break;   // no overflow past the end
                i += step;
            }
            return out;
        };
        if (target.is_list()) {
            List out;
            for (int64_t i : indices(static_cast<int64_t>(target.as_list().size()))) out.push_back(target.as_list()[static_cast<size_t>(i)]);
            return Value(std::move(out));
        }
        if (target.is_string()) {
            const std::vector<size_t> at = code_point_offsets(target.as_string());
            const std::vector<int64_t> picked = indices(static_cast<int64_t>(at.size()) - 1);
            if (picked.empty()) return Value(std::string());
            if (step == 1) return substring(target, at[static_cast<size_t>(picked.front())], at[static_cast<size_t>(picked.back()) + 1]);
            std::string out;
            for (int64_t i : picked) out += target.as_string().substr(at[static_cast<size_t>(i)], at[static_cast<size_t>(i) + 1] - at[static_cast<size_t>(i)]);
            return target.marks().empty() ? Value(std::move(out)) : Value::marked_string(out, {{0, out.size()}});
        }
        if (target.is_undefined()) return fail(e.line, "'" + target.undefined_name() + "' is undefined (slicing it)");
        return fail(e.line, "a " + std::string(target.type_name()) + " cannot be sliced");
    }

    Result<Value> arithmetic(const std::string& op, const Value& x, const Value& y, int32_t line) {
        auto too_big = [&](size_t bytes) { return bytes > opt_.max_output_bytes; };
        auto size_error = [&] {
            return error(StatusCode::resource_exhausted, "template line " + std::to_string(line) + ": a value past the output limit (" +
                                                             std::to_string(opt_.max_output_bytes) + " bytes)");
        };
        auto joined = [&]() -> Result<Value> {
            MarkedText t;
            t.append(x);
            if (too_big(t.size())) return size_error();
            t.append(y);
            if (too_big(t.size())) return size_error();
            return t.take();
        };
        if (op == "~") return joined();
        for (const Value* v : {&x, &y})
            if (v->is_undefined()) return fail(line, "'" + v->undefined_name() + "' is undefined (in '" + op + "')");
        if (op == "+") {
            if (x.is_string() && y.is_string()) {
                if (too_big(x.as_string().size() + y.as_string().size())) return size_error();
                return joined();
            }
            if (x.is_list() && y.is_list()) {
                if (x.as_list().size() + y.as_list().size() > kMaxListItems) return size_error();
                List l = x.as_list();
                l.insert(l.end(), y.as_list().begin(), y.as_list().end());
                return Value(std::move(l));
            }
        }
        if (op == "*" && ((x.is_string() && y.type() == Value::Type::integer) || (y.is_string() && x.type() == Value::Type::integer))) {
            const std::string& s = x.is_string() ? x.as_string() : y.as_string();
            const int64_t n = x.is_string() ? y.as_int() : x.as_int();
            if (n <= 0 || s.empty()) return Value(std::string());
            if (static_cast<uint64_t>(n) > opt_.max_output_bytes / s.size()) return size_error();
            MarkedText out;
            for (int64_t i = 0; i < n; ++i) out.append(x.is_string() ? x : y);
            return out.take();
        }
        if (!x.is_number() || !y.is_number())
            return fail(line, std::string("'") + op + "' between a " + x.type_name() + " and a " + y.type_name());
        const bool floats = x.type() == Value::Type::floating || y.type() == Value::Type::floating;
        if (op == "/") {
            if (y.as_double() == 0) return fail(line, "division by zero");
            return Value(x.as_double() / y.as_double());
        }
        auto overflow = [&] { return fail(line, "integer overflow in '" + op + "' (Python's integers have no limit; ours are 64-bit)"); };
        if (op == "**") {
            if (!floats && y.as_int() >= 0) {
                int64_t r = 1, base = x.as_int();
                for (int64_t e = y.as_int(); e > 0; e >>= 1) {
                    if ((e & 1) && __builtin_mul_overflow(r, base, &r)) return overflow();
                    if (e > 1 && __builtin_mul_overflow(base, base, &base)) return overflow();
                }
                return Value(r);
            }
            return Value(std::pow(x.as_double(), y.as_double()));
        }
        if (floats) {
            const double a = x.as_double(), b = y.as_double();
            if (op == "+") return Value(a + b);
            if (op == "-") return Value(a - b);
            if (op == "*") return Value(a * b);
            if (b == 0) return fail(line, "division by zero");
            if (op == "//") return Value(std::floor(a / b));
            return Value(a - b * std::floor(a / b));   // %
        }
        const int64_t a = x.as_int(), b = y.as_int();
        int64_t r = 0;
        if (op == "+") return __builtin_add_overflow(a, b, &r) ? overflow() : Result<Value>(Value(r));
        if (op == "-") return __builtin_sub_overflow(a, b, &r) ? overflow() : Result<Value>(Value(r));
        if (op == "*") return __builtin_mul_overflow(a, b, &r) ? overflow() : Result<Value>(Value(r));
        if (b == 0) return fail(line, "division by zero");
        if (b == -1) {   // INT64_MIN / -1 traps
            if (op == "%") return Value(int64_t{0});
            return __builtin_sub_overflow(int64_t{0}, a, &r) ? overflow() : Result<Value>(Value(r));
        }
        int64_t q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;   // floor division
        if (op == "//") return Value(q);
        return Value(a - b * q);
    }

    Result<bool> compare_one(const std::string& op, const Value& x, const Value& y, int32_t line) {
        if (op == "==") return x.equals(y);
        if (op == "!=") return !x.equals(y);
        if (op == "in" || op == "not in") {
            bool found = false;
            if (y.is_string()) {
                if (!x.is_string()) return fail(line, "'in <string>' needs a string on the left, not a " + std::string(x.type_name()));
                found = y.as_string().find(x.as_string()) != std::string::npos;
            } else if (y.is_dict()) {
                found = x.is_string() && y.as_dict().find(x.as_string()) != nullptr;
            } else if (y.is_list()) {
                steps_ += static_cast<int64_t>(y.as_list().size() / 256);   // a long search counts against the step limit
                WB_RETURN_IF_ERROR(tick(line));
                for (const Value& e : y.as_list()) found = found || e.equals(x);
            } else if (!y.is_undefined()) {
                return fail(line, "'in' needs a string, list or dict on the right, not a " + std::string(y.type_name()));
            }
            return op == "in" ? found : !found;
        }
        CallArgs a;
        a.positional.push_back(y);
        auto r = apply_test(op, x, a, builtins_);
        if (!r.ok()) return at_line(line, r.status());
        return r;
    }

    Result<Value> eval(const Expr& e) {
        switch (e.kind) {
            case Expr::Kind::literal: return e.value;
            case Expr::Kind::name: return lookup(e.name);
            case Expr::Kind::list:
            case Expr::Kind::tuple: {
                List l;
                for (const ExprPtr& p : e.items) {
                    WB_ASSIGN_OR_RETURN(Value v, eval(*p));
                    l.push_back(std::move(v));
                }
                Value v = e.kind == Expr::Kind::tuple ? Value::tuple(std::move(l)) : Value(std::move(l));
                if (v.depth() > kMaxValueDepth) return fail(e.line, "lists nested deeper than " + std::to_string(kMaxValueDepth));
                return v;
            }
            case Expr::Kind::dict: {
                Dict d;
                for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
                    WB_ASSIGN_OR_RETURN(const Value k, eval(*e.items[i]));
                    WB_ASSIGN_OR_RETURN(Value v, eval(*e.items[i + 1]));
                    d.set(k.str(), std::move(v));
                }
                Value v(std::move(d));
                if (v.depth() > kMaxValueDepth) return fail(e.line, "dicts nested deeper than " + std::to_string(kMaxValueDepth));
                return v;
            }
            case Expr::Kind::attribute: {
                WB_ASSIGN_OR_RETURN(const Value t, eval(*e.a));
                return attribute(t, e.name, e.line);
            }
            case Expr::Kind::subscript: {
                WB_ASSIGN_OR_RETURN(const Value t, eval(*e.a));
                WB_ASSIGN_OR_RETURN(const Value k, eval(*e.b));
                return subscript(t, k, e.line);
            }
            case Expr::Kind::slice: {
                WB_ASSIGN_OR_RETURN(const Value t, eval(*e.a));
                return slice(t, e);
            }
            case Expr::Kind::call: {
                WB_RETURN_IF_ERROR(tick(e.line));
                WB_ASSIGN_OR_RETURN(const Value callee, eval(*e.a));
                if (callee.is_undefined()) return fail(e.line, "'" + callee.undefined_name() + "' is undefined (called as a function)");
                if (!callee.is_callable()) return fail(e.line, "a " + std::string(callee.type_name()) + " cannot be called");
                WB_ASSIGN_OR_RETURN(CallArgs args, call_args(e));
                auto r = callee.as_callable().call(args);
                if (!r.ok()) return at_line(e.line, r.status());
                return r;
            }
            case Expr::Kind::filter: {
                WB_ASSIGN_OR_RETURN(const Value t, eval(*e.a));
                WB_ASSIGN_OR_RETURN(CallArgs args, call_args(e));
                auto r = apply_filter(e.name, t, args, builtins_);
                if (!r.ok()) return at_line(e.line, r.status());
                return r;
            }
            case Expr::Kind::test: {
                WB_ASSIGN_OR_RETURN(const Value t, eval(*e.a));
                WB_ASSIGN_OR_RETURN(CallArgs args, call_args(e));
                auto r = apply_test(e.name, t, args, builtins_);
                if (!r.ok()) return at_line(e.line, r.status());
                return Value(*r != e.negated);
            }
            case Expr::Kind::unary: {
                WB_ASSIGN_OR_RETURN(const Value v, eval(*e.a));
                if (e.name == "not") return Value(!v.truthy());
                if (!v.is_number()) return fail(e.line, "unary '" + e.name + "' on a " + std::string(v.type_name()));
                if (e.name == "+") return v.type() == Value::Type::floating ? v : Value(v.as_int());
                return v.type() == Value::Type::floating ? Value(-v.as_double()) : Value(-v.as_int());
            }
            case Expr::Kind::binary: {
                WB_ASSIGN_OR_RETURN(const Value x, eval(*e.a));
                WB_ASSIGN_OR_RETURN(const Value y, eval(*e.b));
                return arithmetic(e.name, x, y, e.line);
            }
            case Expr::Kind::compare: {
                WB_ASSIGN_OR_RETURN(Value left, eval(*e.a));
                for (size_t i = 0; i < e.ops.size(); ++i) {
                    WB_ASSIGN_OR_RETURN(Value right, eval(*e.items[i]));
                    WB_ASSIGN_OR_RETURN(const bool holds, compare_one(e.ops[i], left, right, e.line));
                    if (!holds) return Value(false);
                    left = std::move(right);
                }
                return Value(true);
            }
            case Expr::Kind::and_: {
                WB_ASSIGN_OR_RETURN(const Value x, eval(*e.a));
                if (!x.truthy()) return x;
                return eval(*e.b);
            }
            case Expr::Kind::or_: {
                WB_ASSIGN_OR_RETURN(const Value x, eval(*e.a));
                if (x.truthy()) return x;
                return eval(*e.b);
            }
            case Expr::Kind::conditional: {
                WB_ASSIGN_OR_RETURN(const Value c, eval(*e.a));
                if (c.truthy()) return eval(*e.b);
                if (e.c) return eval(*e.c);
                return Value::undefined("(conditional without else)");
            }
        }
        return Value();
    }
};

}  // namespace

Result<RenderedText> render_marked(const Template& parsed, const Json& variables, const RenderOptions& options) {
    return Renderer(options).run(parsed, variables);
}

Result<std::string> render(const Template& parsed, const Json& variables, const RenderOptions& options) {
    WB_ASSIGN_OR_RETURN(RenderedText r, render_marked(parsed, variables, options));
    return std::move(r.text);
}

Result<std::string> render(std::string_view source, const Json& variables, const RenderOptions& options) {
    WB_ASSIGN_OR_RETURN(const Template t, parse_template(source));
    return render(t, variables, options);
}

}  // namespace workbench::jinja
