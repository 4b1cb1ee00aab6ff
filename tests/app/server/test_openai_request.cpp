// The request reader on its own: what a valid body becomes, and a table of malformed or hostile
// bodies, each refused with the status and the field (OpenAI's "param") it is about.
#include <QTest>

#include <string>

#include "server/openai_request.h"

using wbserver::ApiError;
using wbserver::ApiRequest;
using wbserver::Endpoint;

namespace {

ApiRequest accepted(const std::string& body, Endpoint e) {
    auto r = wbserver::parse_api_request(body, e);
    if (auto* err = std::get_if<ApiError>(&r)) qWarning("refused: %s", err->message.c_str());
    return std::get<ApiRequest>(r);
}

}  // namespace

class TestOpenaiRequest : public QObject {
    Q_OBJECT
private slots:
    void a_chat_request_reads_every_documented_field() {
        const ApiRequest r = accepted(R"({"model": "m", "messages": [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": "ok"}], "max_completion_tokens": 7, "n": 3, "seed": -5, "temperature": 0.5,
            "top_p": 0.9, "top_k": 12, "min_p": 0.1, "stop": ["\n\n", "END"], "presence_penalty": 0.5, "frequency_penalty": -1,
            "logprobs": true, "top_logprobs": 4, "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true},
            "some_future_field": {"ignored": 1}})",
                                      Endpoint::chat_completions);
        QCOMPARE(r.model, std::string("m"));
        QCOMPARE(r.messages.size(), size_t(3));
        QCOMPARE(r.messages[1].content, std::string("a\nb"));
        QCOMPARE(r.messages[2].role, std::string("assistant"));
        QCOMPARE(*r.max_tokens, 7);
        QCOMPARE(r.n, 3);
        QCOMPARE(r.sampling.seed, static_cast<uint64_t>(-5));
        QCOMPARE(r.sampling.temperature, 0.5f);
        QCOMPARE(r.sampling.top_p, 0.9f);
        QCOMPARE(r.sampling.top_k, 12);
        QCOMPARE(r.sampling.min_p, 0.1f);
        QCOMPARE(r.sampling.presence_penalty, 0.5f);
        QCOMPARE(r.sampling.frequency_penalty, -1.0f);
        QCOMPARE(r.stop.size(), size_t(2));
        QVERIFY(r.logprobs);
        QCOMPARE(r.top_logprobs, 4);
        QVERIFY(r.ignore_eos && r.stream && r.include_usage);
    }

    void defaults_are_openais() {
        const ApiRequest r = accepted(R"({"prompt": "x", "max_tokens": null, "stop": null})", Endpoint::completions);
        QCOMPARE(r.prompt_text, std::string("x"));
        QVERIFY(!r.max_tokens);
        QCOMPARE(r.n, 1);
        QCOMPARE(r.sampling.temperature, 1.0f);
        QCOMPARE(r.sampling.top_p, 1.0f);
        QCOMPARE(r.sampling.top_k, 0);
        QCOMPARE(r.sampling.min_p, 0.0f);
        QVERIFY(!r.logprobs && !r.stream && r.stop.empty());
    }

    void completions_take_token_ids_and_integer_logprobs() {
        const ApiRequest r = accepted(R"({"prompt": [1, 2, 3], "logprobs": 2, "stop": "x", "top_k": -1})", Endpoint::completions);
        QCOMPARE(r.prompt_tokens->size(), size_t(3));
        QVERIFY(r.logprobs);
        QCOMPARE(r.top_logprobs, 2);
        QCOMPARE(r.stop.front(), std::string("x"));
        QCOMPARE(r.sampling.top_k, 0);
    }

    void hostile_bodies_are_refused_naming_the_field_data() {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<bool>("chat");
        QTest::addColumn<QString>("param");
        auto row = [](const char* name, const std::string& body, bool chat, const char* param) {
            QTest::newRow(name) << QByteArray::fromStdString(body) << chat << QString(param);
        };
        row("empty body", "", true, "");
        row("not JSON", "{bad", true, "");
        row("truncated JSON", R"({"messages": [)", true, "");
        row("array body", "[]", true, "");
        row("string body", "\"hi\"", true, "");
        row("bad UTF-8", "{\"prompt\": \"\xff\xfe\"}", false, "");
        row("lone surrogate escape", R"({"prompt": "\ud800"})", false, "");
        row("deep nesting", std::string(100000, '[') + std::string(100000, ']'), true, "");
        row("no messages", R"({"model": "m"})", true, "messages");
        row("messages not an array", R"({"messages": "hi"})", true, "messages");
        row("messages empty", R"({"messages": []})", true, "messages");
        row("message not an object", R"({"messages": [1]})", true, "messages[0]");
        row("role tool without its call id", R"({"messages": [{"role": "tool", "content": "x"}]})", true, "messages[0].tool_call_id");
        row("role unknown", R"({"messages": [{"role": "robot", "content": "x"}]})", true, "messages[0].role");
        row("tool_calls not an array", R"({"messages": [{"role": "assistant", "tool_calls": {}}]})", true, "messages[0].tool_calls");
        row("tool call without a name", R"({"messages": [{"role": "assistant", "tool_calls": [{"type": "function", "function": {"arguments": "{}"}}]}]})", true, "messages[0].tool_calls[0].function.name");
        row("role missing", R"({"messages": [{"content": "x"}]})", true, "messages[0].role");
        row("content missing", R"({"messages": [{"role": "user"}]})", true, "messages[0].content");
        row("content a number", R"({"messages": [{"role": "user", "content": 5}]})", true, "messages[0].content");
        row("image part", R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})", true,
            "messages[0].content[0].type");
        row("part without text", R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})", true, "messages[0].content[0].text");
        std::string many = R"({"messages": [)";
        for (int i = 0; i < 1025; ++i) many += std::string(i ? "," : "") + R"({"role": "user", "content": "x"})";
        row("1025 messages", many + "]}", true, "messages");
        row("no prompt", R"({"max_tokens": 3})", false, "prompt");
        row("empty prompt", R"({"prompt": ""})", false, "prompt");
        row("prompt an object", R"({"prompt": {}})", false, "prompt");
        row("negative token id", R"({"prompt": [1, -1]})", false, "prompt");
        row("fractional token id", R"({"prompt": [1.5]})", false, "prompt");
        row("list of prompts", R"({"prompt": ["a", "b"]})", false, "prompt");
        row("model a number", R"({"prompt": "x", "model": 3})", false, "model");
        row("max_tokens zero", R"({"prompt": "x", "max_tokens": 0})", false, "max_tokens");
        row("max_tokens negative", R"({"prompt": "x", "max_tokens": -4})", false, "max_tokens");
        row("max_tokens a string", R"({"prompt": "x", "max_tokens": "10"})", false, "max_tokens");
        row("max_tokens huge", R"({"prompt": "x", "max_tokens": 1e300})", false, "max_tokens");
        row("max_tokens disagree", R"({"prompt": "x", "max_tokens": 3, "max_completion_tokens": 4})", false, "max_completion_tokens");
        row("n zero", R"({"prompt": "x", "n": 0})", false, "n");
        row("n 17", R"({"prompt": "x", "n": 17})", false, "n");
        row("temperature a string", R"({"prompt": "x", "temperature": "hot"})", false, "temperature");
        row("temperature 3", R"({"prompt": "x", "temperature": 3})", false, "temperature");
        row("top_p zero", R"({"prompt": "x", "top_p": 0})", false, "top_p");
        row("top_p 1.5", R"({"prompt": "x", "top_p": 1.5})", false, "top_p");
        row("top_k -2", R"({"prompt": "x", "top_k": -2})", false, "top_k");
        row("min_p 2", R"({"prompt": "x", "min_p": 2})", false, "min_p");
        row("presence_penalty 5", R"({"prompt": "x", "presence_penalty": 5})", false, "presence_penalty");
        row("frequency_penalty true", R"({"prompt": "x", "frequency_penalty": true})", false, "frequency_penalty");
        row("seed fractional", R"({"prompt": "x", "seed": 1.5})", false, "seed");
        row("seed too big", R"({"prompt": "x", "seed": 1e30})", false, "seed");
        row("stop a number", R"({"prompt": "x", "stop": 3})", false, "stop");
        row("stop empty string", R"({"prompt": "x", "stop": [""]})", false, "stop");
        row("17 stop strings", R"({"prompt": "x", "stop": ["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]})", false, "stop");
        row("chat logprobs an int", R"({"messages": [{"role": "user", "content": "x"}], "logprobs": 3})", true, "logprobs");
        row("top_logprobs without logprobs", R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 3})", true, "top_logprobs");
        row("top_logprobs 21", R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 21})", true, "top_logprobs");
        row("completions logprobs true", R"({"prompt": "x", "logprobs": true})", false, "logprobs");
        row("stream a string", R"({"prompt": "x", "stream": "yes"})", false, "stream");
        row("stream_options without stream", R"({"prompt": "x", "stream_options": {"include_usage": true}})", false, "stream_options");
        row("include_usage a string", R"({"prompt": "x", "stream": true, "stream_options": {"include_usage": "y"}})", false,
            "stream_options.include_usage");
        row("ignore_eos a number", R"({"prompt": "x", "ignore_eos": 1})", false, "ignore_eos");
        row("speculative a string", R"({"prompt": "x", "speculative": "lookup"})", false, "speculative");
        row("speculative draft unknown", R"({"prompt": "x", "speculative": {"draft": "medusa"}})", false, "speculative.draft");
        row("speculative draft_max 0", R"({"prompt": "x", "speculative": {"draft": "lookup", "draft_max": 0}})", false, "speculative.draft_max");
        row("speculative ngram 99", R"({"prompt": "x", "speculative": {"draft": "lookup", "ngram": 99}})", false, "speculative.ngram");
        row("suffix (fill-in-the-middle)", R"({"prompt": "x", "suffix": "y"})", false, "suffix");
        row("tool without a function name", R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})", true, "tools[0].function.name");
        row("tool of another type", R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "retrieval"}]})", true, "tools[0].type");
        row("tool parameters not an object", R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": []}}]})", true, "tools[0].function.parameters");
        row("tool_choice naming an absent tool", R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"type": "function", "function": {"name": "g"}}})", true, "tool_choice");
        row("tools on completions", R"({"prompt": "x", "tools": [{"type": "function", "function": {"name": "f"}}]})", false, "tools");
        row("tool_choice required", R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"})", true, "tool_choice");
        row("response_format json_schema outside the subset", R"({"prompt": "x", "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "string", "format": "uri"}}}})", false, "response_format.json_schema.schema");
        row("response_format json_schema without a schema", R"({"prompt": "x", "response_format": {"type": "json_schema", "json_schema": {"name": "n"}}})", false, "response_format.json_schema.schema");
        row("response_format of an unknown type", R"({"prompt": "x", "response_format": {"type": "yaml"}})", false, "response_format.type");
        row("grammar that does not parse", R"({"prompt": "x", "grammar": "root ::= missing"})", false, "grammar");
        row("grammar beside response_format", R"({"prompt": "x", "grammar": "root ::= [a]", "response_format": {"type": "json_object"}})", false, "grammar");
        row("functions", R"({"messages": [{"role": "user", "content": "x"}], "functions": []})", true, "functions");
        row("modalities audio", R"({"messages": [{"role": "user", "content": "x"}], "modalities": ["text", "audio"]})", true, "modalities");
        row("logit_bias key not an id", R"({"prompt": "x", "logit_bias": {"abc": 1}})", false, "logit_bias");
        row("logit_bias value 200", R"({"prompt": "x", "logit_bias": {"5": 200}})", false, "logit_bias");
        row("logit_bias an array", R"({"prompt": "x", "logit_bias": [1]})", false, "logit_bias");
        row("best_of below n", R"({"prompt": "x", "n": 3, "best_of": 2})", false, "best_of");
        row("best_of streamed", R"({"prompt": "x", "best_of": 2, "stream": true})", false, "best_of");
        row("echo streamed with logprobs", R"({"prompt": "x", "echo": true, "logprobs": 1, "stream": true})", false, "echo");
        row("max_tokens 0 without echo", R"({"prompt": "x", "max_tokens": 0})", false, "max_tokens");
    }

    void fields_that_change_the_answer_are_read() {
        const ApiRequest c = accepted(R"({"prompt": "x", "n": 2, "best_of": 4, "echo": true, "max_tokens": 0, "logprobs": 1,
            "logit_bias": {"7": -100, "12": 3.5}, "suffix": "", "tools": [], "tool_choice": "none", "response_format": {"type": "text"}})",
                                      Endpoint::completions);
        QCOMPARE(c.best_of, 4);
        QVERIFY(c.echo);
        QCOMPARE(*c.max_tokens, 0);
        QCOMPARE(c.sampling.logit_bias.size(), size_t(2));
        QCOMPARE(c.sampling.logit_bias[0].token, 7);
        QCOMPARE(c.sampling.logit_bias[0].bias, -100.0f);
        QCOMPARE(c.sampling.logit_bias[1].bias, 3.5f);
        // best_of defaults to n, on both endpoints.
        QCOMPARE(accepted(R"({"prompt": "x", "n": 3})", Endpoint::completions).best_of, 3);
        const ApiRequest chat = accepted(R"({"messages": [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "x"}], "n": 3})",
                                         Endpoint::chat_completions);
        QCOMPARE(chat.best_of, 3);
        QCOMPARE(chat.messages[0].role, std::string("system"));   // OpenAI's newer name for it
    }
    void hostile_bodies_are_refused_naming_the_field() {
        QFETCH(QByteArray, body);
        QFETCH(bool, chat);
        QFETCH(QString, param);
        auto r = wbserver::parse_api_request(body.toStdString(), chat ? Endpoint::chat_completions : Endpoint::completions);
        QVERIFY2(std::holds_alternative<ApiError>(r), "accepted");
        const ApiError& e = std::get<ApiError>(r);
        QCOMPARE(e.http_status, 400);
        QCOMPARE(e.type, std::string("invalid_request_error"));
        QCOMPARE(QString::fromStdString(e.param), param);
        QVERIFY(!e.message.empty());
        if (!param.isEmpty()) QVERIFY2(e.message.find(param.toStdString().substr(0, param.indexOf('['))) != std::string::npos, e.message.c_str());
        // The error object has OpenAI's four fields.
        const workbench::Json j = wbserver::error_json(e);
        for (const char* k : {"message", "type", "param", "code"}) QVERIFY(j["error"].contains(k));
    }
};

QTEST_APPLESS_MAIN(TestOpenaiRequest)
#include "test_openai_request.moc"
