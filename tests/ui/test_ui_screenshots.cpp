// Renders the main window offscreen to PNG after real replies: the chat with its footer, the
// live charts and the configuration panel (a sliding window chosen, its predicted KV beside full
// attention's; again in the dark theme as chat_dark.png), the KV chart once a 64-token window is
// applied, the chat at 1000×700 and 1600×1000 in both themes, a new chat's welcome, the Models page, the History page replaying a recorded session, and the Compare page after three configurations ran (and their
// quality was evaluated, when the engine measures it). Files go to $WB_SCREENSHOT_DIR
// (docs/screenshots/ when the README's pictures are refreshed), else to the build folder's screenshots/.
#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QLabel>
#include <QTest>

#include <httplib.h>

#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/measure_types.h"
#include "ui/compare/compare_config_form.h"
#include "ui/compare/compare_page.h"
#include "ui/history/history_page.h"
#include "ui/main_window.h"
#include "ui/pages/variants_map_page.h"
#include "ui/models/session_table_model.h"
#include "ui/pages/chat_page.h"
#include "ui/theme.h"

class TestScreenshots : public QObject {
    Q_OBJECT
    MainWindow* m_window = nullptr;
    QDir m_dir;

    template <typename T>
    T* child(const char* name) const {
        T* w = m_window->findChild<T*>(QString::fromLatin1(name));
        if (!w) qFatal("no child '%s'", name);
        return w;
    }

    void send(const QString& text) {
        QSignalSpy finished(m_window->client(), &EngineClient::replyFinished);
        m_window->chatPage()->input()->setPlainText(text);
        QTest::keyClick(m_window->chatPage()->input(), Qt::Key_Return);
        QVERIFY(QTest::qWaitFor([&] { return finished.count() == 1; }, uitest::kTimeoutMs));
    }

    void save(const QString& name) {
        QCoreApplication::processEvents();
        const QPixmap shot = m_window->grab();
        QVERIFY(!shot.isNull());
        QCOMPARE(shot.size(), m_window->size() * shot.devicePixelRatio());
        const QString path = m_dir.filePath(name);
        QVERIFY2(shot.save(path, "PNG"), qPrintable(path));
        // A blank picture would pass the checks above: the transcript must have drawn something.
        const QImage image = shot.toImage();
        QSet<QRgb> colors;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7) colors.insert(image.pixel(x, y));
        QVERIFY2(colors.size() > 20, qPrintable(QStringLiteral("%1 colors").arg(colors.size())));
        qInfo("saved %s", qPrintable(path));
    }

private slots:
    void initTestCase() {
        const QByteArray env = qgetenv("WB_SCREENSHOT_DIR");
        m_dir = QDir(env.isEmpty() ? QStringLiteral(WB_SCREENSHOT_DEFAULT_DIR) : QString::fromLocal8Bit(env));
        QVERIFY(m_dir.mkpath(QStringLiteral(".")));
        m_window = new MainWindow();
        m_window->resize(1440, 900);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
        child<QSpinBox>("contextSpin")->setValue(2048);
        QSignalSpy loaded(m_window->client(), &EngineClient::modelLoaded);
        m_window->startWithModel(uitest::modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        child<QDoubleSpinBox>("temperatureSpin")->setValue(0);
        child<QSpinBox>("maxTokensSpin")->setValue(120);
    }
    void cleanupTestCase() { delete m_window; }

    void chatAfterReplies() {
        send("What is the capital of France? Answer in one word.");
        send("Write a Python function that adds two numbers.");
        // The configuration panel with a variant chosen but not applied: its prediction shows.
        child<QComboBox>("attentionCombo")->setCurrentText("sliding");
        child<QSpinBox>("slidingWindow")->setValue(256);
        save(QStringLiteral("chat.png"));
    }

    // The same chat in the dark theme (View → Theme → Dark), then back to light for the rest.
    void chatDark() {
        m_window->theme()->setMode(ThemeController::Mode::Dark);
        save(QStringLiteral("chat_dark.png"));
        m_window->theme()->setMode(ThemeController::Mode::Light);
    }

    // The same chat in a 1000×700 window and a 1600×1000 one, light and dark (issue 24, item 11).
    void smallAndLargeWindows() {
        for (const QSize size : {QSize(1000, 700), QSize(1600, 1000)}) {
            m_window->resize(size);
            QTRY_COMPARE_WITH_TIMEOUT(m_window->size(), size, uitest::kTimeoutMs);
            const QString tag = size.width() == 1000 ? QStringLiteral("small") : QStringLiteral("large");
            save(QStringLiteral("chat_%1.png").arg(tag));
            m_window->theme()->setMode(ThemeController::Mode::Dark);
            save(QStringLiteral("chat_%1_dark.png").arg(tag));
            m_window->theme()->setMode(ThemeController::Mode::Light);
        }
        m_window->resize(1440, 900);
    }

    void slidingWindowApplied() {
        child<QSpinBox>("slidingWindow")->setValue(64);
        QSignalSpy loaded(m_window->client(), &EngineClient::modelLoaded);
        QTest::mouseClick(child<QPushButton>("applyButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        m_window->chatPage()->newChat();
        send("Count from 1 to 100, separated by commas.");
        send("Now count from 100 down to 1.");
        save(QStringLiteral("sliding.png"));
    }

    // A new chat: the welcome with its example prompts, in the small window.
    void welcome() {
        m_window->chatPage()->newChat();
        m_window->resize(1000, 700);
        QTRY_COMPARE_WITH_TIMEOUT(m_window->size(), QSize(1000, 700), uitest::kTimeoutMs);
        save(QStringLiteral("welcome.png"));
        m_window->resize(1440, 900);
    }

    // The Variants map on the committed standard sweep (docs/variants_sweep.jsonl) by retrieval
    // accuracy, the 64-token window selected.
    void variantsMap() {
        VariantsMapPage* page = m_window->variantsPage();
        QVERIFY(page->loadSweep(QStringLiteral(WB_SOURCE_DIR "/docs/variants_sweep.jsonl")));
        page->qualityMenu()->setCurrentIndex(page->qualityMenu()->findText(QStringLiteral("Retrieval accuracy")));
        page->selectRow(5);
        m_window->showPage(QStringLiteral("Variants map"));
        save(QStringLiteral("variants_map.png"));
        m_window->showPage(QStringLiteral("Chat"));
    }

    void modelsPage() {
        m_window->showPage(QStringLiteral("Models"));
        save(QStringLiteral("models.png"));
        m_window->showPage(QStringLiteral("Chat"));
    }

    // The Server page serving the chat's model on a free port, with a finished request counted.
    void serverPage() {
        m_window->showPage(QStringLiteral("Server"));
        m_window->findChild<QSpinBox*>(QStringLiteral("serverPort"))->setValue(0);
        QTest::mouseClick(m_window->findChild<QPushButton*>(QStringLiteral("serverStart")), Qt::LeftButton);
        auto* status = m_window->findChild<QLabel*>(QStringLiteral("serverStatus"));
        QTRY_VERIFY_WITH_TIMEOUT(status->text().startsWith(QLatin1String("Serving at http://127.0.0.1:")), uitest::kTimeoutMs);
        const QString url = status->text().section(QLatin1Char(' '), 2);
        httplib::Client client(url.toStdString());
        auto res = client.Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16})",
                               "application/json");
        QVERIFY(res && res->status == 200);
        QTest::qWait(2500);   // two polls of /metrics: the counts and tokens/s on the page
        save(QStringLiteral("server.png"));
        QTest::mouseClick(m_window->findChild<QPushButton*>(QStringLiteral("serverStop")), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->findChild<QPushButton*>(QStringLiteral("serverStart"))->isEnabled(), uitest::kTimeoutMs);
        m_window->showPage(QStringLiteral("Chat"));
    }

    void historyPage() {
        m_window->showPage(QStringLiteral("History"));
        HistoryPage* history = m_window->historyPage();
        QTRY_VERIFY_WITH_TIMEOUT(history->sessions()->rowCount() == 2, uitest::kTimeoutMs);
        QSignalSpy shown(history, &HistoryPage::sessionShown);
        // The sliding-window chat: its KV chart flattens in the replay too.
        qint64 newest = 0;
        for (int row = 0; row < history->sessions()->rowCount(); ++row)
            newest = std::max<qint64>(newest, history->sessions()->sessionAt(row)->id);
        history->selectSession(newest);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() == 1, uitest::kTimeoutMs);
        save(QStringLiteral("history.png"));
    }

    void comparePage() {
        m_window->showPage(QStringLiteral("Compare"));
        ComparePage* page = m_window->comparePage();
        page->form()->setRow(0, true, QStringLiteral("full"), QStringLiteral("f16"));
        page->form()->setRow(1, true, QStringLiteral("sliding:window=32,sinks=4"), QStringLiteral("f16"));
        page->form()->setRow(2, true, QStringLiteral("full"), QStringLiteral("k=q8_0,v=q4_0"));
        page->prompt()->setPlainText(QStringLiteral("Write a short poem about the sea."));
        page->maxTokens()->setValue(48);
        page->evalWindows()->setValue(1);  // the table's quality rows, in seconds
        QSignalSpy done(page, &ComparePage::runFinished);
        page->run();
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 3 * uitest::kTimeoutMs);
        if (measure::available()) {
            QSignalSpy evaluated(page, &ComparePage::evaluationFinished);
            page->evaluateQuality();
            QTRY_VERIFY_WITH_TIMEOUT(evaluated.count() == 1, 3 * uitest::kTimeoutMs);
        }
        save(QStringLiteral("compare.png"));
        m_window->showPage(QStringLiteral("Chat"));
    }
};

WB_UI_TEST_MAIN(TestScreenshots, true)
#include "test_ui_screenshots.moc"
