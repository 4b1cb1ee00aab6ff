// The chat with a remote OpenAI-compatible server, on the real window offscreen: `workbench-cli
// serve` on the default model (a loopback port the OS picks, an API key) is reached through the
// real "Connect to a server…" dialog (a wrong key shows the server's 401 message, List models
// fills the combo, Connect switches the chat), a greedy turn typed into the chat input gets the
// same text wbremote::stream_completion gets for the same request, with a footer naming the TTFT
// and the remote; a closed port (127.0.0.1:1) is a clear error in the dialog, a server gone
// mid-conversation a clear error in the chat, the window running on; File → Use local model
// switches back. Without a model: the /metrics → KV fraction reader and the /metrics URL.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QLineSeries>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <memory>
#include <mutex>

#include "remote/openai_client.h"
#include "tests/app/server/serve_process.h"
#include "tests/remote/loopback_http.h"
#include "tests/skip_missing.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/remote_chat_client.h"
#include "ui/history/history_recorder.h"
#include "ui/main_window.h"
#include "ui/pages/chat_page.h"
#include "ui/pages/config_panel.h"
#include "ui/pages/connect_server_dialog.h"
#include "ui/pages/metrics_panel.h"
#include "ui/pages/tool_result_bar.h"
#include "ui/pages/tools_dialog.h"
#include "ui/pages/server_metrics_text.h"
#include "widgets/kv_memory_chart.h"
#include "widgets/server_kv_chart.h"
#include "widgets/token_stream_view.h"
#include "workbench/json.h"
#include "workbench/store.h"

namespace {

const QString kApiKey = QStringLiteral("remote-chat-test-key");

}  // namespace

class TestRemoteChat : public QObject {
    Q_OBJECT
    std::unique_ptr<wbtest::ServeProcess> m_serve;
    std::unique_ptr<MainWindow> m_window;

    // Through the real dialog: open it from the File menu's action, type the URL and key.
    ConnectServerDialog* openDialog(const QString& url, const QString& key) {
        m_window->connectAction()->trigger();
        ConnectServerDialog* dialog = m_window->connectDialog();
        if (!dialog) return nullptr;
        dialog->urlEdit()->clear();
        QTest::keyClicks(dialog->urlEdit(), url);
        dialog->keyEdit()->clear();
        if (!key.isEmpty()) QTest::keyClicks(dialog->keyEdit(), key);
        return dialog;
    }

private slots:
    void kvFractionFromMetrics() {
        using servermetrics::kvUsageFraction;
        // Each server's own name, with the HELP/TYPE lines and other metrics around it.
        QCOMPARE(kvUsageFraction(u"# TYPE workbench:kv_cache_usage_perc gauge\n"
                                 u"workbench:kv_cache_usage_perc{model_name=\"m\"} 0.25\n"
                                 u"workbench:kv_cache_usage_bytes{model_name=\"m\"} 1234\n").value_or(-1), 0.25);
        QCOMPARE(kvUsageFraction(u"vllm:num_requests_running{model_name=\"m\"} 1\n"
                                 u"vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.5\n").value_or(-1), 0.5);
        QCOMPARE(kvUsageFraction(u"vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.125\n").value_or(-1), 0.125);
        QCOMPARE(kvUsageFraction(u"sglang:token_usage{model_name=\"m\"} 0.03\n").value_or(-1), 0.03);
        QCOMPARE(kvUsageFraction(u"llamacpp:kv_cache_usage_ratio 0.75\n").value_or(-1), 0.75);
        // vLLM mid-rename exposes both: the newer name wins, wherever it stands.
        QCOMPARE(kvUsageFraction(u"vllm:gpu_cache_usage_perc 0.9\nvllm:kv_cache_usage_perc 0.2\n").value_or(-1), 0.2);
        // One line per model: the fullest.
        QCOMPARE(kvUsageFraction(u"vllm:kv_cache_usage_perc{model_name=\"a\"} 0.1\n"
                                 u"vllm:kv_cache_usage_perc{model_name=\"b\"} 0.4\n").value_or(-1), 0.4);
        // Out of range is clamped; not finite or absent is not reported.
        QCOMPARE(kvUsageFraction(u"sglang:token_usage 1.5\n").value_or(-1), 1.0);
        QVERIFY(!kvUsageFraction(u"vllm:kv_cache_usage_perc NaN\n"));
        QVERIFY(!kvUsageFraction(u"vllm:num_requests_running 1\nvllm:kv_cache_usage_bytes 3\n"));
        QVERIFY(!kvUsageFraction(u"# TYPE vllm:kv_cache_usage_perc gauge\n"));
        QVERIFY(!kvUsageFraction(u""));
        QVERIFY(!kvUsageFraction(u"<html>404</html>"));
    }

    void metricsUrlIsTheServersRoot() {
        QCOMPARE(RemoteChatClient::metricsUrl(QStringLiteral("http://127.0.0.1:8080/v1")), QStringLiteral("http://127.0.0.1:8080/metrics"));
        QCOMPARE(RemoteChatClient::metricsUrl(QStringLiteral(" http://h:8000/v1/ ")), QStringLiteral("http://h:8000/metrics"));
        QCOMPARE(RemoteChatClient::metricsUrl(QStringLiteral("http://h:8000")), QStringLiteral("http://h:8000/metrics"));
        QCOMPARE(RemoteChatClient::metricsUrl(QStringLiteral("http://h/proxy/v1")), QStringLiteral("http://h/proxy/metrics"));
    }

    void chatsWithServeThroughTheWindow() {
        if (uitest::modelPath().isEmpty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        m_serve = std::make_unique<wbtest::ServeProcess>();
        m_serve->environment.insert(QStringLiteral("WORKBENCH_API_KEY"), kApiKey);  // as the Server page passes it: not on the command line
        QVERIFY2(m_serve->start({}, uitest::kTimeoutMs), m_serve->log.c_str());
        m_window = std::make_unique<MainWindow>();
        m_window->show();
        QVERIFY(!m_window->isRemote());
        // Greedy, short, a fixed seed: the same request twice gives the same text.
        m_window->findChild<QDoubleSpinBox*>(QStringLiteral("temperatureSpin"))->setValue(0);
        m_window->findChild<QSpinBox*>(QStringLiteral("maxTokensSpin"))->setValue(24);
        m_window->findChild<QCheckBox*>(QStringLiteral("fixedSeedCheck"))->setChecked(true);

        // A wrong key: the server's 401 message, the dialog stays open.
        ConnectServerDialog* dialog = openDialog(m_serve->baseUrl(), QStringLiteral("wrong"));
        QVERIFY(dialog && dialog->isVisible());
        QCOMPARE(dialog->keyEdit()->echoMode(), QLineEdit::Password);
        QTest::mouseClick(dialog->listButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(dialog->statusText().contains(QLatin1String("Could not reach")), uitest::kTimeoutMs);
        QVERIFY2(dialog->statusText().contains(QLatin1String("401")), qPrintable(dialog->statusText()));
        QVERIFY2(dialog->statusText().contains(QLatin1String("API key is not valid")), qPrintable(dialog->statusText()));
        QCOMPARE(dialog->modelCombo()->count(), 0);

        // The right key: List models fills the combo from /v1/models; Connect switches the chat.
        dialog->keyEdit()->clear();
        QTest::keyClicks(dialog->keyEdit(), kApiKey);
        QTest::mouseClick(dialog->listButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(dialog->modelCombo()->count() > 0, uitest::kTimeoutMs);
        QVERIFY2(dialog->statusText().contains(QLatin1String("workbench server")), qPrintable(dialog->statusText()));
        const QString model = dialog->modelCombo()->currentText();
        QVERIFY(!model.isEmpty());
        QTest::mouseClick(dialog->connectButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->isRemote(), uitest::kTimeoutMs);
        QTRY_VERIFY(!m_window->connectDialog());  // closed and deleted
        const QString where = QStringLiteral("workbench at %1").arg(m_serve->baseUrl());
        QVERIFY2(m_window->statusText().contains(QStringLiteral("remote: ") + where), qPrintable(m_window->statusText()));
        QVERIFY2(m_window->statusText().contains(model), qPrintable(m_window->statusText()));
        QVERIFY(m_window->useLocalAction()->isEnabled());
        // A local model that finishes loading while the chat talks to the server (the start-up
        // load, an Apply): the chat stays with the server, and its turns stay recorded under the
        // server's configuration (issue 48: they were filed under the local one).
        QSignalSpy localLoaded(m_window->client(), &EngineClient::modelLoaded);
        m_window->startWithModel(uitest::modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(localLoaded.count() == 1, uitest::kTimeoutMs);
        QVERIFY(m_window->isRemote());

        // A turn typed into the chat and sent with Enter.
        ChatPage* chat = m_window->chatPage();
        RemoteChatClient* remote = m_window->remoteClient();
        QSignalSpy finished(remote, &ChatBackend::replyFinished);
        QSignalSpy samples(remote, &ChatBackend::samplesArrived);
        QSignalSpy kv(remote, &RemoteChatClient::kvUsageChanged);
        const QString prompt = QStringLiteral("Name three colours.");
        chat->input()->setFocus();
        QTest::keyClicks(chat->input(), prompt);
        QTest::keyClick(chat->input(), Qt::Key_Return);
        QVERIFY(remote->isGenerating());
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, uitest::kTimeoutMs);
        const auto summary = finished.at(0).at(0).value<ReplySummary>();
        QVERIFY(summary.remote.has_value());
        QVERIFY(summary.remote->cutOff.isEmpty());

        // The same request straight through wbremote: greedy, so the same text.
        wbremote::RemoteEndpoint endpoint;
        endpoint.base_url = m_serve->baseUrl().toStdString();
        endpoint.api_key = kApiKey.toStdString();
        wbremote::RemoteRequest request;
        request.model = model.toStdString();
        request.messages = {{"user", prompt.toStdString()}};
        request.generation = chat->configPanel()->generationRequest();
        const wbremote::RemoteCompletion direct = wbremote::stream_completion(endpoint, request);
        QVERIFY2(direct.ok, direct.error.c_str());
        QVERIFY(!direct.text.empty());
        QCOMPARE(chat->lastReply(), QString::fromStdString(direct.text));
        QCOMPARE(summary.text, QString::fromStdString(direct.text));
        QCOMPARE(summary.stopReasonName, QString::fromStdString(direct.finish_reason));

        // Its footer, as for a local reply, names the remote.
        const QString footer = chat->transcript()->footerOf(chat->transcript()->messageCount() - 1);
        qInfo().noquote() << "remote reply's footer:" << footer << "| KV polls answered:" << kv.count();
        QVERIFY2(QRegularExpression(QStringLiteral("TTFT [0-9]+ ms")).match(footer).hasMatch(), qPrintable(footer));
        QVERIFY2(footer.contains(QStringLiteral("remote: ") + where), qPrintable(footer));
        QVERIFY2(footer.contains(QStringLiteral("%1 tokens").arg(summary.metrics.n_generated)), qPrintable(footer));
        QVERIFY2(footer.contains(QLatin1String("KV")), qPrintable(footer));
        QVERIFY(summary.metrics.ttft_ms > 0);
        QVERIFY(summary.metrics.n_generated > 0);
        QVERIFY(summary.metrics.n_prompt_tokens > 0);  // the server's usage
        // Per-piece timing reached the charts' feed; the server's /metrics was read while it streamed
        // when a poll answered before the end (a 24-token reply may beat it: then none is fine).
        QVERIFY(!samples.isEmpty());
        QVERIFY(samples.at(0).at(0).value<QList<TokenSample>>().first().firstOfReply);
        for (const auto& args : kv) QVERIFY(args.at(0).toBool());  // ours reports workbench:kv_cache_usage_perc

        // The server's KV share is charted in place of the local KV-vs-tokens chart: each poll a
        // point (one is emitted here as a poll would, so the check does not race the reply).
        MetricsPanel* panel = chat->metricsPanel();
        QVERIFY(panel->serverKvChart()->isVisible());
        QVERIFY(!panel->kvChart()->isVisible());
        const int points = panel->serverKvChart()->series()->count();
        emit remote->kvUsageChanged(true, 0.25);
        QCOMPARE(panel->serverKvChart()->series()->count(), points + 1);
        QCOMPARE(panel->serverKvChart()->series()->at(points).y(), 25.0);

        // Recorded in the history like a local reply, under the server's configuration.
        QTRY_VERIFY_WITH_TIMEOUT(m_window->recorder()->sessionId() > 0, uitest::kTimeoutMs);
        const workbench::RowId session = m_window->recorder()->sessionId();
        std::vector<workbench::RunRecord> runs;
        workbench::ConfigurationRecord configuration;
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                     workbench::StoreOptions options;
                                     options.path = workbench::default_history_path();
                                     options.read_only = true;
                                     auto store = workbench::Store::open(options);
                                     if (!store.ok()) return false;
                                     auto r = (*store)->load_runs(session);
                                     if (!r.ok() || r->empty()) return false;
                                     runs = *r;
                                     auto c = (*store)->load_configuration(runs.front().configuration_id);
                                     if (c.ok()) configuration = *c;
                                     return c.ok();
                                 }()),
                                 uitest::kTimeoutMs);
        QCOMPARE(runs.size(), size_t(1));
        QCOMPARE(runs.front().provenance.backend, std::string("remote"));
        QCOMPARE(runs.front().n_tokens_generated, summary.metrics.n_generated);
        QCOMPARE(configuration.backend, std::string("remote"));
        QCOMPARE(configuration.variant, std::string("workbench"));
        QVERIFY(configuration.config_json.find(m_serve->baseUrl().toStdString()) != std::string::npos);

        // The server goes away mid-conversation: the next turn fails with a clear message in the
        // chat, its text back in the input box, and the window goes on.
        m_serve->stop();
        QSignalSpy failed(remote, &ChatBackend::replyFailed);
        QTest::keyClicks(chat->input(), QStringLiteral("And three more?"));
        QTest::keyClick(chat->input(), Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, uitest::kTimeoutMs);
        const QString error = failed.at(0).at(0).toString();
        QVERIFY2(error.contains(QLatin1String("cannot connect to http://127.0.0.1:")), qPrintable(error));
        TokenStreamView* view = chat->transcript();
        QCOMPARE(view->textOf(view->messageCount() - 1), error);
        QCOMPARE(chat->input()->toPlainText(), QStringLiteral("And three more?"));
        QCOMPARE(chat->history().size(), size_t(2));
        QVERIFY(m_window->isVisible());
        QTRY_VERIFY(m_window->findChild<QPushButton*>(QStringLiteral("sendButton"))->isEnabled());
    }

    void closedPortIsAClearErrorAndLocalComesBack() {
        if (!m_window) QSKIP("runs after chatsWithServeThroughTheWindow");
        ConnectServerDialog* dialog = openDialog(QStringLiteral("http://127.0.0.1:1/v1"), QString());
        QVERIFY(dialog);
        QTest::mouseClick(dialog->connectButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(dialog->statusText().contains(QLatin1String("Could not reach")), uitest::kTimeoutMs);
        QVERIFY2(dialog->statusText().contains(QLatin1String("127.0.0.1:1")), qPrintable(dialog->statusText()));
        QVERIFY(dialog->isVisible());  // not connected: the dialog waits for a better URL
        QVERIFY(m_window->remoteClient()->target().url.contains(QString::number(m_serve->port)));
        dialog->reject();
        QTRY_VERIFY(!m_window->connectDialog());

        // File → Use local model: the chat talks to the engine again.
        m_window->useLocalAction()->trigger();
        QVERIFY(!m_window->isRemote());
        QVERIFY(!m_window->statusText().contains(QLatin1String("remote:")));
        QVERIFY(!m_window->useLocalAction()->isEnabled());
        QVERIFY(m_window->findChild<MetricsPanel*>()->kvChart()->isVisibleTo(m_window.get()));   // the local KV chart is back
        QVERIFY(m_window->isVisible());
        m_window.reset();
        m_serve.reset();
    }

    // A server whose model thinks and calls (vLLM's delta fields): the chat shows the thinking
    // folded and the call as a block; the pasted result goes back as role tool with the server's
    // call id beside the assistant's tool_calls, and the tools offered go with each turn.
    void remoteThinkingAndToolCalls() {
        wbtest::LoopbackHttp server;
        std::mutex lock;
        std::vector<workbench::Json> bodies;
        server.http.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(R"({"object":"list","data":[{"id":"thinker","object":"model","owned_by":"vllm"}]})", "application/json");
        });
        server.http.Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
            size_t turn = 0;
            {
                std::lock_guard<std::mutex> hold(lock);
                bodies.push_back(*workbench::parse_json(req.body));
                turn = bodies.size();
            }
            if (turn == 2) {   // the results' first sending fails
                res.status = 500;
                res.set_content("upstream exploded", "text/plain");
                return;
            }
            res.set_chunked_content_provider("text/event-stream", [turn](size_t, httplib::DataSink& sink) {
                auto delta = [](const workbench::Json& d, const char* finish = nullptr) {
                    workbench::Json j = {{"choices", {{{"index", 0}, {"delta", d}}}}};
                    if (finish) j["choices"][0]["finish_reason"] = finish;
                    return "data: " + workbench::dump_json(j) + "\n\n";
                };
                std::string out = delta({{"reasoning_content", "The user asks about Oslo."}});
                if (turn == 1)
                    out += delta({{"tool_calls", {{{"index", 0}, {"id", "call_42"}, {"type", "function"},
                                                   {"function", {{"name", "get_weather"}, {"arguments", "{\"city\": \"Oslo\"}"}}}}}}}) +
                           delta(workbench::Json::object(), "tool_calls");
                else
                    out += delta({{"content", "It is cold in Oslo."}}, "stop");
                out += "data: [DONE]\n\n";
                sink.write(out.data(), out.size());
                sink.done();
                return true;
            });
        });
        server.start();
        QSettings settings;
        settings.setValue(QStringLiteral("chat/tools"), ToolsDialog::exampleTools());
        settings.setValue(QStringLiteral("chat/offerTools"), true);

        EngineClient local;   // no model: the page talks to the server only
        ChatPage page(&local);
        RemoteChatClient remote;
        remote.setTarget({QString::fromStdString(server.url()), QString(), QStringLiteral("thinker"), QStringLiteral("vllm"), 0});
        page.setBackend(&remote);
        QSignalSpy finished(&remote, &ChatBackend::replyFinished);
        page.input()->setPlainText(QStringLiteral("Weather in Oslo?"));
        page.send();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, uitest::kTimeoutMs);
        TokenStreamView* view = page.transcript();
        const int reply = view->messageCount() - 1;
        QCOMPARE(view->thinkingOf(reply), QStringLiteral("The user asks about Oslo."));
        QCOMPARE(view->toolCallCount(reply), 1);
        QCOMPARE(page.history().back().tool_calls.size(), size_t(1));
        QCOMPARE(page.history().back().tool_calls[0].id, std::string("call_42"));
        QVERIFY(page.findChild<ToolResultBar*>(QStringLiteral("toolResultBar"))->isVisibleTo(&page));

        // A failed turn: the result leaves the conversation, the call waits again, the text is kept.
        QSignalSpy failed(&remote, &ChatBackend::replyFailed);
        page.input()->setPlainText(QStringLiteral("-4 C, snow"));
        page.send();
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, uitest::kTimeoutMs);
        QCOMPARE(page.input()->toPlainText(), QStringLiteral("-4 C, snow"));
        QCOMPARE(page.history().size(), size_t(2));
        QVERIFY(page.findChild<ToolResultBar*>(QStringLiteral("toolResultBar"))->isVisibleTo(&page));
        QTRY_VERIFY(!remote.isBusy());
        page.send();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 2, uitest::kTimeoutMs);
        QCOMPARE(QString::fromStdString(page.history().back().content), QStringLiteral("It is cold in Oslo."));
        std::lock_guard<std::mutex> hold(lock);
        QCOMPARE(bodies.size(), size_t(3));
        QCOMPARE(bodies[0]["tools"].size(), size_t(2));
        const workbench::Json& sent = bodies[2]["messages"];
        QCOMPARE(sent.size(), size_t(3));
        QVERIFY(sent[1]["role"] == workbench::Json("assistant"));
        QVERIFY(sent[1]["tool_calls"][0]["id"] == workbench::Json("call_42"));
        QVERIFY(sent[1]["tool_calls"][0]["function"]["name"] == workbench::Json("get_weather"));
        QVERIFY(sent[2]["role"] == workbench::Json("tool"));
        QVERIFY(sent[2]["tool_call_id"] == workbench::Json("call_42"));
        QVERIFY(sent[2]["content"] == workbench::Json("-4 C, snow"));
    }
};

WB_UI_TEST_MAIN(TestRemoteChat, false)
#include "test_ui_remote_chat.moc"
