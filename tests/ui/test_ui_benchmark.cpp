// The Benchmark page on the real default model and a temporary database: a sweep over batches 1
// and 2 with tiny sizes fills the results table and both charts, saves a row per batch, and lists
// the saved rows with the machine and configuration; a failed run keeps the earlier results and
// Stop is offered only while something runs. Skipped while the engine's measurements
// (workbench/measure.h) are not in this build; the batch-size parsing is checked regardless.
#include <QFile>
#include <QLineEdit>
#include <QPushButton>
#include <QLineSeries>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>

#include <cmath>

#include "tests/app/server/serve_process.h"
#include "tests/ui/ui_test_support.h"
#include "ui/benchmark/remote_sweep_panel.h"
#include "ui/benchmark/benchmark_page.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/measure_types.h"
#include "ui/bridge/store_client.h"
#include "ui/main_window.h"
#include "widgets/overlay_chart.h"
#include "workbench/bench_row.h"
#include "workbench/store.h"

class TestBenchmark : public QObject {
    Q_OBJECT
    MainWindow* m_window = nullptr;

private slots:
    void batchSizesParse() {
        QCOMPARE(BenchmarkPage::parseBatches("1,2,4,8"), (QList<int>{1, 2, 4, 8}));
        QCOMPARE(BenchmarkPage::parseBatches(" 3 , 5"), (QList<int>{3, 5}));
        QVERIFY(BenchmarkPage::parseBatches("1,x").isEmpty());
        QVERIFY(BenchmarkPage::parseBatches("0").isEmpty());
    }

    void sweepProducesAndSavesRows() {
        if (!measure::available()) QSKIP("the engine's measurements (workbench/measure.h) are not in this build");
        m_window = new MainWindow();
        m_window->show();
        m_window->findChild<QSpinBox*>("contextSpin")->setValue(256);
        QSignalSpy loaded(m_window->client(), &EngineClient::modelLoaded);
        m_window->startWithModel(uitest::modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->store()->isOpen(), uitest::kTimeoutMs);

        m_window->showPage("Benchmark");
        BenchmarkPage* page = m_window->benchmarkPage();
        page->batches()->setText("1,2");
        page->promptTokens()->setValue(16);
        page->genTokens()->setValue(4);
        QSignalSpy done(page, &BenchmarkPage::runFinished);
        QTest::mouseClick(m_window->findChild<QPushButton*>("benchRun"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 2 * uitest::kTimeoutMs);
        QVERIFY2(page->results()->rowCount() == 2, qPrintable(page->statusText()));
        QCOMPARE(page->results()->item(1, 0)->text(), QStringLiteral("2"));
        QVERIFY(page->results()->item(0, 1)->text().toDouble() > 0);
        QCOMPARE(page->throughputChart()->line(0)->count(), 2);
        QCOMPARE(page->latencyChart()->line(1)->count(), 2);
        // TPOT (a few ms) on an axis of its own, not flattened against TTFT's.
        QVERIFY(page->latencyChart()->rightAxis());
        QVERIFY(page->latencyChart()->line(1)->attachedAxes().contains(page->latencyChart()->rightAxis()));
        QVERIFY(!page->latencyChart()->line(0)->attachedAxes().contains(page->latencyChart()->rightAxis()));
        QCOMPARE(page->savedCount(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(page->saved()->rowCount() == 2, uitest::kTimeoutMs);
        QVERIFY(page->saved()->item(0, 2)->text().contains("SmolLM2"));
        QVERIFY(!page->saved()->item(0, 1)->text().isEmpty());

        // llama-bench's pp/tg tests: two rows with mean and spread, saved beside the sweep's.
        page->repetitions()->setValue(2);
        QSignalSpy speedDone(page, &BenchmarkPage::runFinished);
        QTest::mouseClick(m_window->findChild<QPushButton*>("benchRunSpeed"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(speedDone.count() == 1, 2 * uitest::kTimeoutMs);
        QVERIFY2(page->speedResults()->rowCount() == 2, qPrintable(page->statusText()));
        QCOMPARE(page->speedResults()->item(0, 0)->text(), QStringLiteral("pp16"));
        QCOMPARE(page->speedResults()->item(1, 0)->text(), QStringLiteral("tg4"));
        QVERIFY(page->speedResults()->item(0, 1)->text().toDouble() > 0);
        QVERIFY(page->speedResults()->item(1, 1)->text().toDouble() > 0);
        // Both rows in full view (issue 24, defect 10: the table was two rows high, header included).
        QTableWidget* speed = page->speedResults();
        QVERIFY2(speed->rowViewportPosition(1) + speed->rowHeight(1) <= speed->viewport()->height(),
                 qPrintable(QStringLiteral("row 1 ends at %1 of %2").arg(speed->rowViewportPosition(1) + speed->rowHeight(1)).arg(speed->viewport()->height())));
        QCOMPARE(page->savedCount(), 4);
        QTRY_VERIFY_WITH_TIMEOUT(page->saved()->rowCount() == 4, uitest::kTimeoutMs);
        QStringList tests;
        for (int r = 0; r < page->saved()->rowCount(); ++r) tests << page->saved()->item(r, 3)->text();
        QVERIFY2(tests.contains("pp16") && tests.contains("tg4"), qPrintable(tests.join(", ")));
        delete m_window;
        m_window = nullptr;

        // The saved rows are the CLI's (workbench/bench_row.h): llama-bench's fields in its order,
        // the repetitions' samples with their spread, and the model file's digest added.
        workbench::StoreOptions options;
        options.path = workbench::default_history_path();
        options.read_only = true;
        auto store = workbench::Store::open(options);
        QVERIFY2(store.ok(), store.status().message().c_str());
        auto rows = (*store)->list_benchmarks();
        QVERIFY(rows.ok());
        std::vector<std::string> expected_keys;
        const workbench::Json reference_row = workbench::bench_row_json({}, {});
        for (const auto& [key, value] : reference_row.items()) expected_keys.push_back(key);
        expected_keys.push_back("model_sha256");
        int speed_rows = 0;
        for (const workbench::BenchmarkRecord& record : *rows) {
            auto row = workbench::parse_json(record.json);
            QVERIFY2(row.ok(), record.json.c_str());
            std::vector<std::string> keys;
            for (const auto& [key, value] : row->items()) keys.push_back(key);
            QVERIFY2(keys == expected_keys, record.json.c_str());
            QCOMPARE(QString::fromStdString((*row)["model_sha256"].get<std::string>()).size(), 64);
            if (record.test_name != "pp16" && record.test_name != "tg4") continue;
            ++speed_rows;
            const auto& samples = (*row)["samples_ts"];
            QCOMPARE(samples.size(), size_t(2));
            const double a = samples[0].get<double>(), b = samples[1].get<double>();
            QVERIFY(std::fabs((*row)["stddev_ts"].get<double>() - std::fabs(a - b) / std::sqrt(2.0)) <= 1e-6 * (a + b));
            QVERIFY(std::fabs(record.stddev_ts - std::fabs(a - b) / std::sqrt(2.0)) <= 1e-6 * (a + b));
        }
        QCOMPARE(speed_rows, 2);
    }

    void aFailedRunKeepsTheEarlierResults() {
        if (!measure::available()) QSKIP("the engine's measurements (workbench/measure.h) are not in this build");
        // The chat runs a copy of the model; once the copy is deleted the benchmark's own load fails
        // (the chat's engine keeps its mapping), which is how a failed run looks to the page.
        QTemporaryDir dir;
        const QString copy = dir.filePath("copy.gguf");
        QVERIFY(QFile::copy(uitest::modelPath(), copy));
        MainWindow window;
        window.show();
        window.findChild<QSpinBox*>("contextSpin")->setValue(256);
        QSignalSpy loaded(window.client(), &EngineClient::modelLoaded);
        window.startWithModel(copy);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        window.showPage("Benchmark");
        BenchmarkPage* page = window.benchmarkPage();
        QVERIFY(!page->stopButton()->isEnabled());  // nothing runs yet
        page->promptTokens()->setValue(16);
        page->genTokens()->setValue(4);
        page->repetitions()->setValue(1);
        QSignalSpy done(page, &BenchmarkPage::runFinished);
        QTest::mouseClick(window.findChild<QPushButton*>("benchRunSpeed"), Qt::LeftButton);
        QVERIFY(page->stopButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 2 * uitest::kTimeoutMs);
        QCOMPARE(page->speedResults()->rowCount(), 2);
        QVERIFY(!page->stopButton()->isEnabled());
        const QString ppBefore = page->speedResults()->item(0, 1)->text();

        QVERIFY(QFile::remove(copy));
        QTest::mouseClick(window.findChild<QPushButton*>("benchRunSpeed"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 2, 2 * uitest::kTimeoutMs);
        QVERIFY2(page->statusText().contains("copy.gguf"), qPrintable(page->statusText()));
        QCOMPARE(page->speedResults()->rowCount(), 2);  // the earlier pp/tg rows stay
        QCOMPARE(page->speedResults()->item(0, 1)->text(), ppBefore);

        // A good model loaded in the chat clears the stale message.
        window.loadModel(uitest::modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 2, uitest::kTimeoutMs);
        QVERIFY2(page->statusText().isEmpty(), qPrintable(page->statusText()));
    }

    // A remote server's curves: `workbench-cli serve` on loopback measured at concurrency 1 and
    // 2 through the page's Remote box; a row and a point per level beside the local ones, saved
    // under a remote configuration; an address nothing listens on is a message, not a crash.
    void remoteSweepAgainstServe() {
        if (!QFile::exists(uitest::modelPath())) QSKIP("needs the default model");
        wbtest::ServeProcess serve;
        QVERIFY2(serve.start({"-c", "512"}), serve.log.c_str());
        m_window = new MainWindow();
        m_window->show();
        QTRY_VERIFY_WITH_TIMEOUT(m_window->store()->isOpen(), uitest::kTimeoutMs);
        m_window->showPage("Benchmark");
        BenchmarkPage* page = m_window->benchmarkPage();
        RemoteSweepPanel* remote = page->remotePanel();
        remote->url()->setText(QStringLiteral("http://127.0.0.1:%1/v1").arg(serve.port));
        remote->levels()->setText("1,2");
        remote->prompts()->setValue(4);
        remote->inputLen()->setValue(24);
        remote->outputLen()->setValue(6);
        const int savedBefore = page->savedCount();
        QSignalSpy done(remote, &RemoteSweepPanel::finished);
        QTest::mouseClick(m_window->findChild<QPushButton*>("remoteRun"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 2 * uitest::kTimeoutMs);
        QVERIFY2(page->results()->rowCount() == 2, qPrintable(remote->statusText()));
        QCOMPARE(page->results()->item(0, 0)->text(), QStringLiteral("c=1 remote"));
        QCOMPARE(page->results()->item(1, 0)->text(), QStringLiteral("c=2 remote"));
        QVERIFY(page->results()->item(1, 3)->text().toDouble() > 0);   // output tok/s
        QVERIFY(page->results()->item(1, 4)->text().toDouble() > 0);   // TTFT
        QVERIFY(remote->statusText().contains("workbench"));
        QCOMPARE(page->throughputChart()->lineCount(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(page->savedCount() == savedBefore + 2, uitest::kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(page->saved()->rowCount() >= 2, uitest::kTimeoutMs);

        remote->url()->setText("http://127.0.0.1:1/v1");
        QTest::mouseClick(m_window->findChild<QPushButton*>("remoteRun"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 2, uitest::kTimeoutMs);
        QVERIFY2(remote->statusText().contains("cannot connect"), qPrintable(remote->statusText()));
        delete m_window;
        m_window = nullptr;
        QCOMPARE(serve.stop(), 0);
    }
};

WB_UI_TEST_MAIN(TestBenchmark, true)
#include "test_ui_benchmark.moc"
