// A recursive-descent parser after jinja2's own (parser.py): the same precedence ladder
// (conditional < or < and < not < comparisons < + - < ~ < * / // % < ** < unary), filters, tests
// and calls as postfix operators of a unary expression.
#include "jinja/jinja_parser.h"

#include <charconv>
#include <cstdlib>
#include <initializer_list>

#include "jinja/jinja_lexer.h"

namespace workbench::jinja {
namespace {

// Nesting deeper than this is refused (a crafted template must not exhaust the stack).
constexpr int kMaxDepth = 200;

class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

    Result<Template> run() {
        Template out;
        std::string stop;
        WB_ASSIGN_OR_RETURN(out.body, body({}, stop));
        if (!at(TokenKind::end)) return fail("unexpected '" + stop + "'");
        return out;
    }

private:
    std::vector<Token> t_;
    size_t i_ = 0;
    int depth_ = 0;

    const Token& cur() const { return t_[i_]; }
    const Token& peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
    bool at(TokenKind k) const { return cur().kind == k; }
    bool at_op(std::string_view op) const { return cur().kind == TokenKind::op && cur().text == op; }
    bool at_name(std::string_view n) const { return cur().kind == TokenKind::name && cur().text == n; }
    void next() {
        if (i_ + 1 < t_.size()) ++i_;
    }
    Status fail(const std::string& what) const {
        return error(StatusCode::invalid_argument, "template line " + std::to_string(cur().line) + ": " + what);
    }
    std::string describe() const {
        switch (cur().kind) {
            case TokenKind::end: return "the end of the template";
            case TokenKind::stmt_close: return "'%}'";
            case TokenKind::expr_close: return "'}}'";
            case TokenKind::text: return "text";
            case TokenKind::string: return "a string";
            default: return "'" + cur().text + "'";
        }
    }
    Status expect_op(std::string_view op) {
        if (!at_op(op)) return fail("expected '" + std::string(op) + "', found " + describe());
        next();
        return Status::ok_status();
    }
    Status expect(TokenKind k, const char* what) {
        if (!at(k)) return fail(std::string("expected ") + what + ", found " + describe());
        next();
        return Status::ok_status();
    }
    Result<std::string> expect_name() {
        if (!at(TokenKind::name)) return fail("expected a name, found " + describe());
        std::string n = cur().text;
        next();
        return n;
    }
    struct DepthGuard {
        int& d;
        explicit DepthGuard(int& depth) : d(depth) { ++d; }
        ~DepthGuard() { --d; }
    };
    // A chain (a + b + c…, x|f|g…, x.a.b…) nests one node per link: each link counts as a level,
    // so no expression is deeper than kMaxDepth however it is spelled (rendering and freeing
    // the tree recurse over it).
    struct ChainDepth {
        int& d;
        int added = 0;
        explicit ChainDepth(int& depth) : d(depth) {}
        ~ChainDepth() { d -= added; }
        bool grow() {
            ++added;
            return ++d <= kMaxDepth;
        }
    };
    Status too_deep() const { return fail("an expression nested deeper than " + std::to_string(kMaxDepth)); }

    ExprPtr make(Expr::Kind kind, int32_t line) {
        auto e = std::make_unique<Expr>();
        e->kind = kind;
        e->line = line;
        return e;
    }

    // Nodes until a statement tag whose keyword is in `stops` (consumed up to the keyword: the
    // caller reads the rest of that tag) or the end of the template.
    Result<Body> body(std::initializer_list<std::string_view> stops, std::string& stopped) {
        DepthGuard guard(depth_);
        if (depth_ > kMaxDepth) return fail("blocks nested deeper than " + std::to_string(kMaxDepth));
        Body out;
        stopped.clear();
        while (!at(TokenKind::end)) {
            if (at(TokenKind::text)) {
                auto n = std::make_unique<Node>();
                n->kind = Node::Kind::text;
                n->line = cur().line;
                n->text = cur().text;
                out.push_back(std::move(n));
                next();
            } else if (at(TokenKind::expr_open)) {
                auto n = std::make_unique<Node>();
                n->kind = Node::Kind::output;
                n->line = cur().line;
                next();
                WB_ASSIGN_OR_RETURN(n->expr, tuple_expr(true));
                WB_RETURN_IF_ERROR(expect(TokenKind::expr_close, "'}}'"));
                out.push_back(std::move(n));
            } else if (at(TokenKind::stmt_open)) {
                next();
                if (!at(TokenKind::name)) return fail("expected a statement name after '{%', found " + describe());
                for (std::string_view s : stops)
                    if (cur().text == s) {
                        stopped = cur().text;
                        next();
                        return out;
                    }
                WB_ASSIGN_OR_RETURN(NodePtr n, statement());
                out.push_back(std::move(n));
            } else {
                return fail("unexpected " + describe());
            }
        }
        if (stops.size() > 0) return fail("the template ends inside a block: expected '{% " + std::string(*stops.begin()) + " %}' or another end");
        return out;
    }

    Result<NodePtr> statement() {
        auto n = std::make_unique<Node>();
        n->line = cur().line;
        const std::string keyword = cur().text;
        next();
        std::string stop;
        if (keyword == "if") {
            n->kind = Node::Kind::if_;
            WB_ASSIGN_OR_RETURN(ExprPtr cond, expression(true));
            while (true) {
                WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
                WB_ASSIGN_OR_RETURN(Body b, body({"elif", "else", "endif"}, stop));
                n->branches.emplace_back(std::move(cond), std::move(b));
                if (stop == "elif") {
                    WB_ASSIGN_OR_RETURN(cond, expression(true));
                } else if (stop == "else") {
                    WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
                    WB_ASSIGN_OR_RETURN(Body e, body({"endif"}, stop));
                    n->branches.emplace_back(nullptr, std::move(e));
                    break;
                } else {
                    break;
                }
            }
        } else if (keyword == "for") {
            n->kind = Node::Kind::for_;
            WB_ASSIGN_OR_RETURN(n->targets, targets());
            if (!at_name("in")) return fail("expected 'in' after the for loop's variables, found " + describe());
            next();
            WB_ASSIGN_OR_RETURN(n->expr, tuple_expr(false));
            if (at_name("if")) {
                next();
                WB_ASSIGN_OR_RETURN(n->filter, expression(true));
            }
            if (at_name("recursive")) return fail("recursive for loops are not supported");
            WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
            WB_ASSIGN_OR_RETURN(n->body, body({"else", "endfor"}, stop));
            if (stop == "else") {
                WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
                WB_ASSIGN_OR_RETURN(n->else_body, body({"endfor"}, stop));
            }
        } else if (keyword == "set") {
            WB_ASSIGN_OR_RETURN(std::string first, expect_name());
            n->targets.push_back(first);
            if (at_op(".")) {
                next();
                WB_ASSIGN_OR_RETURN(n->text, expect_name());
            } else {
                while (at_op(",")) {
                    next();
                    WB_ASSIGN_OR_RETURN(std::string more, expect_name());
                    n->targets.push_back(more);
                }
            }
            if (at_op("=")) {
                n->kind = Node::Kind::set;
                next();
                WB_ASSIGN_OR_RETURN(n->expr, tuple_expr(true));
            } else {
                if (n->targets.size() != 1 || !n->text.empty()) return fail("a block set names one variable");
                n->kind = Node::Kind::set_block;
                if (at_op("|")) {   // {% set x | filter %}: the body through a filter
                    WB_ASSIGN_OR_RETURN(n->filter, filters(make(Expr::Kind::literal, n->line)));
                }
                WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
                WB_ASSIGN_OR_RETURN(n->body, body({"endset"}, stop));
                WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
                return n;
            }
        } else if (keyword == "macro") {
            n->kind = Node::Kind::macro;
            WB_ASSIGN_OR_RETURN(n->text, expect_name());
            WB_ASSIGN_OR_RETURN(n->params, parameters());
            WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
            WB_ASSIGN_OR_RETURN(n->body, body({"endmacro"}, stop));
            if (at(TokenKind::name)) next();   // {% endmacro name %}
        } else if (keyword == "call") {
            n->kind = Node::Kind::call_block;
            if (at_op("(")) {
            WB_ASSIGN_OR_RETURN(n->params, parameters());
        }
            WB_ASSIGN_OR_RETURN(n->expr, expression(true));
            if (n->expr->kind != Expr::Kind::call) return fail("a call block calls a macro");
            WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
            WB_ASSIGN_OR_RETURN(n->body, body({"endcall"}, stop));
        } else if (keyword == "filter") {
            n->kind = Node::Kind::filter_block;
            WB_ASSIGN_OR_RETURN(n->filter, filter_chain_after_name());
            WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
            WB_ASSIGN_OR_RETURN(n->body, body({"endfilter"}, stop));
        } else if (keyword == "break" || keyword == "continue") {
            n->kind = keyword == "break" ? Node::Kind::break_ : Node::Kind::continue_;
        } else if (keyword == "generation") {
            n->kind = Node::Kind::scope;
            WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
            WB_ASSIGN_OR_RETURN(n->body, body({"endgeneration"}, stop));
        } else {
            return fail("unknown tag '" + keyword + "'");
        }
        WB_RETURN_IF_ERROR(expect(TokenKind::stmt_close, "'%}'"));
        return n;
    }

    Result<std::vector<std::string>> targets() {
        std::vector<std::string> out;
        const bool paren = at_op("(");
        if (paren) next();
        while (true) {
            WB_ASSIGN_OR_RETURN(std::string n, expect_name());
            out.push_back(n);
            if (!at_op(",")) break;
            next();
        }
        if (paren) WB_RETURN_IF_ERROR(expect_op(")"));
        return out;
    }

    Result<std::vector<std::pair<std::string, ExprPtr>>> parameters() {
        std::vector<std::pair<std::string, ExprPtr>> out;
        WB_RETURN_IF_ERROR(expect_op("("));
        while (!at_op(")")) {
            if (!out.empty()) WB_RETURN_IF_ERROR(expect_op(","));
            if (at_op(")")) break;
            WB_ASSIGN_OR_RETURN(std::string n, expect_name());
            ExprPtr def;
            if (at_op("=")) {
                next();
                WB_ASSIGN_OR_RETURN(def, expression(true));
            }
            out.emplace_back(std::move(n), std::move(def));
        }
        next();
        return out;
    }

    // {% filter a | b(x) %}: a chain applied to a placeholder literal the body's text replaces.
    Result<ExprPtr> filter_chain_after_name() {
        ExprPtr placeholder = make(Expr::Kind::literal, cur().line);
        WB_ASSIGN_OR_RETURN(ExprPtr first, one_filter(std::move(placeholder)));
        return filters(std::move(first));
    }

    // expression, or a tuple of them (a, b): `{{ }}`, set values, for iterables.
    Result<ExprPtr> tuple_expr(bool with_condexpr) {
        const int32_t line = cur().line;
        WB_ASSIGN_OR_RETURN(ExprPtr first, expression(with_condexpr));
        if (!at_op(",")) return first;
        auto t = make(Expr::Kind::tuple, line);
        t->items.push_back(std::move(first));
        while (at_op(",")) {
            next();
            if (at(TokenKind::stmt_close) || at(TokenKind::expr_close) || at_name("if")) break;
            WB_ASSIGN_OR_RETURN(ExprPtr e, expression(with_condexpr));
            t->items.push_back(std::move(e));
        }
        return t;
    }

    Result<ExprPtr> expression(bool with_condexpr) {
        DepthGuard guard(depth_);
        if (depth_ > kMaxDepth) return fail("an expression nested deeper than " + std::to_string(kMaxDepth));
        return with_condexpr ? conditional() : or_expr();
    }

    Result<ExprPtr> conditional() {
        DepthGuard guard(depth_);
        if (depth_ > kMaxDepth) return too_deep();
        ChainDepth chain(depth_);
        WB_ASSIGN_OR_RETURN(ExprPtr e, or_expr());
        while (at_name("if")) {
            if (!chain.grow()) return too_deep();
            const int32_t line = cur().line;
            next();
            auto c = make(Expr::Kind::conditional, line);
            WB_ASSIGN_OR_RETURN(c->a, or_expr());
            c->b = std::move(e);
            if (at_name("else")) {
                next();
                WB_ASSIGN_OR_RETURN(c->c, conditional());
            }
            e = std::move(c);
        }
        return e;
    }

    Result<ExprPtr> or_expr() {
        ChainDepth chain(depth_);
        WB_ASSIGN_OR_RETURN(ExprPtr e, and_expr());
        while (at_name("or")) {
            if (!chain.grow()) return too_deep();
            auto o = make(Expr::Kind::or_, cur().line);
            next();
            o->a = std::move(e);
            WB_ASSIGN_OR_RETURN(o->b, and_expr());
            e = std::move(o);
        }
        return e;
    }

    Result<ExprPtr> and_expr() {
        ChainDepth chain(depth_);
        WB_ASSIGN_OR_RETURN(ExprPtr e, not_expr());
        while (at_name("and")) {
            if (!chain.grow()) return too_deep();
            auto o = make(Expr::Kind::and_, cur().line);
            next();
            o->a = std::move(e);
            WB_ASSIGN_OR_RETURN(o->b, not_expr());
            e = std::move(o);
        }
        return e;
    }

    Result<ExprPtr> not_expr() {
        if (at_name("not")) {
            DepthGuard guard(depth_);
            if (depth_ > kMaxDepth) return fail("an expression nested deeper than " + std::to_string(kMaxDepth));
            auto n = make(Expr::Kind::unary, cur().line);
            n->name = "not";
            next();
            WB_ASSIGN_OR_RETURN(n->a, not_expr());
            return n;
        }
        return compare();
    }

    Result<ExprPtr> compare() {
        WB_ASSIGN_OR_RETURN(ExprPtr e, math1());
        ExprPtr cmp;
        ChainDepth chain(depth_);
        while (true) {
            if (!chain.grow()) return too_deep();
            std::string op;
            if (cur().kind == TokenKind::op && (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == ">" ||
                                                cur().text == "<=" || cur().text == ">=")) {
                op = cur().text;
                next();
            } else if (at_name("in")) {
                op = "in";
                next();
            } else if (at_name("not") && peek().kind == TokenKind::name && peek().text == "in") {
                op = "not in";
                next();
                next();
            } else {
                break;
            }
            if (!cmp) {
                cmp = make(Expr::Kind::compare, e->line);
                cmp->a = std::move(e);
            }
            cmp->ops.push_back(op);
            WB_ASSIGN_OR_RETURN(ExprPtr rhs, math1());
            cmp->items.push_back(std::move(rhs));
        }
        return cmp ? std::move(cmp) : std::move(e);
    }

    Result<ExprPtr> binary_chain(std::initializer_list<std::string_view> ops, Result<ExprPtr> (Parser::*operand)()) {
        ChainDepth chain(depth_);
        WB_ASSIGN_OR_RETURN(ExprPtr e, (this->*operand)());
        while (cur().kind == TokenKind::op) {
            bool match = false;
            for (std::string_view op : ops) match = match || cur().text == op;
            if (!match) break;
            if (!chain.grow()) return too_deep();
            auto b = make(Expr::Kind::binary, cur().line);
            b->name = cur().text;
            next();
            b->a = std::move(e);
            WB_ASSIGN_OR_RETURN(b->b, (this->*operand)());
            e = std::move(b);
        }
        return e;
    }
    Result<ExprPtr> math1() { return binary_chain({"+", "-"}, &Parser::concat); }
    Result<ExprPtr> concat() { return binary_chain({"~"}, &Parser::math2); }
    Result<ExprPtr> math2() { return binary_chain({"*", "/", "//", "%"}, &Parser::power); }
    Result<ExprPtr> power() { return binary_chain({"**"}, &Parser::unary_with_filters); }
    Result<ExprPtr> unary_with_filters() { return unary(true); }

    Result<ExprPtr> unary(bool with_filter) {
        DepthGuard guard(depth_);
        if (depth_ > kMaxDepth) return fail("an expression nested deeper than " + std::to_string(kMaxDepth));
        ExprPtr e;
        if (at_op("-") || at_op("+")) {
            e = make(Expr::Kind::unary, cur().line);
            e->name = cur().text;
            next();
            WB_ASSIGN_OR_RETURN(e->a, unary(false));
        } else {
            WB_ASSIGN_OR_RETURN(e, primary());
        }
        WB_ASSIGN_OR_RETURN(e, postfix(std::move(e)));
        if (with_filter) {
            WB_ASSIGN_OR_RETURN(e, filters(std::move(e)));
        }
        return e;
    }

    Result<ExprPtr> primary() {
        const int32_t line = cur().line;
        if (at(TokenKind::name)) {
            const std::string& n = cur().text;
            auto lit = make(Expr::Kind::literal, line);
            if (n == "true" || n == "True") lit->value = Value(true);
            else if (n == "false" || n == "False") lit->value = Value(false);
            else if (n == "none" || n == "None") lit->value = Value::none();
            else {
                auto name = make(Expr::Kind::name, line);
                name->name = n;
                next();
                return name;
            }
            next();
            return lit;
        }
        if (at(TokenKind::string)) {
            std::string s;
            while (at(TokenKind::string)) {   // adjacent literals concatenate
                s += cur().text;
                next();
            }
            auto lit = make(Expr::Kind::literal, line);
            lit->value = Value(std::move(s));
            return lit;
        }
        if (at(TokenKind::integer)) {
            auto lit = make(Expr::Kind::literal, line);
            int64_t v = 0;
            const std::string& d = cur().text;
            const auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
            if (ec != std::errc() || end != d.data() + d.size()) return fail("the integer " + d + " is out of range");
            lit->value = Value(v);
            next();
            return lit;
        }
        if (at(TokenKind::number)) {
            auto lit = make(Expr::Kind::literal, line);
            lit->value = Value(std::strtod(cur().text.c_str(), nullptr));
            next();
            return lit;
        }
        if (at_op("(")) {
            next();
            if (at_op(")")) {
                next();
                return make(Expr::Kind::tuple, line);
            }
            WB_ASSIGN_OR_RETURN(ExprPtr first, expression(true));
            if (at_op(")")) {
                next();
                return first;
            }
            auto t = make(Expr::Kind::tuple, line);
            t->items.push_back(std::move(first));
            while (at_op(",")) {
                next();
                if (at_op(")")) break;
                WB_ASSIGN_OR_RETURN(ExprPtr e, expression(true));
                t->items.push_back(std::move(e));
            }
            WB_RETURN_IF_ERROR(expect_op(")"));
            return t;
        }
        if (at_op("[")) {
            next();
            auto l = make(Expr::Kind::list, line);
            while (!at_op("]")) {
                if (!l->items.empty()) WB_RETURN_IF_ERROR(expect_op(","));
                if (at_op("]")) break;
                WB_ASSIGN_OR_RETURN(ExprPtr e, expression(true));
                l->items.push_back(std::move(e));
            }
            next();
            return l;
        }
        if (at_op("{")) {
            next();
            auto d = make(Expr::Kind::dict, line);
            while (!at_op("}")) {
                if (!d->items.empty()) WB_RETURN_IF_ERROR(expect_op(","));
                if (at_op("}")) break;
                WB_ASSIGN_OR_RETURN(ExprPtr k, expression(true));
                WB_RETURN_IF_ERROR(expect_op(":"));
                WB_ASSIGN_OR_RETURN(ExprPtr v, expression(true));
                d->items.push_back(std::move(k));
                d->items.push_back(std::move(v));
            }
            next();
            return d;
        }
        return fail("expected an expression, found " + describe());
    }

    Result<ExprPtr> postfix(ExprPtr e) {
        ChainDepth chain(depth_);
        while (true) {
            if ((at_op(".") || at_op("[") || at_op("(")) && !chain.grow()) return too_deep();
            if (at_op(".")) {
                const int32_t line = cur().line;
                next();
                if (at(TokenKind::integer)) {
                    auto s = make(Expr::Kind::subscript, line);
                    s->a = std::move(e);
                    s->b = make(Expr::Kind::literal, line);
                    int64_t index = 0;
                    const std::string& d = cur().text;
                    if (std::from_chars(d.data(), d.data() + d.size(), index).ec != std::errc()) return fail("the index ." + d + " is out of range");
                    s->b->value = Value(index);
                    next();
                    e = std::move(s);
                    continue;
                }
                auto a = make(Expr::Kind::attribute, line);
                a->a = std::move(e);
                WB_ASSIGN_OR_RETURN(a->name, expect_name());
                e = std::move(a);
            } else if (at_op("[")) {
                WB_ASSIGN_OR_RETURN(e, subscript(std::move(e)));
            } else if (at_op("(")) {
                WB_ASSIGN_OR_RETURN(e, call(std::move(e)));
            } else {
                return e;
            }
        }
    }

    Result<ExprPtr> subscript(ExprPtr target) {
        const int32_t line = cur().line;
        next();
        ExprPtr parts[3];
        int n_colons = 0;
        while (!at_op("]")) {
            if (at_op(":")) {
                if (++n_colons > 2) return fail("a slice has at most two ':'");
                next();
                continue;
            }
            if (parts[n_colons]) return fail("expected ':' or ']' in a subscript, found " + describe());
            WB_ASSIGN_OR_RETURN(parts[n_colons], expression(true));
        }
        next();
        if (n_colons == 0) {
            if (!parts[0]) return fail("an empty subscript []");
            auto s = make(Expr::Kind::subscript, line);
            s->a = std::move(target);
            s->b = std::move(parts[0]);
            return s;
        }
        auto s = make(Expr::Kind::slice, line);
        s->a = std::move(target);
        for (auto& p : parts) s->items.push_back(std::move(p));
        return s;
    }

    Status call_args(Expr& into) {
        WB_RETURN_IF_ERROR(expect_op("("));
        while (!at_op(")")) {
            if (!into.items.empty() || !into.kwargs.empty()) WB_RETURN_IF_ERROR(expect_op(","));
            if (at_op(")")) break;
            if (at(TokenKind::name) && peek().kind == TokenKind::op && peek().text == "=") {
                std::string key = cur().text;
                next();
                next();
                WB_ASSIGN_OR_RETURN(ExprPtr v, expression(true));
                into.kwargs.emplace_back(std::move(key), std::move(v));
            } else {
                if (!into.kwargs.empty()) return fail("a positional argument after a keyword argument");
                WB_ASSIGN_OR_RETURN(ExprPtr v, expression(true));
                into.items.push_back(std::move(v));
            }
        }
        next();
        return Status::ok_status();
    }

    Result<ExprPtr> call(ExprPtr target) {
        auto c = make(Expr::Kind::call, cur().line);
        c->a = std::move(target);
        WB_RETURN_IF_ERROR(call_args(*c));
        return c;
    }

    Result<ExprPtr> one_filter(ExprPtr target) {
        auto f = make(Expr::Kind::filter, cur().line);
        f->a = std::move(target);
        WB_ASSIGN_OR_RETURN(f->name, expect_name());
        while (at_op(".")) {   // dotted filter names
            next();
            WB_ASSIGN_OR_RETURN(std::string more, expect_name());
            f->name += "." + more;
        }
        if (at_op("(")) WB_RETURN_IF_ERROR(call_args(*f));
        return f;
    }

    // Postfix filters, tests and calls on a unary expression: a | f(x) is t(y) (z) …
    Result<ExprPtr> filters(ExprPtr e) {
        ChainDepth chain(depth_);
        while (true) {
            if ((at_op("|") || at_name("is") || at_op("(")) && !chain.grow()) return too_deep();
            if (at_op("|")) {
                next();
                WB_ASSIGN_OR_RETURN(e, one_filter(std::move(e)));
            } else if (at_name("is")) {
                auto t = make(Expr::Kind::test, cur().line);
                next();
                if (at_name("not")) {
                    t->negated = true;
                    next();
                }
                t->a = std::move(e);
                WB_ASSIGN_OR_RETURN(t->name, expect_name());
                while (at_op(".")) {
                    next();
                    WB_ASSIGN_OR_RETURN(std::string more, expect_name());
                    t->name += "." + more;
                }
                if (at_op("(")) {
                    WB_RETURN_IF_ERROR(call_args(*t));
                } else if ((at(TokenKind::name) || at(TokenKind::string) || at(TokenKind::integer) || at(TokenKind::number) || at_op("[") ||
                            at_op("{")) &&
                           !at_name("else") && !at_name("or") && !at_name("and") && !at_name("if") && !at_name("in") && !at_name("not")) {
                    if (at_name("is")) return fail("tests cannot be chained with 'is'");
                    WB_ASSIGN_OR_RETURN(ExprPtr arg, primary());
                    WB_ASSIGN_OR_RETURN(arg, postfix(std::move(arg)));
                    t->items.push_back(std::move(arg));
                }
                e = std::move(t);
            } else if (at_op("(")) {
                WB_ASSIGN_OR_RETURN(e, call(std::move(e)));
            } else {
                return e;
            }
        }
    }
};

}  // namespace

Result<Template> parse_template(std::string_view source) {
    WB_ASSIGN_OR_RETURN(std::vector<Token> tokens, tokenize(source));
    return Parser(std::move(tokens)).run();
}

}  // namespace workbench::jinja
