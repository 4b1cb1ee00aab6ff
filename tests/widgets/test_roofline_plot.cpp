// The roofline widget: the ceiling is the min of the memory slope and the compute roof, points
// on log axes, zero-valued points left out.
#include <QApplication>
#include <QChart>
#include <QPalette>
#include <QLineSeries>
#include <QScatterSeries>
#include <QTest>

#include "widgets/roofline_plot.h"

class TestRooflinePlot : public QObject {
    Q_OBJECT
private slots:
    void ceiling_and_points() {
        RooflinePlot p;
        p.resize(500, 350);
        p.setCeilings(50, 400, "int8");
        QCOMPARE(p.roofAt(1.0), 50.0);     // memory-bound: 50 GB/s × 1 op/B
        QCOMPARE(p.roofAt(8.0), 400.0);    // the ridge
        QCOMPARE(p.roofAt(100.0), 400.0);  // compute-bound
        // The ceiling polyline passes through the ridge.
        bool ridge = false;
        for (const QPointF& pt : p.ceilingSeries()->points()) ridge = ridge || (qFuzzyCompare(pt.x(), 8.0) && qFuzzyCompare(pt.y(), 400.0));
        QVERIFY(ridge);
        p.setPoints({{"prompt · matmuls", 150, 120}, {"prompt · attention", 40, 30}}, {{"decode · matmuls", 2, 20}, {"decode · attention", 0, 0}});
        QCOMPARE(p.promptSeries()->count(), 2);
        QCOMPARE(p.decodeSeries()->count(), 1);   // the zero point cannot sit on a log axis
        QCOMPARE(p.decodeSeries()->at(0), QPointF(2, 20));
        QVERIFY(!p.grab().isNull());
        // Point labels show three significant digits and the unit, not a raw float.
        p.setPoints({{"prompt · matmuls", 150, 123.456789}}, {{"decode · matmuls", 0.912345, 0.0345678}});
        QCOMPARE(p.promptSeries()->at(0).y(), 123.0);
        QVERIFY(qFuzzyCompare(p.decodeSeries()->at(0).y(), 0.0346));
        QCOMPARE(p.promptSeries()->pointLabelsFormat(), QStringLiteral("@yPoint GOP/s"));
    }

    void charts_follow_a_dark_palette() {
        const QPalette light = QApplication::palette();
        QPalette dark = light;
        dark.setColor(QPalette::Window, QColor(0x20, 0x20, 0x20));
        dark.setColor(QPalette::WindowText, Qt::white);
        QApplication::setPalette(dark);
        RooflinePlot inDark;
        QCOMPARE(inDark.chart()->theme(), QChart::ChartThemeDark);
        QApplication::setPalette(light);
        RooflinePlot inLight;
        QCOMPARE(inLight.chart()->theme(), QChart::ChartThemeLight);
    }
};

QTEST_MAIN(TestRooflinePlot)
#include "test_roofline_plot.moc"
