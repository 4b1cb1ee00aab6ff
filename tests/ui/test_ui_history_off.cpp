// When the history cannot be kept the app says so and carries on: a database file that is not a
// database, and a path whose folder cannot be created, each show "history is off: <reason>" above
// the chat, and the chat still answers (the conversation lives in memory). Real default model.
#include <QDoubleSpinBox>
#include <QFile>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/store_client.h"
#include "ui/history/history_page.h"
#include "ui/main_window.h"
#include "ui/pages/chat_page.h"

class TestHistoryOff : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    // A window on `dbPath`: the notice says history is off, and a turn still gets its reply.
    void chatWorksWithoutHistory(const QString& dbPath, const QString& reasonPart) {
        qputenv("WORKBENCH_HISTORY_DB", dbPath.toLocal8Bit());
        MainWindow window;
        window.show();
        window.findChild<QSpinBox*>("contextSpin")->setValue(256);
        QSignalSpy loaded(window.client(), &EngineClient::modelLoaded);
        window.startWithModel(uitest::modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(!window.chatPage()->historyNoticeText().isEmpty(), uitest::kTimeoutMs);
        const QString notice = window.chatPage()->historyNoticeText();
        QVERIFY2(notice.startsWith("history is off: ") && notice.contains(reasonPart, Qt::CaseInsensitive),
                 qPrintable(notice));
        QVERIFY(!window.store()->isOpen());

        window.findChild<QDoubleSpinBox*>("temperatureSpin")->setValue(0);
        window.findChild<QSpinBox*>("maxTokensSpin")->setValue(8);
        QSignalSpy finished(window.client(), &EngineClient::replyFinished);
        window.chatPage()->input()->setPlainText("Say hello.");
        QTest::keyClick(window.chatPage()->input(), Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, uitest::kTimeoutMs);
        QCOMPARE(window.chatPage()->history().size(), size_t{2});
        // The History page says why it is empty.
        window.showPage("History");
        QVERIFY2(window.historyPage()->statusText().contains("History is off"), qPrintable(window.historyPage()->statusText()));
        window.showPage("Chat");
    }

private slots:
    void corruptDatabase() {
        const QString path = m_dir.filePath("corrupt.db");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QByteArray junk(64 * 1024, '\0');
        for (int i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 131 + 7) % 251);
        f.write(junk);
        f.close();
        chatWorksWithoutHistory(path, "corrupt.db");
    }

    void folderCannotBeCreated() {
        // A regular file where the folder should be.
        const QString blocker = m_dir.filePath("blocker");
        QFile f(blocker);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        chatWorksWithoutHistory(blocker + "/history.db", "folder");
    }
};

WB_UI_TEST_MAIN(TestHistoryOff, true)
#include "test_ui_history_off.moc"
