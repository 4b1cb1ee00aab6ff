// Replies read in each model family's form: thinking apart from the answer, Hermes, Llama 3.x,
// Mistral and gpt-oss tool calls; a malformed call stays text; the streamed reading, cut at any
// byte, gives what the whole reading gives. Each corpus template is recognised by its form, and
// a conversation with tool calls and results renders through templates with and without a tool
// form of their own.
#include <QFile>
#include <QTest>

#include "jinja/jinja.h"
#include "workbench/chat_reply.h"
#include "workbench/structured_output.h"

using namespace workbench;

namespace {

ChatFormat format_with(ToolCallFormat tools, bool renders_tools = true) {
    ChatFormat f;
    f.tools = tools;
    f.template_renders_tools = renders_tools;
    return f;
}

std::string corpus(const char* name) {
    QFile f(QStringLiteral(WB_TEST_DATA_DIR "/chat_templates/corpus/") + QString::fromUtf8(name) + ".jinja");
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll().toStdString();
}

// The streamed reading with the text cut into pieces of `step` bytes, joined.
ChatReply streamed(const ChatFormat& f, const std::string& text, size_t step, bool tools, bool open) {
    ChatReplyStream s(f, tools, open);
    ChatReply all;
    auto add = [&](ChatReply d) {
        all.content += d.content;
        all.reasoning += d.reasoning;
        for (auto& c : d.tool_calls) all.tool_calls.push_back(c);
    };
    for (size_t at = 0; at < text.size(); at += step) add(s.push(std::string_view(text).substr(at, step)));
    add(s.finish());
    return all;
}

}  // namespace

class TestChatReply : public QObject {
    Q_OBJECT
private slots:
    void hermes_calls_and_thinking();
    void other_families();
    void malformed_calls_stay_text();
    void streaming_matches_the_whole_reading();
    void corpus_templates_are_recognised();
    void tool_conversations_render();
    void forced_call_grammar();
};

void TestChatReply::hermes_calls_and_thinking() {
    const ChatFormat f = format_with(ToolCallFormat::hermes);
    const ChatReply r = parse_chat_reply(f, "<think>\nweather needed\n</think>\n\nLet me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>{\"name\": \"add\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>", true, false);
    QCOMPARE(r.reasoning, std::string("\nweather needed\n"));
    QCOMPARE(r.content, std::string("Let me check.\n"));
    QCOMPARE(r.tool_calls.size(), size_t{2});
    QCOMPARE(r.tool_calls[0].name, std::string("get_weather"));
    QCOMPARE(r.tool_calls[0].arguments, std::string("{\"city\":\"Paris\"}"));
    QCOMPARE(r.tool_calls[1].arguments, std::string("{\"a\":1}"));   // a JSON string of an object: read as the object
    // No tools offered: a <tool_call> is just text. The prompt opened <think>: the reply starts thinking.
    QCOMPARE(parse_chat_reply(f, "<tool_call>{\"name\": \"x\"}</tool_call>", false, false).content, std::string("<tool_call>{\"name\": \"x\"}</tool_call>"));
    const ChatReply open = parse_chat_reply(f, "hmm\n</think>\n\nFour.", false, true);
    QCOMPARE(open.reasoning, std::string("hmm\n"));
    QCOMPARE(open.content, std::string("Four."));
    // Thinking cut off by max_tokens: all of it is thinking.
    QCOMPARE(parse_chat_reply(f, "<think>still going", false, false).reasoning, std::string("still going"));
    QCOMPARE(parse_chat_reply(f, "Plain answer.", true, false).content, std::string("Plain answer."));
}

void TestChatReply::other_families() {
    const ChatReply llama = parse_chat_reply(format_with(ToolCallFormat::llama3_json), "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}", true, false);
    QCOMPARE(llama.tool_calls.size(), size_t{1});
    QCOMPARE(llama.tool_calls[0].arguments, std::string("{\"city\":\"Oslo\"}"));
    QVERIFY(llama.content.empty());
    const ChatReply tagged = parse_chat_reply(format_with(ToolCallFormat::llama3_json), "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {\"x\": 1}}", true, false);
    QCOMPARE(tagged.tool_calls.size(), size_t{2});
    QCOMPARE(tagged.tool_calls[1].name, std::string("b"));
    QCOMPARE(parse_chat_reply(format_with(ToolCallFormat::llama3_json), "The answer is {x}.", true, false).content, std::string("The answer is {x}."));
    // An object that merely has a name is an answer (a JSON reply about a person), not a call.
    const ChatReply person = parse_chat_reply(format_with(ToolCallFormat::llama3_json), "{\"name\": \"Bob\", \"age\": 3}", true, false);
    QVERIFY(person.tool_calls.empty());
    QCOMPARE(person.content, std::string("{\"name\": \"Bob\", \"age\": 3}"));

    const ChatReply nemo = parse_chat_reply(format_with(ToolCallFormat::mistral), "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"q\": \"x\"}, \"id\": \"abcDEF123\"}]", true, false);
    QCOMPARE(nemo.tool_calls.size(), size_t{1});
    QCOMPARE(nemo.tool_calls[0].id, std::string("abcDEF123"));
    const ChatReply small = parse_chat_reply(format_with(ToolCallFormat::mistral), "Sure.[TOOL_CALLS]f[ARGS]{\"q\": 1}[TOOL_CALLS]g[ARGS]{}", true, false);
    QCOMPARE(small.content, std::string("Sure."));
    QCOMPARE(small.tool_calls.size(), size_t{2});
    QCOMPARE(small.tool_calls[1].name, std::string("g"));

    const ChatFormat harmony = format_with(ToolCallFormat::harmony);
    const ChatReply h = parse_chat_reply(harmony, "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Rome\"}", true, false);
    QCOMPARE(h.reasoning, std::string("Need weather."));
    QCOMPARE(h.tool_calls.size(), size_t{1});
    QCOMPARE(h.tool_calls[0].name, std::string("get_weather"));
    const ChatReply final = parse_chat_reply(harmony, "<|channel|>analysis<|message|>2+2.<|end|><|start|>assistant<|channel|>final<|message|>4", false, false);
    QCOMPARE(final.reasoning, std::string("2+2."));
    QCOMPARE(final.content, std::string("4"));
}

void TestChatReply::malformed_calls_stay_text() {
    const ChatFormat f = format_with(ToolCallFormat::hermes);
    for (const char* text : {"<tool_call>{\"name\": }</tool_call>", "<tool_call>not json</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>",
                             "<tool_call>[1, 2]</tool_call>", "<tool_call>{\"name\": \"f\", \"arguments\": 7}</tool_call>"}) {
        const ChatReply r = parse_chat_reply(f, text, true, false);
        QVERIFY2(r.tool_calls.empty(), text);
        QCOMPARE(r.content, std::string(text));
    }
    QCOMPARE(parse_chat_reply(format_with(ToolCallFormat::mistral), "[TOOL_CALLS][{\"nam", true, false).content, std::string("[TOOL_CALLS][{\"nam"));
    QVERIFY(parse_chat_reply(format_with(ToolCallFormat::llama3_json), "{\"name\": \"f\", \"parameters\": ", true, false).tool_calls.empty());
    // Unclosed but whole: the call the model meant (it ended before the closing tag).
    QCOMPARE(parse_chat_reply(f, "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n", true, false).tool_calls.size(), size_t{1});
}

void TestChatReply::streaming_matches_the_whole_reading() {
    const std::vector<std::tuple<ToolCallFormat, std::string, bool>> cases = {
        {ToolCallFormat::hermes, "<think>a</think>\n\nb <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call> c <tool_c", false},
        {ToolCallFormat::hermes, "x</think>y<tool_call>{\"name\": \"g\", \"arguments\": {\"k\": [1]}}</tool_call>", true},
        {ToolCallFormat::llama3_json, "  {\"name\": \"f\", \"parameters\": {\"a\": \"}\"}}", false},
        {ToolCallFormat::mistral, "ok [TOOL_CALLS]f[ARGS]{\"q\": 1}", false},
        {ToolCallFormat::harmony, "<|channel|>analysis<|message|>t<|end|><|start|>assistant<|channel|>final<|message|>done", false},
        {ToolCallFormat::hermes, "<tool_call>bad</tool_call><think>x</think>", false},   // a late <think> is text
    };
    for (const auto& [tools, text, open] : cases) {
        const ChatFormat f = format_with(tools);
        const ChatReply whole = parse_chat_reply(f, text, true, open);
        for (size_t step = 1; step <= 7; ++step) {
            const ChatReply s = streamed(f, text, step, true, open);
            QCOMPARE(QString::fromStdString(s.content), QString::fromStdString(whole.content));
            QCOMPARE(QString::fromStdString(s.reasoning), QString::fromStdString(whole.reasoning));
            QCOMPARE(s.tool_calls.size(), whole.tool_calls.size());
            for (size_t k = 0; k < s.tool_calls.size(); ++k) QCOMPARE(s.tool_calls[k].arguments, whole.tool_calls[k].arguments);
        }
    }
    // Nothing is held back that cannot become a marker.
    ChatReplyStream s(format_with(ToolCallFormat::hermes), true, false);
    QCOMPARE(s.push("Hello there").content, std::string("Hello there"));
    QCOMPARE(s.push(" and <tool").content, std::string(" and "));
}

void TestChatReply::corpus_templates_are_recognised() {
    const std::vector<std::pair<const char*, ToolCallFormat>> expected = {
        {"Qwen-Qwen2.5-7B-Instruct", ToolCallFormat::hermes},
        {"Qwen-Qwen3-0.6B", ToolCallFormat::hermes},
        {"meta-llama-Llama-3.1-8B-Instruct", ToolCallFormat::llama3_json},
        {"meta-llama-Llama-3.2-3B-Instruct", ToolCallFormat::llama3_json},
        {"mistralai-Mistral-Nemo-Instruct-2407", ToolCallFormat::mistral},
        {"Mistral-Small-3.2-24B-Instruct-2506", ToolCallFormat::mistral},
        {"openai-gpt-oss-120b", ToolCallFormat::harmony},
        {"HuggingFaceTB-SmolLM2-135M-Instruct", ToolCallFormat::hermes},
    };
    for (const auto& [name, format] : expected) {
        const std::string source = corpus(name);
        QVERIFY2(!source.empty(), name);
        QCOMPARE(tool_call_format_name(chat_format_of(source).tools), tool_call_format_name(format));
    }
    QVERIFY(!chat_format_of(corpus("HuggingFaceTB-SmolLM2-135M-Instruct")).template_renders_tools);
    QVERIFY(chat_format_of(corpus("Qwen-Qwen3-0.6B")).think_tags);
    QVERIFY(chat_format_of(corpus("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B")).think_tags);
}

// An OpenAI conversation (arguments as JSON text, a tool result) prepared for a template with a
// tool form (Qwen 2.5: the arguments reach it as an object) and without one (SmolLM2: Hermes text).
void TestChatReply::tool_conversations_render() {
    const Json tools = *parse_json(R"([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");
    const Json messages = *parse_json(R"([{"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18 C"}])");
    for (const char* name : {"Qwen-Qwen2.5-7B-Instruct", "HuggingFaceTB-SmolLM2-135M-Instruct"}) {
        const std::string source = corpus(name);
        const ChatFormat f = chat_format_of(source);
        Json vars = {{"messages", prepare_tool_messages(f, messages, tools)}, {"add_generation_prompt", true},
                     {"bos_token", ""}, {"eos_token", ""}, {"tools", f.template_renders_tools ? tools : Json(nullptr)}};
        const auto text = jinja::render(source, vars);
        QVERIFY2(text.ok(), text.ok() ? name : text.status().message().c_str());
        QVERIFY2(text->find("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}") != std::string::npos ||
                     text->find("<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}") != std::string::npos,
                 text->c_str());
        QVERIFY2(text->find("<tool_response>\n18 C\n</tool_response>") != std::string::npos, text->c_str());
        QVERIFY2(text->find("get_weather") < text->find("Weather in Paris?") || f.template_renders_tools, text->c_str());   // described up front
    }
}

void TestChatReply::forced_call_grammar() {
    const Json tools = *parse_json(R"([{"type": "function", "function": {"name": "a", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}},
                                       {"type": "function", "function": {"name": "b"}}])");
    const auto g = tool_call_grammar(format_with(ToolCallFormat::hermes), tools, "", true);
    QVERIFY2(g.ok(), g.ok() ? "" : g.status().message().c_str());
    QVERIFY(check_grammar(*g).ok());
    QVERIFY(!tool_call_grammar(format_with(ToolCallFormat::hermes), tools, "c", false).ok());
    // Parameters with their own $defs (as Pydantic writes them): the references still resolve,
    // for one tool and for several.
    const Json with_refs = *parse_json(R"([{"type": "function", "function": {"name": "r", "parameters": {"$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        "type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}}}}])");
    QVERIFY(tool_call_grammar(format_with(ToolCallFormat::hermes), with_refs, "", false).ok());
    Json both = with_refs;
    both.push_back(tools[0]);
    const auto g2 = tool_call_grammar(format_with(ToolCallFormat::hermes), both, "", true);
    QVERIFY2(g2.ok(), g2.ok() ? "" : g2.status().message().c_str());
    const Json bad = *parse_json(R"([{"type": "function", "function": {"name": "z", "parameters": {"type": "string", "format": "uri"}}}])");
    const auto refused = tool_call_grammar(format_with(ToolCallFormat::hermes), bad, "", false);
    QVERIFY(!refused.ok() && refused.status().message().find("tool 'z'") != std::string::npos && refused.status().message().find("'format'") != std::string::npos);
    QVERIFY(tool_call_id(format_with(ToolCallFormat::mistral), 1, 0).size() == 9);
    QVERIFY(tool_call_id(format_with(ToolCallFormat::hermes), 1, 0).rfind("call_", 0) == 0);
    QVERIFY(tool_call_id(format_with(ToolCallFormat::hermes), 1, 0) != tool_call_id(format_with(ToolCallFormat::hermes), 1, 1));
}

QTEST_APPLESS_MAIN(TestChatReply)
#include "test_chat_reply.moc"
