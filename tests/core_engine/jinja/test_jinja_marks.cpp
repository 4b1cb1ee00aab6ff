// Content marks: the bytes of a render that came from the conversation (messages, tools) are
// reported as such through concatenation, captured blocks, macros, slices and the substring
// methods, and the template's own markup never is. Over the real template corpus, every message's
// text lands marked and no turn marker the template writes is marked.
#include <QFile>
#include <QTest>

#include "jinja/jinja.h"
#include "jinja/jinja_parser.h"
#include "workbench/json.h"

using namespace workbench;

namespace {

// The render with its marked bytes in [brackets] (the tests' texts hold no brackets).
std::string bracketed(const std::string& source, const Json& variables) {
    jinja::RenderOptions o;
    o.marked_variables = {"messages", "tools"};
    auto t = jinja::parse_template(source);
    if (!t.ok()) return "parse error: " + t.status().message();
    auto r = jinja::render_marked(*t, variables, o);
    if (!r.ok()) return "error: " + r.status().message();
    std::string out;
    size_t at = 0;
    for (const jinja::Mark& m : r->marked) {
        out += r->text.substr(at, m.begin - at) + "[" + r->text.substr(m.begin, m.end - m.begin) + "]";
        at = m.end;
    }
    return out + r->text.substr(at);
}

bool covered(const jinja::Marks& marks, size_t begin, size_t end) {
    for (const jinja::Mark& m : marks)
        if (m.begin <= begin && end <= m.end) return true;
    return false;
}

void collect_strings(const Json& j, std::vector<std::string>& out) {
    if (j.is_string()) out.push_back(j.get<std::string>());
    else if (j.is_array() || j.is_object())
        for (const Json& e : j) collect_strings(e, out);
}

}  // namespace

class TestJinjaMarks : public QObject {
    Q_OBJECT
private slots:
    void marks_follow_the_conversation_text() {
        const Json v = {{"messages", Json::array({{{"role", "user"}, {"content", "  hi there  "}},
                                                  {{"role", "assistant"}, {"content", "<think>plan</think>\n\nanswer"}}})},
                        {"tools", Json::array({{{"name", "f"}}})},
                        {"bos_token", "<s>"}};
        auto check = [&](const char* source, const char* expected) {
            QCOMPARE(QString::fromStdString(bracketed(source, v)), QString::fromUtf8(expected));
        };
        check("{{ bos_token }}{{ '<u>' + messages[0].content + '</u>' }}", "<s><u>[  hi there  ]</u>");
        check("{{ '<u>' ~ messages[0]['role'] ~ '\n' }}", "<u>[user]\n");
        check("{{ messages[0].content | trim }}|{{ messages[0].content.strip() }}|{{ messages[0].content.lstrip() }}",
              "[hi there]|[hi there]|[hi there  ]");
        check("{{ messages[1].content.split('</think>')[-1].lstrip('\\n') }}", "[answer]");
        check("{{ messages[1].content.split('</think>')[0].split('<think>')[-1] }}", "[plan]");
        check("{{ messages[0].content[2:4] }}-{{ messages[0].content[2] }}", "[hi]-[h]");
        check("{% set x %}<a>{{ messages[0].role }}</a>{% endset %}{{ x }}", "<a>[user]</a>");
        check("{% macro m(t) %}<m>{{ t }}</m>{% endmacro %}{{ m(messages[0].role) }}", "<m>[user]</m>");
        check("{% set ns = namespace(s='') %}{% for m in messages %}{% set ns.s = ns.s + '<' + m.role + '>' %}{% endfor %}{{ ns.s }}",
              "<[user]><[assistant]>");
        check("{{ messages | map(attribute='role') | join('|') }}", "[user]|[assistant]");
        check("{{ '|'.join(['<a>', messages[0].role]) }}", "<a>|[user]");
        check("{{ messages[0].content | replace('hi', 'yo') }}", "[  yo there  ]");   // computed from it: marked whole
        check("{{ tools | tojson }}", "[[{\"name\": \"f\"}]]");
        check("{{ messages[0].content | length }}", "12");                                 // a number is not text
        check("{{ 'x' if messages[0].content else 'y' }}", "x");
        check("{% filter upper %}<b>{{ messages[0].role }}{% endfilter %}", "[<B>USER]");    // a filter over marked text: whole
        check("{{ bos_token | trim }}{{ '<t>' | upper }}", "<s><T>");
        // Keys of the conversation's dicts are its text too (a tool's parameter names, argument keys).
        check("{% for k, v in tools[0].items() %}<{{ k }}>{% endfor %}", "<[name]>");
        check("{% for k in messages[0] %}{{ k }};{% endfor %}", "[role];[content];");
        check("{{ (messages[0] | dictsort)[0][0] }}", "[content]");
        check("{{ {'k': 1} | tojson }}|{{ {'<x>': messages[0].role} | tojson }}", "{\"k\": 1}|[{\"<x>\": \"user\"}]");
        check("{% for c in messages[0].role %}<{{ c }}>{% endfor %}", "<[u]><[s]><[e]><[r]>");
        check("{{ messages[0].role | list | join('') }}", "[user]");
    }

    // The real templates: each message's text appears marked, and no turn marker written by the
    // template is marked unless the conversation itself carries it.
    void corpus_marks_content_and_only_content() {
        QFile f(QStringLiteral(WB_TEST_DATA_DIR "/chat_templates/corpus/golden.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const Json rows = *parse_json(f.readAll().toStdString());
        const char* const markers[] = {"<|im_start|>", "<|im_end|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
                                       "[INST]", "[/INST]", "<start_of_turn>", "<end_of_turn>", "<|user|>", "<|assistant|>",
                                       "<|end|>", "<|start|>", "<|message|>", "<|channel|>", "<tool_call>", "</tool_call>",
                                       "[TOOL_CALLS]", "<｜User｜>", "<｜Assistant｜>", "<think>", "</think>", "<|python_tag|>"};
        int checked = 0, contents = 0;
        for (const Json& r : rows) {
            if (r.contains("error")) continue;
            QFile t(QStringLiteral(WB_TEST_DATA_DIR "/chat_templates/corpus/") + QString::fromStdString(r["template"].get<std::string>()));
            QVERIFY(t.open(QIODevice::ReadOnly));
            auto parsed = jinja::parse_template(t.readAll().toStdString());
            QVERIFY(parsed.ok());
            jinja::RenderOptions o;
            o.marked_variables = {"messages", "tools"};
            o.strftime_now = [](const std::string&) { return std::string("02 Jan 2025"); };
            auto got = jinja::render_marked(*parsed, r["variables"], o);
            QVERIFY2(got.ok(), got.ok() ? "" : got.status().message().c_str());
            const std::string where = r["template"].get<std::string>() + ":" + r["conversation"].get<std::string>();
            std::vector<std::string> supplied;
            collect_strings(r["variables"]["messages"], supplied);
            collect_strings(r["variables"]["tools"], supplied);
            std::string all_supplied;
            for (const std::string& s : supplied) all_supplied += s + "\n";
            for (const char* marker : markers) {
                if (all_supplied.find(marker) != std::string::npos) continue;
                for (size_t at = got->text.find(marker); at != std::string::npos; at = got->text.find(marker, at + 1))
                    for (const jinja::Mark& m : got->marked)
                        QVERIFY2(at + std::strlen(marker) <= m.begin || at >= m.end, qPrintable(QString::fromStdString(where + ": the template's " + marker + " marked")));
            }
            for (const Json& m : r["variables"]["messages"]) {
                if (!m.contains("content") || !m["content"].is_string()) continue;
                const std::string c = m["content"].get<std::string>();
                if (c.size() < 4 || got->text.find(c) == std::string::npos) continue;
                bool found = false;
                for (size_t at = got->text.find(c); at != std::string::npos && !found; at = got->text.find(c, at + 1))
                    found = covered(got->marked, at, at + c.size());
                QVERIFY2(found, qPrintable(QString::fromStdString(where + ": '" + c + "' is not marked")));
                ++contents;
            }
            ++checked;
        }
        QVERIFY(checked >= 100);
        QVERIFY(contents >= 150);
    }
};

QTEST_APPLESS_MAIN(TestJinjaMarks)
#include "test_jinja_marks.moc"
