// The live charts' axes read as a person expects, empty or with data: every tick label differs
// from the next and carries at most the decimals its step needs (no "0, 0, 0, 1", no "0.666667"),
// and the turn chart shows its category axis only once a turn is there (an empty one draws its
// title in the corner).
#include <QApplication>
#include <QBarCategoryAxis>
#include <QChart>
#include <QLineSeries>
#include <QTest>
#include <QValueAxis>

#include "widgets/kv_memory_chart.h"
#include "widgets/overlay_chart.h"
#include "widgets/token_rate_chart.h"
#include "widgets/turn_latency_chart.h"

namespace {

// The point budget MetricChartView keeps a line within (protected there).
struct MetricChartViewLimits : MetricChartView {
    using MetricChartView::kMaxPoints;
};

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

    // A long session on the live charts: 20,000 tokens arriving a few at a time stay whole (the
    // first seconds still drawn, the last token's too), within the point budget, in order, and
    // one stall among them still peaks the latency line. Cleared, the chart starts afresh.
    void longSessionStaysWholeAndBounded() {
        TokenRateChart rate;
        constexpr int kTokens = 20000, kStallAt = 12345;
        double seconds = 0;
        QList<TokenRateSample> batch;
        for (int i = 0; i < kTokens; ++i) {
            const double gap = i == kStallAt ? 5000.0 : 20.0 + (i % 7);
            seconds += gap / 1000.0;
            batch.append({seconds, gap, i == 0});
            if (batch.size() == 7 || i + 1 == kTokens) {
                rate.appendSamples(batch);
                batch.clear();
            }
        }
        for (QLineSeries* s : {rate.rateSeries(), rate.latencySeries()}) {
            QVERIFY2(s->count() <= MetricChartViewLimits::kMaxPoints && s->count() >= MetricChartViewLimits::kMaxPoints / 4,
                     qPrintable(QString::number(s->count())));
            QVERIFY2(s->at(0).x() < seconds * 0.01, qPrintable(QString::number(s->at(0).x())));   // the beginning kept
            QCOMPARE(s->at(s->count() - 1).x(), seconds);
            for (int i = 1; i < s->count(); ++i) QVERIFY(s->at(i).x() > s->at(i - 1).x());
        }
        double peak = 0;
        for (const QPointF& p : rate.latencySeries()->points()) peak = std::max(peak, p.y());
        QCOMPARE(peak, 5000.0);
        rate.clear();
        rate.appendSamples({{0.02, 20.0, true}, {0.04, 20.0, false}});
        QCOMPARE(rate.latencySeries()->count(), 2);   // full resolution again
    }
};

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    TestMetricCharts suite;
    return QTest::qExec(&suite, argc, argv);
}
#include "test_metric_charts.moc"
