// The two pictures under the chat, on the real default model: after a reply the KV block map
// shows the conversation's blocks (every layer, every block live under full attention), and the
// roofline has the prompt and decode steps' matmul and attention points under measured ceilings,
// the prompt's matmuls far more intense than decode's.
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSpinBox>
#include <QDoubleSpinBox>
#include <QTabWidget>
#include <QTest>

#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/main_window.h"
#include "ui/pages/chat_page.h"
#include "ui/pages/metrics_panel.h"
#include "widgets/kv_block_map_view.h"
#include "widgets/roofline_plot.h"

class TestPictures : public QObject {
    Q_OBJECT
    MainWindow* m_window = nullptr;

private slots:
    void blockMapAndRooflineAfterAReply() {
        m_window = new MainWindow();
        m_window->show();
        QSignalSpy loaded(m_window->client(), &EngineClient::modelLoaded);
        QSignalSpy ceilings(m_window->client(), &EngineClient::ceilingsMeasured);
        m_window->startWithModel(QString());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(ceilings.count() == 1, uitest::kTimeoutMs);
        const auto c = ceilings.at(0).at(0).value<MachineCeilings>();
        QVERIFY(c.bandwidthGbS > 1 && c.int8Gops > 1 && c.fp32Gflops > 1);

        m_window->findChild<QDoubleSpinBox*>("temperatureSpin")->setValue(0);
        m_window->findChild<QSpinBox*>("maxTokensSpin")->setValue(12);
        QSignalSpy finished(m_window->client(), &EngineClient::replyFinished);
        QSignalSpy roof(m_window->client(), &EngineClient::rooflineArrived);
        QPlainTextEdit* input = m_window->chatPage()->input();
        input->setPlainText(QStringLiteral("Tell me about the sea. ").repeated(10));
        input->setFocus();
        QTest::keyClick(input, Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, uitest::kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(roof.count() == 1, uitest::kTimeoutMs);

        MetricsPanel* panel = m_window->chatPage()->metricsPanel();
        panel->tabs()->setCurrentIndex(1);
        const KvBlockMapView* map = panel->blockMap();
        const auto& m = finished.at(0).at(0).value<ReplySummary>().metrics;
        QCOMPARE(map->layers(), 30);
        QCOMPARE(map->blocks(), (m.n_context_tokens + 15) / 16);
        for (int il = 0; il < map->layers(); il += 7)
            for (int b = 0; b < map->blocks(); ++b) QCOMPARE(map->cell(il, b), KvBlockCell::live);

        const RooflinePlot* plot = panel->roofline();
        QCOMPARE(plot->promptSeries()->count(), 2);   // matmuls and attention of the prompt step
        QCOMPARE(plot->decodeSeries()->count(), 2);
        const double prompt_mm = plot->promptSeries()->at(0).x(), decode_mm = plot->decodeSeries()->at(0).x();
        QVERIFY2(prompt_mm > 20 * decode_mm, qPrintable(QString("%1 vs %2").arg(prompt_mm).arg(decode_mm)));
        // Decode's matmuls sit under the memory slope: achieved ≤ the roof at their intensity (with slack for noise).
        QVERIFY(plot->decodeSeries()->at(0).y() <= 1.5 * plot->roofAt(decode_mm));
        // WB_SCREENSHOT_DIR=docs/screenshots refreshes the README's picture of this tab.
        if (const QByteArray dir = qgetenv("WB_SCREENSHOT_DIR"); !dir.isEmpty()) {
            m_window->resize(1400, 900);
            QTest::qWait(200);
            QVERIFY(m_window->grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/pictures.png")));
        }
        delete m_window;
    }

    // Near the context limit the gauge offers a new chat or a sliding window; the latter reloads
    // with one and the conversation goes on past the context length.
    void contextGaugeOffersASlidingWindow() {
        MainWindow w;
        w.show();
        w.findChild<QSpinBox*>("contextSpin")->setValue(256);
        QSignalSpy loaded(w.client(), &EngineClient::modelLoaded);
        w.startWithModel(QString());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        w.findChild<QDoubleSpinBox*>("temperatureSpin")->setValue(0);
        w.findChild<QSpinBox*>("maxTokensSpin")->setValue(16);
        QSignalSpy finished(w.client(), &EngineClient::replyFinished);
        QPlainTextEdit* input = w.chatPage()->input();
        input->setPlainText(QStringLiteral("Describe the sea in many words. ").repeated(24));
        input->setFocus();
        QTest::keyClick(input, Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, uitest::kTimeoutMs);
        auto* sliding = w.findChild<QPushButton*>("gaugeSlidingButton");
        QVERIFY(sliding->isVisible() && w.findChild<QPushButton*>("gaugeNewChatButton")->isVisible());
        QTest::mouseClick(sliding, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 2, uitest::kTimeoutMs);
        QCOMPARE(QString::fromStdString(w.client()->modelInfo()->attention), QStringLiteral("sliding:window=128,sinks=4"));
        QVERIFY(!sliding->isVisible());
        w.findChild<QSpinBox*>("maxTokensSpin")->setValue(80);
        input->setPlainText(QStringLiteral("And the mountains?"));
        QTest::keyClick(input, Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 2, uitest::kTimeoutMs);
        const ReplySummary r = finished.at(1).at(0).value<ReplySummary>();
        QVERIFY2(r.stopReason != workbench::StopReason::context_full, qPrintable(r.stopReasonName));
        QVERIFY(r.metrics.n_context_tokens > 256);   // past the context length
    }
};

WB_UI_TEST_MAIN(TestPictures, true)
#include "test_ui_pictures.moc"
