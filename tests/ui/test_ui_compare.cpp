// The Compare page on the real default model and a temporary database: full attention against a
// 32-token sliding window on a short prompt fills both output columns and the metrics table (the
// best of each row highlighted), draws a line per configuration, and saves a comparison that
// History → Comparisons reopens with both outputs; "Evaluate quality" adds PPL, ΔPPL, KL and
// top-1 (skipped while the engine's measurements are not in this build). The chat's model stays
// loaded throughout.
#include <QCheckBox>
#include <QLineEdit>
#include <QLineSeries>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/measure_types.h"
#include "ui/bridge/store_client.h"
#include "ui/compare/compare_config_form.h"
#include "ui/compare/compare_page.h"
#include "ui/history/comparison_list.h"
#include "ui/history/history_page.h"
#include "ui/main_window.h"
#include "widgets/overlay_chart.h"
#include "widgets/token_stream_view.h"

class TestCompare : public QObject {
    Q_OBJECT
    MainWindow* m_window = nullptr;
    ComparePage* page() const { return m_window->comparePage(); }

private slots:
    void initTestCase() {
        m_window = new MainWindow();
        m_window->show();
        m_window->findChild<QSpinBox*>("contextSpin")->setValue(256);
        QSignalSpy loaded(m_window->client(), &EngineClient::modelLoaded);
        m_window->startWithModel(uitest::modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->store()->isOpen(), uitest::kTimeoutMs);
    }
    void cleanupTestCase() { delete m_window; }

    void twoConfigurationsSideBySide() {
        m_window->showPage("Compare");
        CompareConfigForm* form = page()->form();
        form->setRow(0, true, "full", "f16");
        form->setRow(1, true, "sliding:window=32,sinks=4", "f16");
        form->setRow(2, false, "full", "q8_0");
        form->setRow(3, false, "full", "q8_0");
        page()->prompt()->setPlainText("List three colors of the rainbow.");
        page()->maxTokens()->setValue(12);
        QSignalSpy done(page(), &ComparePage::runFinished);
        QSignalSpy saved(page(), &ComparePage::comparisonSaved);
        QTest::mouseClick(m_window->findChild<QPushButton*>("compareRun"), Qt::LeftButton);
        QVERIFY(page()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 2 * uitest::kTimeoutMs);
        QVERIFY2(saved.count() == 1, qPrintable(page()->statusText()));

        for (int column = 0; column < 2; ++column) {
            TokenStreamView* out = page()->output(column);
            QVERIFY(out->isVisible());
            QCOMPARE(out->messageCount(), 1);
            QVERIFY2(!out->textOf(0).isEmpty(), qPrintable(page()->statusText()));
        }
        QVERIFY(!page()->output(2)->isVisible());
        CompareTable* table = page()->table();
        QCOMPARE(table->columnCount(), 2);
        for (int row : {CompareTable::Ttft, CompareTable::DecodeSpeed, CompareTable::KvBytes, CompareTable::ItlP90})
            for (int column = 0; column < 2; ++column)
                QVERIFY2(table->item(row, column) && table->item(row, column)->text() != QStringLiteral("—"),
                         qPrintable(QStringLiteral("row %1 column %2").arg(row).arg(column)));
        QVERIFY(table->isRowHidden(CompareTable::Perplexity));
        QCOMPARE(page()->kvChart()->lineCount(), 2);
        QVERIFY(page()->kvChart()->line(0)->count() > 0 && page()->kvChart()->line(1)->count() > 0);
        // The chat's engine was not touched.
        QVERIFY(m_window->client()->isLoaded());
        QCOMPARE(m_window->client()->config().attention, std::string("full"));

        // History → Comparisons reopens it, outputs included.
        m_window->showPage("History");
        HistoryPage* history = m_window->historyPage();
        history->tabs()->setCurrentIndex(1);
        ComparisonList* list = history->comparisons();
        QTRY_VERIFY_WITH_TIMEOUT(list->list()->count() == 1, uitest::kTimeoutMs);
        QSignalSpy shown(list, &ComparisonList::comparisonShown);
        list->list()->setCurrentRow(0);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() == 1, uitest::kTimeoutMs);
        QCOMPARE(shown.at(0).at(0).toLongLong(), page()->savedComparisonId());
        QCOMPARE(list->table()->columnCount(), 2);
        QVERIFY(list->outputsText().contains("sliding:window=32,sinks=4"));
        QVERIFY2(!list->outputsText().contains("(no output)"), qPrintable(list->outputsText()));
    }

    void evaluateQualityAddsColumns() {
        if (!measure::available()) QSKIP("the engine's measurements (workbench/measure.h) are not in this build");
        m_window->showPage("Compare");
        page()->evalWindows()->setValue(2);  // seconds, not tens of them
        QSignalSpy done(page(), &ComparePage::evaluationFinished);
        QTest::mouseClick(m_window->findChild<QPushButton*>("compareEvaluate"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 2 * uitest::kTimeoutMs);
        CompareTable* table = page()->table();
        QVERIFY(!table->isRowHidden(CompareTable::Perplexity));
        for (int row : {CompareTable::Perplexity, CompareTable::Kl, CompareTable::Top1})
            for (int column = 0; column < 2; ++column)
                QVERIFY2(table->item(row, column)->text() != QStringLiteral("—"), qPrintable(page()->statusText()));
        // Full attention against itself: no divergence, full agreement.
        QCOMPARE(table->item(CompareTable::Top1, 0)->text(), QStringLiteral("100.0%"));
        QVERIFY(page()->statusText().contains("saved"));
    }
};

WB_UI_TEST_MAIN(TestCompare, true)
#include "test_ui_compare.moc"
