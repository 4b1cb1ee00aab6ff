// The Variants map page on a sweep's rows (no model needed): the points and the Pareto front
// for each quality measure, failed rows counted but not drawn, a malformed file named by line,
// and a selected point sent to the Chat or Compare as the CLI's flags.
#include <QComboBox>
#include <QFile>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/ui_test_support.h"
#include "ui/pages/variants_map_page.h"
#include "widgets/variants_scatter.h"

namespace {
// Five rows: full (big, exact), a small window (small, worse), top-k (bigger than full and
// worse: off the front), q8_0 KV (half of full, nearly exact), and one that failed.
const char* const kRows =
    R"({"config":"full","attention":"full","kv_type":"f16","weights":"q4_1","kv_bytes":95000000,"delta_ppl_pct":0,"kl":0,"top1":1,"decode_tok_s":116,"retrieval_accuracy":0.75,"status":"ok"})"
    "\n"
    R"({"config":"sliding:window=64,sinks=4","attention":"sliding:window=64,sinks=4","kv_type":"f16","weights":"q4_1","kv_bytes":2200000,"delta_ppl_pct":46.7,"kl":0.36,"top1":0.67,"decode_tok_s":375,"retrieval_accuracy":0.1,"status":"ok"})"
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
};

WB_UI_TEST_MAIN(TestVariantsMap, false)
#include "test_ui_variants_map.moc"
