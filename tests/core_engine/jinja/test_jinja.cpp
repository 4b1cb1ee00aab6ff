// The Jinja interpreter against jinja2 configured as Hugging Face configures it: every case of
// tests/data/jinja/cases.json (written by tests/reference/make_jinja_golden.py) renders byte for
// byte as jinja2 did, or fails where jinja2 failed, naming a line. Hostile templates (a loop that
// does not end, runaway recursion, a huge output, deep nesting) end with resource_exhausted or a
// parse error within their limits.
#include <QFile>
#include <QTest>

#include "jinja/jinja.h"
#include "workbench/json.h"

using namespace workbench;

namespace {

jinja::RenderOptions pinned() {
    jinja::RenderOptions o;
    // The golden's clock: 2025-01-02 03:04:05.
    o.strftime_now = [](const std::string& format) {
        std::tm tm{};
        tm.tm_year = 125, tm.tm_mon = 0, tm.tm_mday = 2, tm.tm_hour = 3, tm.tm_min = 4, tm.tm_sec = 5, tm.tm_wday = 4, tm.tm_yday = 1;
        char buf[128];
        return std::string(buf, std::strftime(buf, sizeof buf, format.c_str(), &tm));
    };
    return o;
}

}  // namespace

class TestJinja : public QObject {
    Q_OBJECT
private slots:
    void matches_jinja2_data() {
        QTest::addColumn<QString>("name");
        QFile f(QStringLiteral(WB_TEST_DATA_DIR "/jinja/cases.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        auto cases = parse_json(f.readAll().toStdString());
        QVERIFY(cases.ok() && cases->is_array() && cases->size() > 50);
        for (const Json& c : *cases) QTest::newRow(c["name"].get<std::string>().c_str()) << QString::fromStdString(c["name"].get<std::string>());
    }
    void matches_jinja2() {
        QFETCH(QString, name);
        QFile f(QStringLiteral(WB_TEST_DATA_DIR "/jinja/cases.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const Json cases = *parse_json(f.readAll().toStdString());
        for (const Json& c : cases) {
            if (c["name"].get<std::string>() != name.toStdString()) continue;
            const auto got = jinja::render(c["template"].get<std::string>(), c["variables"], pinned());
            if (c.contains("error")) {
                QVERIFY2(!got.ok(), qPrintable("jinja2 failed (" + QString::fromStdString(c["error"].get<std::string>()) + ") but we rendered: " +
                                               QString::fromStdString(got.ok() ? *got : "")));
                QVERIFY2(got.status().message().find("template line ") == 0, got.status().message().c_str());
            } else {
                QVERIFY2(got.ok(), got.ok() ? "" : got.status().message().c_str());
                QCOMPARE(QString::fromStdString(*got), QString::fromStdString(c["expected"].get<std::string>()));
            }
            return;
        }
        QFAIL("case not found");
    }

    // The real templates (tests/data/chat_templates/corpus/) over conversations with system
    // prompts, turns, tools, tool calls and results, thinking on and off, as jinja2 renders them.
    void renders_the_corpus_as_jinja2_data() {
        QTest::addColumn<QString>("template_file");
        QTest::addColumn<QString>("conversation");
        QFile f(QStringLiteral(WB_TEST_DATA_DIR "/chat_templates/corpus/golden.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto rows = parse_json(f.readAll().toStdString());
        QVERIFY(rows.ok() && rows->size() >= 100);
        for (const Json& r : *rows) {
            const std::string t = r["template"].get<std::string>(), c = r["conversation"].get<std::string>();
            QTest::newRow((t + ":" + c).c_str()) << QString::fromStdString(t) << QString::fromStdString(c);
        }
    }
    void renders_the_corpus_as_jinja2() {
        QFETCH(QString, template_file);
        QFETCH(QString, conversation);
        QFile f(QStringLiteral(WB_TEST_DATA_DIR "/chat_templates/corpus/golden.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const Json rows = *parse_json(f.readAll().toStdString());
        QFile t(QStringLiteral(WB_TEST_DATA_DIR "/chat_templates/corpus/") + template_file);
        QVERIFY(t.open(QIODevice::ReadOnly));
        const std::string source = t.readAll().toStdString();
        for (const Json& r : rows) {
            if (r["template"].get<std::string>() != template_file.toStdString() || r["conversation"].get<std::string>() != conversation.toStdString())
                continue;
            const auto got = jinja::render(source, r["variables"], pinned());
            if (r.contains("error")) {
                QVERIFY2(!got.ok(), qPrintable("jinja2 refused (" + QString::fromStdString(r["error"].get<std::string>()) + ") but we rendered"));
            } else {
                QVERIFY2(got.ok(), got.ok() ? "" : got.status().message().c_str());
                QCOMPARE(QString::fromStdString(*got), QString::fromStdString(r["expected"].get<std::string>()));
            }
            return;
        }
        QFAIL("row not found");
    }

    void hostile_templates_end_within_their_limits() {
        jinja::RenderOptions o;
        o.max_steps = 100000;
        o.max_output_bytes = 1 << 16;
        o.max_call_depth = 32;
        const struct {
            const char* source;
            StatusCode code;
            const char* named;
        } cases[] = {
            {"{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}", StatusCode::resource_exhausted, "steps"},
            {"{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", StatusCode::resource_exhausted, "nested deeper"},
            {"{% for i in range(100000) %}xxxxxxxxxxxxxxxx{% endfor %}", StatusCode::resource_exhausted, "output passed"},
            {"{{ 'x' * 100000000 }}", StatusCode::resource_exhausted, "output limit"},
        };
        for (const auto& c : cases) {
            const auto r = jinja::render(c.source, Json::object(), o);
            QVERIFY2(!r.ok() && r.status().code() == c.code, c.source);
            QVERIFY2(r.status().message().find(c.named) != std::string::npos, r.status().message().c_str());
        }
        // What a review found: each ends in an error, never a crash, a hang or a huge allocation.
        const char* refused[] = {
            "{% set ns = namespace() %}{% macro m() %}{% set ns.c = caller %}{{ caller() }}{% endmacro %}{% call m() %}{{ ns.c() }}{% endcall %}",
            "{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}",
            "{{ x.99999999999999999999 }}",
            "{{ (-9223372036854775807 - 1) // -1 }}",
            "{{ 9223372036854775807 + 1 }}",
            "{{ 3 ** 64 }}",
            "{{ range(-9223372036854775807, 9223372036854775807) | length }}",
            "{{ 'abcd' * 4611686018427387904 }}",
            "{{ 'a' | indent(100000000000) }}",
            "{{ [1] | tojson(indent=2000000000) }}",
            "{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
            "{% set l = range(1000000) %}{% for x in l if x in l %}{% endfor %}",
            "{{ '\\U00110000' }}",
            "{{ ' a b '.split(0) }}",   // found by fuzz_jinja
            "{{ 'ab'.split('') }}",
        };
        for (const char* source : refused) {
            const auto r2 = jinja::render(source, Json::object(), o);
            QVERIFY2(!r2.ok(), source);
        }
        // Odd inputs that must simply work: a huge slice step, -1 divisors, a dict literal before }}, bad UTF-8 kept as is.
        QCOMPARE(QString::fromStdString(*jinja::render("{{ 'abc'[1::9223372036854775807] }}", Json::object(), o)), QStringLiteral("b"));
        QCOMPARE(QString::fromStdString(*jinja::render("{{ -7 // -1 }}{{ -7 % -1 }}{{ {'a': 1}}}", Json::object(), o)), QStringLiteral("70{'a': 1}"));
        // Floats past int64 become its largest magnitudes, NaN 0 (found by fuzz_jinja: undefined behaviour before).
        QCOMPARE(QString::fromStdString(*jinja::render("{{ 4e36 | int > 0 }}{{ -4e36 | int < 0 }}{{ 'nan' | float | int }}{{ 'ab'[4e36:] }}",
                                                       Json::object(), o)),
                 QStringLiteral("TrueTrue0"));
        const std::string bad_utf8 = std::string("a\xC3<b\xF0\x9F");
        const auto kept = jinja::render("{{ x }}|{{ x | length }}|{{ x[::-1][::-1] }}", Json{{"x", bad_utf8}}, o);
        QVERIFY(kept.ok());
        QCOMPARE(*kept, bad_utf8 + "|6|" + bad_utf8);
        // Chains as long as a template can be spelled are refused while parsing (rendering and freeing the tree recurse).
        auto repeated = [](const std::string& head, const std::string& link, int n, const std::string& tail) {
            std::string t = head;
            for (int i = 0; i < n; ++i) t += link;
            return t + tail;
        };
        for (const std::string& chain : {repeated("{{ 1", "+1", 200000, " }}"), repeated("{{ x", "|string", 100000, " }}"),
                                          repeated("{{ ", "1 if 1 else ", 100000, "1 }}"), repeated("{{ x", ".a", 100000, " }}")}) {
            const auto r3 = jinja::render(chain, Json::object(), o);
            QVERIFY(!r3.ok());
            QVERIFY2(r3.status().message().find("nested deeper") != std::string::npos, r3.status().message().c_str());
        }
        // Nesting past the parser's depth is refused while parsing, not by the stack.
        std::string deep;
        for (int i = 0; i < 5000; ++i) deep += "{% if true %}";
        const auto r = jinja::render(deep, Json::object(), o);
        QVERIFY(!r.ok());
        QVERIFY2(r.status().message().find("nested deeper") != std::string::npos, r.status().message().c_str());
        std::string parens = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
        QVERIFY(!jinja::render(parens, Json::object(), o).ok());
    }

    void errors_name_the_line() {
        const auto r = jinja::render("line one\n{% if true %}\n{{ nope.deeper }}\n{% endif %}", Json::object());
        QVERIFY(!r.ok());
        QVERIFY2(r.status().message().rfind("template line 3: ", 0) == 0, r.status().message().c_str());
        const auto p = jinja::render("a\nb\n{{ 1 + }}", Json::object());
        QVERIFY2(!p.ok() && p.status().message().rfind("template line 3: ", 0) == 0, p.ok() ? "" : p.status().message().c_str());
    }
};

QTEST_APPLESS_MAIN(TestJinja)
#include "test_jinja.moc"
