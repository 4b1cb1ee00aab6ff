// The live charts' axes read as a person expects, empty or with data: every tick label differs
// from the next and carries at most the decimals its step needs (no "0, 0, 0, 1", no "0.666667"),
// and the turn chart shows its category axis only once a turn is there (an empty one draws its
// title in the corner).
#include <QApplication>
#include <QBarCategoryAxis>
#include <QChart>
#include <QTest>
#include <QValueAxis>

#include "widgets/kv_memory_chart.h"
#include "widgets/overlay_chart.h"
#include "widgets/token_rate_chart.h"
#include "widgets/turn_latency_chart.h"

namespace {

// The labels a value axis draws: its ticks through its label format.
QStringList tickLabels(const QValueAxis* axis) {
    QStringList labels;
    const int n = axis->tickCount();
    for (int i = 0; i < n; ++i) {
        const double v = axis->min() + (axis->max() - axis->min()) * i / std::max(1, n - 1);
        labels << QString::asprintf(axis->labelFormat().toLatin1().constData(), v);
    }
    return labels;
}

// Every value axis of `chart`: distinct labels, none longer than 4 decimals.
void verifyReadableAxes(const QChart* chart, const char* what) {
    int axes = 0;
    for (const QAbstractAxis* a : chart->axes()) {
        const auto* axis = qobject_cast<const QValueAxis*>(a);
        if (!axis) continue;
        ++axes;
        const QStringList labels = tickLabels(axis);
        for (int i = 1; i < labels.size(); ++i)
            QVERIFY2(labels[i] != labels[i - 1], qPrintable(QStringLiteral("%1, %2: %3").arg(what, axis->titleText(), labels.join(", "))));
        for (const QString& l : labels)
            QVERIFY2(l.section('.', 1).size() <= 4, qPrintable(QStringLiteral("%1: %2").arg(what, l)));
    }
    QVERIFY(axes > 0);
}

}  // namespace

class TestMetricCharts : public QObject {
    Q_OBJECT
private slots:
    void emptyAndFilledChartsHaveReadableTicks() {
        KvMemoryChart kv;
        TokenRateChart rate;
        TurnLatencyChart turns;
        OverlayChart overlay("o", "batch", "ms");
        verifyReadableAxes(kv.chart(), "empty KV");
        verifyReadableAxes(rate.chart(), "empty rate");
        verifyReadableAxes(turns.chart(), "empty turns");
        verifyReadableAxes(overlay.chart(), "empty overlay");

        QList<KvChartSample> k;
        for (int i = 1; i <= 7; ++i) k.append({double(i), i * 23040.0, i * 23040.0, 2e6});
        kv.appendSamples(k);
        rate.appendSamples({{0.2, 6.0}, {0.4, 5.0}, {0.7, 6.6667}});
        turns.addTurn(0.6667);
        const int a = overlay.addLine("a"), b = overlay.addLine("b", "right");
        overlay.appendPoints(a, {{1, 0.3333}, {2, 0.6667}});
        overlay.appendPoints(b, {{1, 1234.5}});
        verifyReadableAxes(kv.chart(), "KV");
        verifyReadableAxes(rate.chart(), "rate");
        verifyReadableAxes(turns.chart(), "turns");
        verifyReadableAxes(overlay.chart(), "overlay");
    }

    void turnAxisAppearsWithTheFirstTurn() {
        TurnLatencyChart turns;
        const auto categories = [&] {
            for (QAbstractAxis* a : turns.chart()->axes(Qt::Horizontal))
                if (auto* c = qobject_cast<QBarCategoryAxis*>(a)) return c;
            return static_cast<QBarCategoryAxis*>(nullptr);
        };
        QVERIFY(categories());
        QVERIFY(!categories()->isVisible());
        turns.addTurn(25);
        QVERIFY(categories()->isVisible());
        turns.clear();
        QVERIFY(!categories()->isVisible());
    }
};

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    TestMetricCharts suite;
    return QTest::qExec(&suite, argc, argv);
}
#include "test_metric_charts.moc"
