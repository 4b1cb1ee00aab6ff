// Tool calls in the chat, on the real window offscreen and the real default model: tools set in
// the Tools dialog (a mistake named by its field, the example inserted, a call required), a
// message's reply comes back as a call — shown as a call block, the bar above the input naming it —
// the pasted result goes back as a `tool` message quoting the call's id, and the model answers it
// freely; the session database keeps the turn (the call with its id and arguments, the result
// with the id), and History → Continue brings back the call block and the result. Stop leaves no
// call waiting.
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QTimer>
#include <functional>
#include <optional>

#include "tests/ui/ui_chat_support.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/store_client.h"
#include "ui/history/history_recorder.h"
#include "ui/main_window.h"
#include "ui/pages/chat_page.h"
#include "ui/pages/tool_result_bar.h"
#include "ui/pages/tools_dialog.h"
#include "widgets/token_stream_view.h"
#include "workbench/json.h"
#include "workbench/store.h"

class TestToolCalls : public QObject {
    Q_OBJECT
    MainWindow* m_window = nullptr;

    ChatPage* chat() const { return m_window->chatPage(); }
    template <typename T>
    T* child(QObject* in, const char* name) const {
        T* w = in->findChild<T*>(QString::fromLatin1(name));
        if (!w) qFatal("no child '%s'", name);
        return w;
    }

    ReplySummary send(const QString& text) { return uitest::sendAndWait(m_window, text); }
    template <typename T>
    workbench::Result<T> query(std::function<workbench::Result<T>(workbench::Store&)> task) {
        return uitest::storeQuery<T>(m_window, this, std::move(task));
    }

    // Opens the Tools dialog from its button and lets `fill` work in it before it closes.
    void withToolsDialog(const std::function<void(ToolsDialog*)>& fill) {
        QTimer::singleShot(0, this, [this, fill] {
            auto* dialog = m_window->findChild<ToolsDialog*>(QStringLiteral("toolsDialog"));
            if (!dialog) qFatal("no tools dialog");
            fill(dialog);
        });
        QTest::mouseClick(child<QPushButton>(m_window, "toolsButton"), Qt::LeftButton);
    }

private slots:
    void initTestCase() {
        m_window = new MainWindow();
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
        QSignalSpy loaded(m_window->client(), &EngineClient::modelLoaded);
        m_window->startWithModel(uitest::modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->store()->isOpen(), uitest::kTimeoutMs);
        child<QDoubleSpinBox>(m_window, "temperatureSpin")->setValue(0);
        child<QSpinBox>(m_window, "maxTokensSpin")->setValue(60);
    }
    void cleanupTestCase() { delete m_window; }

    void badToolsAreRefusedNamingTheField() {
        QString error;
        bool stillOpen = false;
        withToolsDialog([&](ToolsDialog* d) {
            child<QCheckBox>(d, "offerToolsCheck")->setChecked(true);
            child<QPlainTextEdit>(d, "toolsEdit")->setPlainText(R"([{"type": "function", "function": {"name": "has space"}}])");
            d->accept();   // refused: stays open with the reason
            error = child<QLabel>(d, "toolsError")->text();
            stillOpen = d->isVisible();
            d->reject();
        });
        QVERIFY2(error.contains("tools[0].function.name"), qPrintable(error));
        QVERIFY(stillOpen);
        QVERIFY(ToolsDialog::offeredTools().isEmpty());
        QCOMPARE(child<QPushButton>(m_window, "toolsButton")->text(), tr("Tools…"));
    }

    void aRequiredCallIsAnsweredWithAPastedResult() {
        withToolsDialog([&](ToolsDialog* d) {
            QTest::mouseClick(child<QPushButton>(d, "toolsExampleButton"), Qt::LeftButton);
            child<QCheckBox>(d, "requireToolCallCheck")->setChecked(true);
            d->accept();
        });
        QCOMPARE(ToolsDialog::offeredCount(), 2);
        QCOMPARE(child<QPushButton>(m_window, "toolsButton")->text(), tr("Tools (%1)…").arg(2));

        send("What is the weather in Paris right now?");
        auto* view = chat()->transcript();
        const int replyIndex = view->messageCount() - 1;
        QVERIFY(view->toolCallCount(replyIndex) >= 1);
        const workbench::ChatMessage call = chat()->history().back();
        QCOMPARE(QString::fromStdString(call.role), QString("assistant"));
        QVERIFY(!call.tool_calls.empty());
        const workbench::ToolCall first = call.tool_calls.front();
        QVERIFY(first.name == "get_weather" || first.name == "calculate");
        QVERIFY(QString::fromStdString(first.id).startsWith("call_"));
        QVERIFY(workbench::parse_json(first.arguments).ok());   // the grammar kept them JSON
        auto* bar = child<ToolResultBar>(m_window, "toolResultBar");
        QVERIFY(bar->isVisible());
        QVERIFY2(bar->text().contains(QString::fromStdString(first.name)), qPrintable(bar->text()));

        // Each call answered in turn; after the last, the model answers (freely: no call required).
        const size_t n_calls = call.tool_calls.size();
        QSignalSpy finished(m_window->client(), &EngineClient::replyFinished);
        for (size_t i = 0; i < n_calls; ++i) {
            chat()->input()->setPlainText(QStringLiteral("18 degrees Celsius, sunny"));
            QTest::keyClick(chat()->input(), Qt::Key_Return);
        }
        QVERIFY(QTest::qWaitFor([&] { return finished.count() == 1; }, uitest::kTimeoutMs));
        QVERIFY(m_window->store()->waitIdle(uitest::kTimeoutMs));
        const ChatHistory& h = chat()->history();
        QCOMPARE(h.size(), size_t(3) + n_calls);
        for (size_t i = 0; i < n_calls; ++i) {
            const workbench::ChatMessage& result = h[2 + i];
            QCOMPARE(QString::fromStdString(result.role), QString("tool"));
            QCOMPARE(result.tool_call_id, call.tool_calls[i].id);
            QCOMPARE(QString::fromStdString(result.content), QString("18 degrees Celsius, sunny"));
        }
        QCOMPARE(QString::fromStdString(h.back().role), QString("assistant"));
        // The result shows under the call it answers (the transcript may hold notes too).
        bool shown = false;
        for (int i = 0; i < view->messageCount(); ++i)
            shown = shown || (view->textOf(i).contains(QString::fromStdString("`" + first.name + "` returned")) &&
                              view->textOf(i).contains("18 degrees Celsius, sunny"));
        QVERIFY(shown);

        // The session holds the turn as the chat does.
        const workbench::RowId session = m_window->recorder()->sessionId();
        QVERIFY(session != 0);
        auto stored = query<std::vector<workbench::MessageRecord>>([session](workbench::Store& s) { return s.load_messages(session); });
        QVERIFY(stored.ok());
        QCOMPARE(stored->size(), h.size());
        QCOMPARE((*stored)[1].tool_calls.size(), n_calls);
        QCOMPARE((*stored)[1].tool_calls[0].id, first.id);
        QCOMPARE((*stored)[1].tool_calls[0].arguments, first.arguments);
        QCOMPARE((*stored)[2].tool_call_id, first.id);

        // Continue brings the calls and results back into the chat.
        QSignalSpy continued(m_window, &MainWindow::sessionContinued);
        m_window->continueSession(session, true);
        QTRY_VERIFY_WITH_TIMEOUT(continued.count() == 1, uitest::kTimeoutMs);
        QVERIFY(continued.at(0).at(1).toBool());
        QCOMPARE(chat()->history().size(), h.size());
        QCOMPARE(chat()->history()[1].tool_calls.size(), n_calls);
        int blocks = 0;
        for (int i = 0; i < view->messageCount(); ++i) blocks += view->toolCallCount(i);
        QVERIFY(blocks >= static_cast<int>(n_calls));
    }

    void stoppingLeavesNoCallWaiting() {
        chat()->newChat();
        QSignalSpy finished(m_window->client(), &EngineClient::replyFinished);
        chat()->input()->setPlainText(QStringLiteral("What is 12 times 7?"));
        QTest::keyClick(chat()->input(), Qt::Key_Return);
        chat()->stop();
        QVERIFY(QTest::qWaitFor([&] { return finished.count() == 1; }, uitest::kTimeoutMs));
        QVERIFY(!child<ToolResultBar>(m_window, "toolResultBar")->isVisible());
    }
};

WB_UI_TEST_MAIN(TestToolCalls, true)
#include "test_ui_tool_calls.moc"
