// The retrieval heatmap: cells land where cellRect says and paint the accuracy's colour (red at
// 0, green at 1, grey where nothing ran), hover text gives the counts, and a grid whose counts do
// not match its labels is refused.
#include <QImage>
#include <QTest>

#include "widgets/accuracy_heatmap.h"

class TestAccuracyHeatmap : public QObject {
    Q_OBJECT
private slots:
    void cellsPaintTheirAccuracy() {
        AccuracyHeatmap map;
        HeatmapGrid g;
        g.title = QStringLiteral("sliding:window=64 · KV f16");
        g.rows = {QStringLiteral("512"), QStringLiteral("1024")};
        g.columns = {QStringLiteral("0 %"), QStringLiteral("100 %"), QStringLiteral("whole")};
        g.trials = {2, 2, 4, 2, 0, 4};
        g.correct = {0, 2, 3, 1, 0, 4};
        HeatmapGrid broken = g;
        broken.trials.removeLast();
        map.setPanels({g, broken, g});
        QCOMPARE(map.panelCount(), 2);
        QCOMPARE(g.accuracy(0, 2), 0.75);
        QCOMPARE(g.accuracy(1, 1), -1.0);
        map.resize(map.sizeHint());
        QImage image(map.size(), QImage::Format_ARGB32);
        map.render(&image);
        auto colourAt = [&](int panel, int row, int column) {
            const QRect r = map.cellRect(panel, row, column);
            return QColor(image.pixel(r.left() + 2, r.top() + 2));   // a corner: clear of the number
        };
        QCOMPARE(colourAt(0, 0, 0).rgb(), AccuracyHeatmap::colorOf(0.0).rgb());
        QCOMPARE(colourAt(1, 0, 1).rgb(), AccuracyHeatmap::colorOf(1.0).rgb());
        QCOMPARE(colourAt(0, 1, 1).rgb(), AccuracyHeatmap::colorOf(-1).rgb());
        QVERIFY(AccuracyHeatmap::colorOf(0.0).red() > AccuracyHeatmap::colorOf(0.0).green());
        QVERIFY(AccuracyHeatmap::colorOf(1.0).green() > AccuracyHeatmap::colorOf(1.0).red());
        // The second panel sits right of the first; hit-testing finds each cell.
        QVERIFY(map.cellRect(1, 0, 0).left() > map.cellRect(0, 0, 2).right());
        const auto hit = map.cellAt(map.cellRect(1, 1, 2).center());
        QCOMPARE(hit.panel, 1);
        QCOMPARE(hit.row, 1);
        QCOMPARE(hit.column, 2);
        QCOMPARE(map.cellAt(QPoint(0, 0)).panel, -1);
        QCOMPARE(map.describe(0, 0, 2), QStringLiteral("512 tokens, the whole context: 3 of 4 found (0.75)"));
        QCOMPARE(map.describe(0, 1, 1), QStringLiteral("1024 tokens, depth 100 %: not measured"));
        map.setPanels({});
        QCOMPARE(map.panelCount(), 0);
    }
};

QTEST_MAIN(TestAccuracyHeatmap)
#include "test_accuracy_heatmap.moc"
