// Chat template tests: detection and native rendering against golden text that real Jinja
// rendered from the published templates (tests/reference/make_chat_template_golden.py), plus the
// fallback for unknown templates, default system prompt extraction and end-of-turn markers.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <algorithm>
#include <cctype>

#include <map>
#include <string>
#include <vector>

#include "tokenizer/chat_template.h"

using namespace workbench;

namespace {

const QString kTemplateDir = QStringLiteral(WB_TEST_DATA_DIR "/chat_templates/");

std::string read_text(const QString& path, bool* ok) {
    QFile file(path);
    *ok = file.open(QIODevice::ReadOnly);
    return *ok ? file.readAll().toStdString() : std::string();
}

std::string utf8(const QJsonValue& value) { return value.toString().toStdString(); }

std::vector<ChatMessage> parse_conversation(const QJsonArray& array) {
    std::vector<ChatMessage> messages;
    for (const QJsonValue& v : array) messages.push_back({utf8(v["role"]), utf8(v["content"])});
    return messages;
}

// Shows where two renderings part, since whole prompts are too long to eyeball.
QByteArray describe_mismatch(const std::string& got, const std::string& want) {
    size_t at = 0;
    while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
    const auto around = [&](const std::string& s) {
        return QByteArray::fromStdString(s.substr(at < 20 ? 0 : at - 20, 60)).toPercentEncoding(" <>|[]/");
    };
    return "differs at byte " + QByteArray::number(qulonglong(at)) + "\n   got: " + around(got) +
           "\n  want: " + around(want);
}

ChatTemplate detect_file(const QString& file_name, const std::string& bos = {}, const std::string& eos = {}) {
    bool ok = false;
    const std::string source = read_text(kTemplateDir + file_name, &ok);
    if (!ok) qWarning("cannot read %s", qPrintable(file_name));
    return ChatTemplate::detect(source, bos, eos);
}

}  // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT

private slots:
    void golden_data();
    void golden();
    void unknown_template_falls_back_to_chatml();
    void empty_template_is_chatml_without_warning();
    void missing_template_takes_the_architecture_family();
    void smollm2_default_system_prompt();
    void default_system_prompt_parsed_generically();
    void default_system_not_taken_from_expressions();
    void end_of_turn_markers();
    void mistral_folds_system_into_first_user_turn();
    void gemma_system_separator_read_from_template();
    void llama2_system_block_opens_whichever_turn_follows();
};

void TestChatTemplate::llama2_system_block_opens_whichever_turn_follows() {
    const ChatTemplate tmpl = detect_file("llama2.jinja", "<s>", "</s>");
    QCOMPARE(tmpl.family(), ChatTemplateFamily::llama2);
    std::vector<workbench::TextRange> content;
    const std::string got = tmpl.render({{"system", "Be kind."}, {"assistant", "Hello."}, {"user", "Hi"}}, true, &content);
    QCOMPARE(got, std::string(" <<SYS>>\nBe kind.\n<</SYS>>\n\nHello. </s><s>[INST] Hi [/INST]"));
    QCOMPARE(content.size(), size_t(3));
    QCOMPARE(got.substr(content[0].begin, content[0].end - content[0].begin), std::string("Be kind."));
}

void TestChatTemplate::golden_data() {
    QTest::addColumn<QJsonObject>("entry");
    bool ok = false;
    const std::string text = read_text(kTemplateDir + "golden.json", &ok);
    QVERIFY2(ok, "tests/data/chat_templates/golden.json missing: run tests/reference/make_chat_template_golden.py");
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(text));
    const QJsonObject conversations = doc["conversations"].toObject();
    for (const QJsonValue& t : doc["templates"].toArray()) {
        QJsonObject entry = t.toObject();
        entry["conversation_table"] = conversations;
        QTest::newRow(entry["file"].toString().toUtf8().constData()) << entry;
    }
}

void TestChatTemplate::golden() {
    QFETCH(QJsonObject, entry);
    const ChatTemplate tmpl = detect_file(entry["file"].toString(), utf8(entry["bos_token"]), utf8(entry["eos_token"]));
    QCOMPARE(QString(chat_template_family_name(tmpl.family())), entry["family"].toString());
    QVERIFY2(tmpl.warning().empty(), tmpl.warning().c_str());
    QCOMPARE(QString::fromStdString(tmpl.default_system_prompt()), entry["default_system"].toString());

    const QJsonObject conversations = entry["conversation_table"].toObject();
    const QJsonArray cases = entry["cases"].toArray();
    QVERIFY(!cases.isEmpty());
    for (const QJsonValue& c : cases) {
        const QString name = c["conversation"].toString();
        const bool add_generation_prompt = c["add_generation_prompt"].toBool();
        const std::vector<ChatMessage> messages = parse_conversation(conversations[name].toArray());
        std::vector<workbench::TextRange> content;
        const std::string got = tmpl.render(messages, add_generation_prompt, &content);
        const std::string want = utf8(c["expected"]);
        const QByteArray where = name.toUtf8() + (add_generation_prompt ? " (+gen)" : " (no gen)") + ": ";
        if (got != want) QFAIL((where + describe_mismatch(got, want)).constData());
        // The content ranges (what the tokenizer keeps as text) hold the messages' own text and
        // nothing of the template's: in order, inside the prompt, each a piece of a message (the
        // template may strip its ends), and one for every message that is not blank.
        size_t last_end = 0;
        for (const workbench::TextRange& r : content) {
            QVERIFY2(r.begin >= last_end && r.begin < r.end && r.end <= got.size(), where.constData());
            const std::string piece = got.substr(r.begin, r.end - r.begin);
            QVERIFY2(std::any_of(messages.begin(), messages.end(), [&](const ChatMessage& m) { return m.content.find(piece) != std::string::npos; }),
                     (where + "not a message's text: " + QByteArray::fromStdString(piece)).constData());
            last_end = r.end;
        }
        const auto blank = [](const std::string& t) { return std::all_of(t.begin(), t.end(), [](unsigned char ch) { return std::isspace(ch); }); };
        const auto n_text = std::count_if(messages.begin(), messages.end(), [&](const ChatMessage& m) { return !blank(m.content); });
        QVERIFY2(static_cast<std::ptrdiff_t>(content.size()) >= n_text, where.constData());
    }
}

void TestChatTemplate::unknown_template_falls_back_to_chatml() {
    const ChatTemplate tmpl = detect_file("unknown_alpaca.jinja", "<s>", "</s>");
    QCOMPARE(tmpl.family(), ChatTemplateFamily::chatml);
    QVERIFY(!tmpl.warning().empty());
    QCOMPARE(tmpl.default_system_prompt(), std::string());
    QCOMPARE(tmpl.render({{"user", "Hi"}}, true), std::string("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));

    const ChatTemplate garbage = ChatTemplate::detect("{{ messages | join(' ') }}");
    QCOMPARE(garbage.family(), ChatTemplateFamily::chatml);
    QVERIFY(!garbage.warning().empty());
}

void TestChatTemplate::empty_template_is_chatml_without_warning() {
    const ChatTemplate tmpl = ChatTemplate::detect("");
    QCOMPARE(tmpl.family(), ChatTemplateFamily::chatml);
    QVERIFY(tmpl.warning().empty());
    QCOMPARE(tmpl.render({}, true), std::string("<|im_start|>assistant\n"));
}

// A file without a template takes its architecture's family (Gemma 3 base: Gemma's turns), with
// a notice naming both; the rendering is the family's, which the golden checks against jinja2.
void TestChatTemplate::missing_template_takes_the_architecture_family() {
    const ChatTemplate tmpl = ChatTemplate::detect("", "<bos>", "<eos>", ChatTemplateFamily::gemma, "gemma3");
    QCOMPARE(tmpl.family(), ChatTemplateFamily::gemma);
    QVERIFY2(tmpl.warning().find("no chat template") != std::string::npos && tmpl.warning().find("gemma3") != std::string::npos,
             tmpl.warning().c_str());
    QCOMPARE(tmpl.render({{"user", "Hi"}}, true), std::string("<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"));
    QCOMPARE(tmpl.render({{"user", "Hi"}}, true), detect_file("gemma.jinja", "<bos>", "<eos>").render({{"user", "Hi"}}, true));
    const ChatTemplate phi = ChatTemplate::detect("", "<s>", "<|endoftext|>", ChatTemplateFamily::phi3, "phi3");
    QCOMPARE(phi.family(), ChatTemplateFamily::phi3);
    QCOMPARE(phi.render({{"user", "Hi"}}, true), detect_file("phi3.jinja", "<s>", "<|endoftext|>").render({{"user", "Hi"}}, true));
}

void TestChatTemplate::smollm2_default_system_prompt() {
    // chatml.jinja is the template stored in SmolLM2-135M-Instruct's GGUF.
    const ChatTemplate tmpl = detect_file("chatml.jinja");
    QCOMPARE(tmpl.default_system_prompt(),
             std::string("You are a helpful AI assistant named SmolLM, trained by Hugging Face"));
    // The default goes in only when the conversation has no system message of its own.
    const std::string with_own = tmpl.render({{"system", "Be brief."}, {"user", "Hi"}}, false);
    QVERIFY(with_own.find("SmolLM") == std::string::npos);
    QVERIFY(tmpl.render({{"user", "Hi"}}, false).starts_with("<|im_start|>system\nYou are a helpful AI"));
}

void TestChatTemplate::default_system_prompt_parsed_generically() {
    // Newline written as the escape "\n" rather than a raw newline, double quotes, an escaped quote.
    const char* source =
        "{% if messages[0]['role'] != 'system' %}{{ \"<|im_start|>system\\nYou\\'re Bob, a \\\"bot\\\".<|im_end|>\\n\" }}"
        "{% endif %}{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
        "{% endfor %}";
    const ChatTemplate tmpl = ChatTemplate::detect(source);
    QCOMPARE(tmpl.family(), ChatTemplateFamily::chatml);
    QCOMPARE(tmpl.default_system_prompt(), std::string("You're Bob, a \"bot\"."));
}

void TestChatTemplate::default_system_not_taken_from_expressions() {
    // '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>' is the user's own prompt.
    const char* source =
        "{% if messages[0]['role'] == 'system' %}{{ '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}"
        "{% endif %}{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}{% endfor %}";
    const ChatTemplate tmpl = ChatTemplate::detect(source);
    QCOMPARE(tmpl.family(), ChatTemplateFamily::chatml);
    QCOMPARE(tmpl.default_system_prompt(), std::string());
}

void TestChatTemplate::end_of_turn_markers() {
    const std::map<QString, std::string> expected = {
        {"chatml.jinja", "<|im_end|>"},   {"llama3.jinja", "<|eot_id|>"},   {"llama3_2.jinja", "<|eot_id|>"},
        {"gemma.jinja", "<end_of_turn>"}, {"llama2.jinja", "</s>"},         {"mistral.jinja", "</s>"},
        {"phi3.jinja", "<|end|>"},
    };
    for (const auto& [file, marker] : expected) QCOMPARE(detect_file(file, "<s>", "</s>").end_of_turn(), marker);
    QCOMPARE(detect_file("llama2.jinja").end_of_turn(), std::string("</s>"));  // no EOS text given
}

void TestChatTemplate::mistral_folds_system_into_first_user_turn() {
    // Mistral v0.1's template rejects a system role; we fold it into the first user message.
    const ChatTemplate tmpl = detect_file("mistral.jinja", "<s>", "</s>");
    QCOMPARE(tmpl.family(), ChatTemplateFamily::mistral);
    const std::string got = tmpl.render({{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello"}, {"user", "Bye"}}, true);
    QCOMPARE(got, std::string("<s>[INST] Be brief.\n\nHi [/INST]Hello</s>[INST] Bye [/INST]"));
}

void TestChatTemplate::gemma_system_separator_read_from_template() {
    // Some Gemma 3 GGUFs join the system prompt with a single newline; the template says which.
    const char* source =
        "{{ bos_token }}{%- if messages[0]['role'] == 'system' -%}{%- set first_user_prefix = messages[0]['content'] + '\\n' -%}"
        "{%- endif -%}{{ '<start_of_turn>' + role + '\\n' }}";
    const ChatTemplate tmpl = ChatTemplate::detect(source, "<bos>");
    QCOMPARE(tmpl.family(), ChatTemplateFamily::gemma);
    QCOMPARE(tmpl.render({{"system", "Sys"}, {"user", "Hi"}}, false),
             std::string("<bos><start_of_turn>user\nSys\nHi<end_of_turn>\n"));
}

QTEST_APPLESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
