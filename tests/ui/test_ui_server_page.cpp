// The Server page. On the real default model: Start (clicked) serves the chat's model through
// workbench-cli serve on a port the OS picks on 127.0.0.1, /health answers 200, one real chat
// completion over loopback shows in the page's live figures (completed ≥ 1, tokens/s > 0 at some
// poll), the curl example names the URL, Stop ends the process, a port in use shows the server's
// error, and destroying the window ends a running server. Without a model: the /metrics line
// parser, the curl text's quoting, and Start off with its reason while no model is loaded.
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTcpServer>
#include <QTest>
#include <cmath>
#include <memory>

#include "tests/skip_missing.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/main_window.h"
#include "ui/pages/server_metrics_text.h"
#include "ui/pages/server_page.h"

namespace {

using servermetrics::parseLine;

// The reply to one loopback request, waited for; the caller owns it.
std::unique_ptr<QNetworkReply> fetch(QNetworkAccessManager& net, const QUrl& url, const QByteArray& postBody = {}) {
    QNetworkRequest request(url);
    QNetworkReply* reply = nullptr;
    if (postBody.isNull()) {
        reply = net.get(request);
    } else {
        request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
        reply = net.post(request, postBody);
    }
    // One that never ends is aborted: it finishes with an error the caller's checks report.
    if (!QTest::qWaitFor([reply] { return reply->isFinished(); }, uitest::kTimeoutMs)) reply->abort();
    return std::unique_ptr<QNetworkReply>(reply);
}

int httpStatus(const QNetworkReply& reply) { return reply.attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(); }

// A /proc entry lasts until the child is reaped, so its absence means the server is gone for good.
bool processExists(qint64 pid) { return pid > 0 && QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid)); }

}  // namespace

class TestServerPage : public QObject {
    Q_OBJECT

    // A window with the default model loaded in the chat (a short context: the server loads its own copy).
    std::unique_ptr<MainWindow> loadedWindow() {
        auto window = std::make_unique<MainWindow>();
        window->show();
        window->findChild<QSpinBox*>("contextSpin")->setValue(256);
        QSignalSpy loaded(window->client(), &EngineClient::modelLoaded);
        window->startWithModel(uitest::modelPath());
        if (!QTest::qWaitFor([&] { return loaded.count() == 1; }, uitest::kTimeoutMs)) return nullptr;
        window->showPage("Server");
        return window;
    }

private slots:
    void metricsLinesParse() {
        auto s = parseLine(u"workbench:num_requests_running{model_name=\"X\"} 2");
        QVERIFY(s);
        QCOMPARE(s->name, QStringLiteral("workbench:num_requests_running"));
        QCOMPARE(s->labels, QStringLiteral("model_name=\"X\""));
        QCOMPARE(s->value, 2.0);
        // No labels; an exponent; a timestamp after the value; surrounding blanks.
        s = parseLine(u"  up 1.5e3 1700000000000 ");
        QVERIFY(s);
        QCOMPARE(s->name, QStringLiteral("up"));
        QVERIFY(s->labels.isEmpty());
        QCOMPARE(s->value, 1500.0);
        // A label value holding '}', blanks and escaped quotes does not end the labels.
        s = parseLine(u"workbench:kv_cache_usage_bytes{model_name=\"a} \\\"b\\\" c\",x=\"y\"}\t1234");
        QVERIFY(s);
        QCOMPARE(s->labels, QStringLiteral("model_name=\"a} \\\"b\\\" c\",x=\"y\""));
        QCOMPARE(s->value, 1234.0);
        s = parseLine(u"h_bucket{le=\"+Inf\"} +Inf");
        QVERIFY(s && std::isinf(s->value) && s->value > 0);
        s = parseLine(u"g NaN");
        QVERIFY(s && std::isnan(s->value));
        QVERIFY(parseLine(u"g -Inf")->value < 0);
        // Not samples.
        for (const char16_t* bad : {u"", u"   ", u"# HELP workbench:num_requests_running Sequences.",
                                    u"# TYPE workbench:num_requests_running gauge", u"m{a=\"x\" 1", u"m{a=\"x} 1",
                                    u"m{a=\"x\"}", u"m{a=\"x\"}1", u"9bad 1", u"m abc", u"m", u"{a=\"x\"} 1"})
            QVERIFY2(!parseLine(bad), qPrintable(QString::fromUtf16(bad)));

        // A scrape as the server writes it (app/server/server_metrics.cpp): HELP/TYPE lines,
        // histograms, and the figures the page shows.
        const QString scrape = QStringLiteral(
            "# HELP workbench:num_requests_running Sequences in the running batch.\n"
            "# TYPE workbench:num_requests_running gauge\n"
            "workbench:num_requests_running{model_name=\"X\"} 2\n"
            "workbench:num_requests_waiting{model_name=\"X\"} 0\n"
            "workbench:kv_cache_usage_perc{model_name=\"X\"} 0.01\n"
            "workbench:kv_cache_usage_bytes{model_name=\"X\"} 1234\n"
            "workbench:prompt_tokens_total{model_name=\"X\"} 45\n"
            "workbench:generation_tokens_total{model_name=\"X\"} 123\n"
            "workbench:request_success_total{model_name=\"X\"} 7\n"
            "workbench:time_to_first_token_seconds_bucket{model_name=\"X\",le=\"0.001\"} 0\n"
            "workbench:time_to_first_token_seconds_count{model_name=\"X\"} 7\n"
            "garbage line\n");
        const servermetrics::Figures f = servermetrics::parseFigures(scrape);
        QCOMPARE(f.running.value_or(-1), 2.0);
        QCOMPARE(f.waiting.value_or(-1), 0.0);
        QCOMPARE(f.kvFraction.value_or(-1), 0.01);
        QCOMPARE(f.kvBytes.value_or(-1), 1234.0);
        QCOMPARE(f.promptTokens.value_or(-1), 45.0);
        QCOMPARE(f.generationTokens.value_or(-1), 123.0);
        QCOMPARE(f.completed.value_or(-1), 7.0);
        const servermetrics::Figures empty = servermetrics::parseFigures(u"# nothing here\n");
        QVERIFY(!empty.running && !empty.completed && !empty.generationTokens);

        // tokens/s: the counter's growth over the time between scrapes; 0 after a restart.
        servermetrics::Figures later = f;
        later.generationTokens = 173;
        QCOMPARE(servermetrics::tokensPerSecond(f, later, 2.0).value_or(-1), 25.0);
        QCOMPARE(servermetrics::tokensPerSecond(later, f, 2.0).value_or(-1), 0.0);
        QVERIFY(!servermetrics::tokensPerSecond(empty, later, 1.0));
    }

    void curlExampleQuotesForTheShell() {
        const QString plain = ServerPage::curlExample("http://127.0.0.1:8080", QString(), "SmolLM2");
        QVERIFY(plain.contains("'http://127.0.0.1:8080/v1/chat/completions'"));
        QVERIFY(!plain.contains("Authorization"));
        QVERIFY2(plain.contains("-d '{\"model\":\"SmolLM2\",\"messages\":"), qPrintable(plain));
        QVERIFY(ServerPage::curlExample("http://h:1", QString(), "a\"b").contains("{\"model\":\"a\\\"b\","));
        const QString keyed = ServerPage::curlExample("http://127.0.0.1:8080", "it's", "SmolLM2");
        QVERIFY2(keyed.contains("-H 'Authorization: Bearer it'\\''s'"), qPrintable(keyed));
    }

    void startIsOffWithoutAModel() {
        EngineClient client;
        ServerPage page(&client);
        QVERIFY(!page.startButton()->isEnabled());
        QVERIFY(!page.stopButton()->isEnabled());
        QVERIFY2(page.statusText().contains("Load a model"), qPrintable(page.statusText()));
        QCOMPARE(page.portSpin()->value(), 8080);
        QCOMPARE(page.hostEdit()->text(), QStringLiteral("127.0.0.1"));
        QCOMPARE(page.apiKeyEdit()->echoMode(), QLineEdit::Password);
    }

    void servesTheChatsModel() {
        if (uitest::modelPath().isEmpty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QVERIFY2(!ServerProcess::defaultProgram().isEmpty(), "workbench-cli is not next to the test");
        auto window = loadedWindow();
        QVERIFY2(window, "the chat's model did not load");
        ServerPage* page = window->serverPage();
        QVERIFY(page->isVisible());
        QVERIFY(page->startButton()->isEnabled());
        QVERIFY(!page->stopButton()->isEnabled());

        // A port another program holds: the server's own error shows, and Start is offered again.
        QTcpServer holder;
        QVERIFY(holder.listen(QHostAddress::LocalHost, 0));
        page->portSpin()->setValue(holder.serverPort());
        QTest::mouseClick(page->startButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!page->process()->isRunning() && page->startButton()->isEnabled(), uitest::kTimeoutMs);
        QVERIFY2(page->statusText().contains(QStringLiteral("cannot listen on 127.0.0.1:%1").arg(holder.serverPort())),
                 qPrintable(page->statusText()));
        holder.close();

        double bestRate = 0;
        connect(page, &ServerPage::figuresUpdated, this, [&] { bestRate = std::max(bestRate, page->tokensPerSecond().value_or(0)); });
        page->portSpin()->setValue(0);
        QTest::mouseClick(page->startButton(), Qt::LeftButton);
        QVERIFY(page->process()->isRunning());
        QVERIFY(!page->startButton()->isEnabled());
        QVERIFY(page->stopButton()->isEnabled());
        QVERIFY(!page->portSpin()->isEnabled());
        QVERIFY2(page->statusText().startsWith("Loading"), qPrintable(page->statusText()));
        const qint64 pid = page->process()->processId();
        QVERIFY(processExists(pid));
        QTRY_VERIFY_WITH_TIMEOUT(page->statusText().startsWith("Serving at http://127.0.0.1:"), uitest::kTimeoutMs);
        const QString url = page->urlText();
        QVERIFY2(url.startsWith("http://127.0.0.1:") && !url.endsWith(":0"), qPrintable(url));
        QCOMPARE(page->statusText(), QStringLiteral("Serving at %1").arg(url));
        QVERIFY2(page->curlText().contains(url + "/v1/chat/completions"), qPrintable(page->curlText()));
        QVERIFY(!page->curlText().contains("Authorization"));

        QNetworkAccessManager net;
        net.setProxy(QNetworkProxy::NoProxy);
        auto health = fetch(net, QUrl(url + "/health"));
        QCOMPARE(httpStatus(*health), 200);

        const QJsonObject body{{"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "Name three colors."}}}},
                               {"max_tokens", 16},
                               {"temperature", 0}};
        auto reply = fetch(net, QUrl(url + "/v1/chat/completions"), QJsonDocument(body).toJson(QJsonDocument::Compact));
        const QByteArray answer = reply->readAll();
        QVERIFY2(httpStatus(*reply) == 200, answer.constData());
        const QJsonObject json = QJsonDocument::fromJson(answer).object();
        QVERIFY2(json.value("usage").toObject().value("completion_tokens").toInt() > 0, answer.constData());
        QVERIFY(!json.value("choices").toArray().at(0).toObject().value("message").toObject().value("content").toString().isEmpty());

        // The next polls of /metrics show the completion and the tokens it generated.
        QTRY_VERIFY_WITH_TIMEOUT(page->completedText().toInt() >= 1, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(bestRate > 0, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(window->findChild<QLabel*>("serverRunning")->text(), QStringLiteral("0"), 10000);

        QTest::mouseClick(page->stopButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!page->process()->isRunning(), 15000);
        QVERIFY(!processExists(pid));
        QCOMPARE(page->statusText(), QStringLiteral("Stopped."));
        QVERIFY(page->startButton()->isEnabled());
        QVERIFY(!page->stopButton()->isEnabled());
        QVERIFY(page->urlText().isEmpty());
    }

    void destroyingTheWindowStopsTheServer() {
        if (uitest::modelPath().isEmpty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto window = loadedWindow();
        QVERIFY2(window, "the chat's model did not load");
        ServerPage* page = window->serverPage();
        page->portSpin()->setValue(0);
        QTest::mouseClick(page->startButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!page->urlText().isEmpty(), uitest::kTimeoutMs);
        const qint64 pid = page->process()->processId();
        QVERIFY(processExists(pid));
        window.reset();
        QVERIFY(!processExists(pid));
    }
};

WB_UI_TEST_MAIN(TestServerPage, false)
#include "test_ui_server_page.moc"
