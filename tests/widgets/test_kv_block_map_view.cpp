// The block map widget: cells land where the map says, in their state's colour, the tooltip
// names layer, block, token range and state, and bad input clears instead of crashing.
#include <QApplication>
#include <QImage>
#include <QTest>

#include "widgets/kv_block_map_view.h"

class TestKvBlockMapView : public QObject {
    Q_OBJECT
private slots:
    void cells_are_drawn_in_their_colours() {
        KvBlockMapView v;
        v.resize(400, 200);
        // 3 layers × 4 blocks: layer 0 live, layer 1 evicted except its last block, layer 2 borrowed.
        QVector<KvBlockCell> cells = {KvBlockCell::live,    KvBlockCell::live,    KvBlockCell::live,    KvBlockCell::live,
                                      KvBlockCell::evicted, KvBlockCell::evicted, KvBlockCell::evicted, KvBlockCell::live,
                                      KvBlockCell::borrowed, KvBlockCell::borrowed, KvBlockCell::borrowed, KvBlockCell::borrowed};
        v.setMap(3, 4, 16, cells);
        QCOMPARE(v.cell(1, 3), KvBlockCell::live);
        QCOMPARE(v.cell(1, 0), KvBlockCell::evicted);
        QCOMPARE(v.cell(7, 0), KvBlockCell::empty);   // out of range is empty, not a crash
        const QImage img = v.grab().toImage();
        // The centre of each cell, found through cellAt's inverse: scan for a pixel mapping to it.
        auto centre_of = [&](int layer, int block) {
            for (int y = 0; y < img.height(); ++y)
                for (int x = 0; x < img.width(); ++x)
                    if (v.cellAt({x, y}) == QPoint(block, layer) && v.cellAt({x + 3, y + 3}) == QPoint(block, layer)) return QPoint(x + 1, y + 1);
            return QPoint(-1, -1);
        };
        for (auto [layer, block] : {std::pair{0, 0}, {1, 1}, {1, 3}, {2, 2}}) {
            const QPoint c = centre_of(layer, block);
            QVERIFY(c.x() >= 0);
            QCOMPARE(img.pixelColor(c), KvBlockMapView::colorOf(v.cell(layer, block)));
        }
        QCOMPARE(v.describe(1, 2), QString("layer 1, block 2 (tokens 32–47): evicted by the sliding window"));
        QVERIFY(v.describe(2, 0).contains("another layer"));
    }

    void bad_sizes_clear_the_map() {
        KvBlockMapView v;
        v.setMap(2, 2, 16, {KvBlockCell::live});
        QCOMPARE(v.layers(), 0);
        QCOMPARE(v.cellAt({10, 10}), QPoint(-1, -1));
        v.resize(300, 150);
        QVERIFY(!v.grab().isNull());   // the empty state paints its message
    }
};

QTEST_MAIN(TestKvBlockMapView)
#include "test_kv_block_map_view.moc"
