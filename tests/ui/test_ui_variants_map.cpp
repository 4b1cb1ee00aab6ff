// The Variants map page on a sweep's rows (no model needed): the points and the Pareto front
// for each quality measure, failed rows counted but not drawn, a malformed file named by line,
// and a selected point sent to the Chat or Compare as the CLI's flags. With the default model:
// a sweep run from the page fills the map row by row, is kept in the history and reopens from
// History → Sweeps, and stops when asked.
#include <QComboBox>
#include <QFile>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QCheckBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>

#include "workbench/sweep.h"

#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/store_client.h"
#include "ui/history/history_page.h"
#include "ui/history/sweep_list.h"
#include "ui/main_window.h"
#include "ui/pages/sweep_panel.h"
#include "ui/pages/variants_map_page.h"
#include "widgets/accuracy_heatmap.h"
#include "widgets/variants_scatter.h"

namespace {
// Five rows: full (big, exact), a small window (small, worse), top-k (bigger than full and
// worse: off the front), q8_0 KV (half of full, nearly exact), and one that failed.
const char* const kRows =
    R"({"config":"full","attention":"full","kv_type":"f16","weights":"q4_1","kv_bytes":95000000,"delta_ppl_pct":0,"kl":0,"top1":1,"decode_tok_s":116,"retrieval_accuracy":0.75,"retrieval_cells":[{"kind":"passkey","length":512,"depth":0,"trials":2,"correct":2},{"kind":"frequent_words","length":512,"depth":null,"trials":2,"correct":1}],"status":"ok"})"
    "\n"
    R"({"config":"sliding:window=64,sinks=4","attention":"sliding:window=64,sinks=4","kv_type":"f16","weights":"q4_1","kv_bytes":2200000,"delta_ppl_pct":46.7,"kl":0.36,"top1":0.67,"decode_tok_s":375,"retrieval_accuracy":0.1,"retrieval_cells":[{"kind":"passkey","length":512,"depth":0,"trials":2,"correct":0},{"kind":"frequent_words","length":512,"depth":null,"trials":2,"correct":0}],"status":"ok"})"
    "\n"
    R"({"config":"topk:k=256,recent=64","attention":"topk:k=256,recent=64","kv_type":"f16","weights":"q4_1","kv_bytes":101000000,"delta_ppl_pct":10.7,"kl":0.09,"top1":0.81,"decode_tok_s":114,"retrieval_accuracy":0.7,"status":"ok"})"
    "\n"
    R"({"config":"full --kv-type q8_0 --weights q8_0","attention":"full","kv_type":"q8_0","weights":"q8_0","kv_bytes":50000000,"delta_ppl_pct":0.16,"kl":0.0037,"top1":0.96,"decode_tok_s":100,"retrieval_accuracy":0.75,"status":"ok"})"
    "\n"
    R"({"config":"latent:rank=48 --kv-type q8_0","attention":"latent:rank=48","kv_type":"q8_0","weights":"as stored","status":"failed","error":"rank"})"
    "\n";

QString writeFile(const QTemporaryDir& dir, const char* name, const QByteArray& text) {
    const QString path = dir.filePath(QString::fromLatin1(name));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(text);
    return path;
}
}  // namespace

class TestVariantsMap : public QObject {
    Q_OBJECT
private slots:
    void drawsThePointsAndTheFront() {
        QTemporaryDir dir;
        VariantsMapPage page;
        page.resize(1000, 700);
        page.show();
        QVERIFY(page.loadSweep(writeFile(dir, "sweep.jsonl", kRows)));
        QCOMPARE(page.rowCount(), 4);
        QVERIFY2(page.statusText().contains("4 configurations") && page.statusText().contains("1 failed"), qPrintable(page.statusText()));
        VariantsScatter* scatter = page.scatter();
        QCOMPARE(scatter->pointCount(), 4);
        int drawn = 0;
        for (QScatterSeries* band : scatter->speedBands()) drawn += band->count();
        QCOMPARE(drawn, 4);
        // ΔPPL (lower is better): window → q8_0 → full; top-k is bigger and worse than full.
        QCOMPARE(scatter->frontSeries()->count(), 3);
        constexpr double kMiB = 1024.0 * 1024.0;   // the map's x axis
        QCOMPARE(scatter->frontSeries()->at(0).x(), 2200000.0 / kMiB);
        QCOMPARE(scatter->frontSeries()->at(2).x(), 95000000.0 / kMiB);
        // Retrieval (higher is better): the window, then q8_0 (as good as full and smaller).
        page.qualityMenu()->setCurrentIndex(page.qualityMenu()->findText("Retrieval accuracy"));
        QCOMPARE(scatter->frontSeries()->count(), 2);
        QCOMPARE(scatter->frontSeries()->at(1).x(), 50000000.0 / kMiB);
        QCOMPARE(scatter->frontSeries()->at(1).y(), 75.0);
    }

    void aSelectedPointGoesToChatOrCompare() {
        QTemporaryDir dir;
        VariantsMapPage page;
        QVERIFY(page.loadSweep(writeFile(dir, "sweep.jsonl", kRows)));
        auto* load = page.findChild<QPushButton*>("variantsLoadInChat");
        auto* compare = page.findChild<QPushButton*>("variantsAddToCompare");
        QVERIFY(!load->isEnabled() && !compare->isEnabled());
        // A click on the map selects the nearest point.
        emit page.scatter()->pointClicked(page.scatter()->nearest(QPointF(50000000.0 / (1024.0 * 1024.0), 0.2)));
        QVERIFY(load->isEnabled());
        QCOMPARE(page.scatter()->selectedSeries()->count(), 1);   // ringed on the map
        QSignalSpy toChat(&page, &VariantsMapPage::loadInChatRequested), toCompare(&page, &VariantsMapPage::addToCompareRequested);
        QTest::mouseClick(load, Qt::LeftButton);
        QCOMPARE(toChat.count(), 1);
        QCOMPARE(toChat.at(0).at(0).toString(), QStringLiteral("full"));
        QCOMPARE(toChat.at(0).at(1).toString(), QStringLiteral("q8_0"));
        QCOMPARE(toChat.at(0).at(2).toString(), QStringLiteral("q8_0"));   // the row asked for converted weights
        page.selectRow(1);
        QTest::mouseClick(compare, Qt::LeftButton);
        QCOMPARE(toCompare.count(), 1);
        QCOMPARE(toCompare.at(0).at(0).toString(), QStringLiteral("sliding:window=64,sinks=4"));
        QCOMPARE(toCompare.at(0).at(2).toString(), QString());   // as stored
        // The selection's retrieval heatmap beside full attention's; none for a row without cells.
        AccuracyHeatmap* heat = page.heatmap();
        QVERIFY(!heat->isHidden());
        QCOMPARE(heat->panelCount(), 2);
        QCOMPARE(heat->panel(0).title, QStringLiteral("sliding:window=64,sinks=4"));
        QCOMPARE(heat->panel(1).title, QStringLiteral("full"));
        QCOMPARE(heat->panel(0).columns, QStringList({"0 %", "whole"}));
        QCOMPARE(heat->panel(0).accuracy(0, 1), 0.0);
        QCOMPARE(heat->panel(1).accuracy(0, 1), 0.5);
        page.selectRow(2);
        QVERIFY(heat->isHidden());
        page.selectRow(0);
        QCOMPARE(heat->panelCount(), 1);
    }

    // A remote server's row (sweep --remote): drawn on the retrieval map under its server's
    // name with the figures it has, its heatmap beside full attention's; nothing to load.
    void aRemoteRowIsDrawnButHasNothingToLoad() {
        QTemporaryDir dir;
        VariantsMapPage page;
        const QByteArray remote =
            R"({"config":"remote http://127.0.0.1:8090/v1 --kv-type q8_0","backend":"remote","server":"llama.cpp","base_url":"http://127.0.0.1:8090/v1","attention":"full","kv_type":"q8_0","kv_source":"declared","kv_bytes":50000000,"kv_bytes_measured_peak":48000000,"kv_measured_from":"metrics tokens","retrieval_accuracy":0.7,"retrieval_cells":[{"kind":"passkey","length":512,"depth":0,"trials":2,"correct":1}],"status":"ok"})";
        QVERIFY(page.loadSweep(writeFile(dir, "sweep.jsonl", QByteArray(kRows) + remote + "\n")));
        QCOMPARE(page.rowCount(), 5);
        QCOMPARE(page.scatter()->pointCount(), 4);   // ΔPPL: the remote row has none
        page.qualityMenu()->setCurrentIndex(page.qualityMenu()->findText("Retrieval accuracy"));
        QCOMPARE(page.scatter()->pointCount(), 5);
        const ScatterPoint& p = page.scatter()->points().back();
        QCOMPARE(p.label, QStringLiteral("llama.cpp server · KV q8_0"));
        QVERIFY2(!p.details.contains("nan") && p.details.contains("retrieval 70 %") && p.details.contains("remote, http://127.0.0.1:8090/v1") &&
                     p.details.contains("its /metrics peak 45.78 MiB"),
                 qPrintable(p.details));
        page.selectRow(4);
        QVERIFY(!page.findChild<QPushButton*>("variantsLoadInChat")->isEnabled());
        QVERIFY(!page.findChild<QPushButton*>("variantsAddToCompare")->isEnabled());
        QVERIFY(page.findChild<QLabel*>("variantsDetails")->text().contains("remote server"));
        QVERIFY(page.findChild<QLabel*>("variantsDetails")->text().contains("its /metrics showed 45.78 MiB at the peak"));
        QCOMPARE(page.heatmap()->panelCount(), 2);
        QCOMPARE(page.heatmap()->panel(0).title, QStringLiteral("llama.cpp server · KV q8_0"));
        page.selectRow(0);
        QVERIFY(page.findChild<QPushButton*>("variantsLoadInChat")->isEnabled());
    }

    void badFilesAreNamed() {
        QTemporaryDir dir;
        VariantsMapPage page;
        QVERIFY(!page.loadSweep(dir.filePath("missing.jsonl")));
        QVERIFY2(page.statusText().contains("missing.jsonl"), qPrintable(page.statusText()));
        QVERIFY(!page.loadSweep(writeFile(dir, "broken.jsonl", QByteArray(kRows) + "{not json\n")));
        QVERIFY2(page.statusText().contains("broken.jsonl, line 6"), qPrintable(page.statusText()));
        QVERIFY(!page.loadSweep(writeFile(dir, "failed.jsonl", R"({"config":"x","status":"failed","error":"e"})")));
        QVERIFY2(page.statusText().contains("no measured row"), qPrintable(page.statusText()));
    }

    void aSweepFillsTheMapLiveAndReopensFromHistory() {
        if (uitest::modelPath().isEmpty()) QSKIP("needs the default model");
        QTemporaryDir dir;
        const QString list = writeFile(dir, "mine.txt", "full\nsliding:window=32,sinks=4  # forgets\nlatent:rank=48 --kv-type q8_0\n");
        MainWindow window;
        window.show();
        QSignalSpy loaded(window.client(), &EngineClient::modelLoaded);
        window.startWithModel(uitest::modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(window.store()->isOpen(), uitest::kTimeoutMs);
        window.showPage("Variants map");
        VariantsMapPage* page = window.variantsPage();
        SweepPanel* panel = page->sweepPanel();
        QVERIFY(panel);
        // The presets: the standard spread, the eviction presses, then lists from files.
        QVERIFY(panel->listMenu()->itemText(0).startsWith("Standard preset"));
        QCOMPARE(panel->listMenu()->itemText(1), QStringLiteral("Eviction presses (%1 configurations)").arg(workbench::presses_sweep_preset().size()));
        panel->setConfigurationFile(list);
        panel->contextSpin()->setValue(256);
        QVERIFY(!panel->questionAgnosticBox()->isEnabled());   // a mode of retrieval
        panel->retrievalBox()->setChecked(true);
        QVERIFY(panel->questionAgnosticBox()->isEnabled());
        panel->questionAgnosticBox()->setChecked(true);
        QSignalSpy rows(panel, &SweepPanel::rowMeasured), finished(panel, &SweepPanel::finished);
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QVERIFY(panel->isRunning() && panel->progressBar()->isVisible());
        QCOMPARE(panel->runButton()->text(), QStringLiteral("Stop"));
        // The first row is on the map before the sweep ends.
        QTRY_VERIFY_WITH_TIMEOUT(rows.count() >= 1, uitest::kTimeoutMs);
        QCOMPARE(page->rowCount(), 1);
        QCOMPARE(page->scatter()->pointCount(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 2 * uitest::kTimeoutMs);
        QCOMPARE(rows.count(), 3);
        QCOMPARE(page->rowCount(), 2);   // the latent row failed (rank 48): counted, not drawn
        QVERIFY2(page->statusText().contains("1 failed"), qPrintable(page->statusText()));
        QVERIFY(!panel->progressBar()->isVisible());
        // Retrieval beside perplexity: the 32-token window forgets what full attention finds.
        const QJsonObject full = QJsonDocument::fromJson(rows.at(0).at(0).toString().toUtf8()).object();
        const QJsonObject window32 = QJsonDocument::fromJson(rows.at(1).at(0).toString().toUtf8()).object();
        QVERIFY2(full["retrieval_accuracy"].toDouble() > window32["retrieval_accuracy"].toDouble(), qPrintable(rows.at(1).at(0).toString()));
        QCOMPARE(full["question"].toString(), QStringLiteral("agnostic"));

        // Kept in the history as one sweep; reopening it redraws those rows.
        SweepList* sweeps = window.historyPage()->sweeps();
        QSignalSpy listed(sweeps, &SweepList::listLoaded);
        sweeps->refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!listed.isEmpty() && listed.last().at(0).toInt() == 1, uitest::kTimeoutMs);
        QVERIFY2(sweeps->list()->item(0)->text().contains("3 rows (1 failed)"), qPrintable(sweeps->list()->item(0)->text()));
        QVERIFY(page->loadSweep(writeFile(dir, "other.jsonl", kRows)));
        QCOMPARE(page->rowCount(), 4);
        window.showPage("History");
        window.historyPage()->tabs()->setCurrentWidget(sweeps);
        sweeps->list()->setCurrentRow(0);
        QTest::mouseClick(sweeps->findChild<QPushButton*>("sweepHistoryOpen"), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(page->rowCount(), 2, uitest::kTimeoutMs);
        QVERIFY2(page->statusText().contains("mine.txt sweep"), qPrintable(page->statusText()));

        // Stop: the sweep ends before the list does; the row in flight is dropped.
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(rows.count() >= 4, uitest::kTimeoutMs);
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 2, uitest::kTimeoutMs);
        QVERIFY2(rows.count() < 6, qPrintable(page->statusText()));
        QCOMPARE(panel->runButton()->text(), QStringLiteral("Run sweep"));
    }
};

WB_UI_TEST_MAIN(TestVariantsMap, false)
#include "test_ui_variants_map.moc"
