// The Compare page on the real default model and a temporary database: full attention against a
// 32-token sliding window on a short prompt fills both output columns and the metrics table (the
// best of each row highlighted), draws a line per configuration, and saves a comparison that
// History → Comparisons reopens with both outputs; "Evaluate quality" adds PPL, ΔPPL, KL and
// top-1 (skipped while the engine's measurements are not in this build). Then presets and a prompt
// set: a row from a configuration stored in the database and a row from a built-in preset (then
// saved as a named preset) run two prompts each; both prompts' outputs are kept per column, the table holds the mean over the
// prompts, and History reopens the comparison with both prompts. The chat's model stays loaded
// throughout.
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QLineSeries>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <optional>

#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/measure_types.h"
#include "ui/bridge/store_client.h"
#include "ui/compare/compare_config_form.h"
#include "ui/compare/compare_outputs.h"
#include "ui/compare/compare_page.h"
#include "ui/compare/prompt_set.h"
#include "ui/history/comparison_list.h"
#include "ui/history/history_page.h"
#include "ui/main_window.h"
#include "ui/models/session_table_model.h"
#include "widgets/accuracy_heatmap.h"
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

    void everyRowIsCheckedBeforeTheFirstRuns() {
        m_window->showPage("Compare");
        CompareConfigForm* form = page()->form();
        form->setRow(0, true, "full", "f16");
        form->setRow(1, true, "full", "f16");
        form->setRow(2, true, "full", "f16");
        form->setRow(3, true, "sliding:window=abc", "f16");
        page()->prompt()->setPlainText("Hi");
        page()->run();
        QVERIFY(!page()->isRunning());
        QVERIFY2(page()->statusText().contains("Configuration 4 cannot run") && page()->statusText().contains("abc"),
                 qPrintable(page()->statusText()));
        form->setRow(3, false, "full", "f16");
    }

    void runNeedsALoadedModel() {
        // A window whose only load failed has a model path but no model: Run is not offered, and
        // a click says why once instead of failing every row.
        QTemporaryDir dir;
        const QString broken = dir.filePath("broken.gguf");
        QFile f(broken);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("GGUF but not really");
        f.close();
        MainWindow bare;
        bare.show();
        QSignalSpy failed(bare.client(), &EngineClient::loadFailed);
        bare.loadModel(broken);
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, uitest::kTimeoutMs);
        bare.showPage("Compare");
        QVERIFY(!bare.findChild<QPushButton*>("compareRun")->isEnabled());
        bare.comparePage()->run();
        QVERIFY(!bare.comparePage()->isRunning());
    }

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
        // ... and it is not among the chat sessions.
        history->tabs()->setCurrentIndex(0);
        QSignalSpy listed(history, &HistoryPage::listLoaded);
        history->refresh();
        QTRY_VERIFY_WITH_TIMEOUT(listed.count() >= 1, uitest::kTimeoutMs);
        SessionTableModel* sessions = history->sessions();
        for (int r = 0; r < sessions->rowCount(); ++r) {
            const QString title = sessions->data(sessions->index(r, SessionTableModel::Title)).toString();
            QVERIFY2(!title.startsWith("Compare:"), qPrintable(title));
        }
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
        // Retrieval beside perplexity: the 32-token window forgets facts full attention finds.
        auto percent = [&](int column) { return table->item(CompareTable::Retrieval, column)->text().chopped(1).toDouble(); };
        QVERIFY2(table->item(CompareTable::Retrieval, 1)->text().endsWith('%'), qPrintable(table->item(CompareTable::Retrieval, 1)->text()));
        QVERIFY2(percent(1) < percent(0), qPrintable(QString("%1 vs %2").arg(percent(1)).arg(percent(0))));
        QVERIFY(page()->statusText().contains("saved"));
        // Each evaluated column's retrieval as a length × depth heatmap, the same figures as the table's.
        AccuracyHeatmap* heat = page()->heatmap();
        QVERIFY(heat->isVisible());
        QCOMPARE(heat->panelCount(), 2);
        for (int column = 0; column < 2; ++column) {
            const HeatmapGrid& g = heat->panel(column);
            QVERIFY2(g.title.startsWith(table->horizontalHeaderItem(column)->text() + " · "), qPrintable(g.title));
            int n = 0, ok = 0;
            for (int i = 0; i < g.trials.size(); ++i) n += g.trials[i], ok += g.correct[i];
            QCOMPARE(QString::number(100.0 * ok / n, 'f', 1) + '%', table->item(CompareTable::Retrieval, column)->text());
        }
    }

    // A row that drafts (prompt lookup) beside one that does not: the same greedy output, and the
    // acceptance row appears with the drafting column's figure only.
    void draftingRowBesideAPlainOne() {
        m_window->showPage("Compare");
        CompareConfigForm* form = page()->form();
        form->setRow(0, true, "full", "f16");
        form->setRow(1, true, "full", "f16");
        form->setRow(2, false, "full", "q8_0");
        form->setRow(3, false, "full", "q8_0");
        auto* drafting = m_window->findChild<QComboBox*>("compareDrafting1");
        QVERIFY(drafting);
        drafting->setCurrentIndex(drafting->findData(static_cast<int>(workbench::DraftKind::lookup)));
        page()->prompt()->setPlainText("Repeat exactly: one fish, two fish, red fish, blue fish, one fish, two fish.");
        page()->maxTokens()->setValue(24);
        QSignalSpy done(page(), &ComparePage::runFinished);
        QTest::mouseClick(m_window->findChild<QPushButton*>("compareRun"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 2 * uitest::kTimeoutMs);
        QCOMPARE(page()->output(1)->textOf(0), page()->output(0)->textOf(0));
        CompareTable* table = page()->table();
        QVERIFY(!table->isRowHidden(CompareTable::Acceptance));
        QCOMPARE(table->item(CompareTable::Acceptance, 0)->text(), QStringLiteral("—"));
        QVERIFY(table->item(CompareTable::Acceptance, 1)->text().endsWith('%'));
        QVERIFY(table->horizontalHeaderItem(1)->toolTip().contains("lookup"));
        drafting->setCurrentIndex(0);
    }

    void promptSetLoadsFromAFile() {
        QTemporaryDir dir;
        const QString good = dir.filePath("set.jsonl");
        QFile file(good);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"prompt\": \"Name one fruit.\"}\n\n{\"messages\": [{\"role\": \"user\", \"content\": \"Name one planet.\"}]}\n");
        file.close();
        QVERIFY(page()->loadPromptSet(good));
        QCOMPARE(promptset::split(page()->prompt()->toPlainText()), QStringList({"Name one fruit.", "Name one planet."}));
        const QString bad = dir.filePath("bad.jsonl");
        QFile badFile(bad);
        QVERIFY(badFile.open(QIODevice::WriteOnly));
        badFile.write("{\"prompt\": \"ok\"}\n{\"prompt\": 3}\n");
        badFile.close();
        QVERIFY(!page()->loadPromptSet(bad));
        QVERIFY2(page()->statusText().contains("bad.jsonl line 2"), qPrintable(page()->statusText()));
    }

    void presetsAndAPromptSet() {
        m_window->showPage("Compare");
        // A configuration stored earlier (as a chat or a CLI run would have), not among the built-ins.
        workbench::EngineConfig stored = m_window->client()->config();
        stored.attention = "sliding:window=16,sinks=2";
        stored.kv_types = "f16";
        stored.weight_type.clear();
        bool inserted = false;
        m_window->store()->call<workbench::RowId>(
            [stored](workbench::Store& s) { return s.save_configuration(workbench::make_configuration(stored)); },
            this, [&](const workbench::Result<workbench::RowId>& r) { inserted = r.ok(); });
        QTRY_VERIFY_WITH_TIMEOUT(inserted, uitest::kTimeoutMs);
        QSignalSpy presets(page(), &ComparePage::presetsLoaded);
        page()->refreshPresets();
        QTRY_VERIFY_WITH_TIMEOUT(presets.count() >= 1, uitest::kTimeoutMs);

        CompareConfigForm* form = page()->form();
        int storedIndex = -1, builtInIndex = -1;
        for (int i = 0; i < form->presets().size(); ++i) {
            const ComparePreset& p = form->presets()[i];
            if (p.source == ComparePreset::Source::Stored && p.attention == "sliding:window=16,sinks=2") storedIndex = i;
            if (p.source == ComparePreset::Source::BuiltIn && p.attention == "full" && p.kvTypes == "q8_0") builtInIndex = i;
        }
        QVERIFY(storedIndex > 0 && builtInIndex > 0);
        // Stored configurations are listed once per setting: the earlier comparison stored full/f16
        // twice (a column and the quality baseline).
        int fullF16 = 0;
        for (const ComparePreset& p : form->presets())
            fullF16 += p.source == ComparePreset::Source::Stored && p.sameFields("full", "f16", "");
        QCOMPARE(fullF16, 1);

        // Pick them as a user does: the menu's item, then its activation.
        auto pick = [form](int row, int preset) {
            QComboBox* menu = form->presetMenu(row);
            const int item = menu->findData(preset);
            QVERIFY(item >= 0);
            menu->setCurrentIndex(item);
            emit menu->activated(item);
        };
        pick(0, storedIndex);
        pick(1, builtInIndex);
        form->setRow(2, false, "full", "f16");
        form->setRow(3, false, "full", "f16");
        QCOMPARE(form->findChild<QLineEdit*>("compareAttention0")->text(), QStringLiteral("sliding:window=16,sinks=2"));
        QCOMPARE(form->findChild<QComboBox*>("compareKv1")->currentText(), QStringLiteral("q8_0"));
        QCOMPARE(form->presetOf(0), storedIndex);
        // Save as preset: kept in the database under its name, offered first, and the row names it.
        QSignalSpy reloaded(page(), &ComparePage::presetsLoaded);
        page()->savePreset(1, "  my q8 KV ");
        QTRY_VERIFY_WITH_TIMEOUT(reloaded.count() >= 1, uitest::kTimeoutMs);
        int named = -1;
        for (int i = 0; i < form->presets().size(); ++i)
            if (form->presets()[i].source == ComparePreset::Source::Named && form->presets()[i].label == "my q8 KV") named = i;
        QVERIFY2(named == 1, qPrintable(page()->statusText()));
        QVERIFY(form->presets()[named].sameFields("full", "q8_0", ""));
        QCOMPARE(form->presetOf(1), named);
        QCOMPARE(form->presetMenu(3)->itemText(form->presetMenu(3)->findData(named)), QStringLiteral("Preset: my q8 KV"));
        // An edited copy: the fields stay editable and the menu says Custom.
        pick(2, named);
        form->findChild<QLineEdit*>("compareAttention2")->setText("topk:k=8,recent=4");
        QCOMPARE(form->presetOf(2), -1);
        form->setRow(2, false, "full", "f16");

        page()->prompt()->setPlainText("Name one fruit.\n---\nName one planet.");
        page()->maxTokens()->setValue(6);
        QSignalSpy done(page(), &ComparePage::runFinished);
        QSignalSpy saved(page(), &ComparePage::comparisonSaved);
        QTest::mouseClick(m_window->findChild<QPushButton*>("compareRun"), Qt::LeftButton);
        QVERIFY(page()->isRunning());
        QCOMPARE(page()->progress()->maximum(), 4);  // 2 prompts x 2 configurations
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 2 * uitest::kTimeoutMs);
        QVERIFY2(saved.count() == 1, qPrintable(page()->statusText()));

        CompareOutputs* outputs = page()->outputs();
        QCOMPARE(outputs->promptCount(), 2);
        QVERIFY(outputs->promptMenu()->isVisible());
        QString first[2], second[2];
        for (int column = 0; column < 2; ++column) {
            QCOMPARE(page()->output(column)->messageCount(), 1);
            first[column] = page()->output(column)->textOf(0);
        }
        outputs->showPrompt(1);
        for (int column = 0; column < 2; ++column) {
            QCOMPARE(page()->output(column)->messageCount(), 1);
            second[column] = page()->output(column)->textOf(0);
            QVERIFY2(!first[column].isEmpty() && !second[column].isEmpty(), qPrintable(page()->statusText()));
            QVERIFY2(first[column] != second[column], qPrintable(first[column]));
        }
        QVERIFY(page()->kvChart()->line(0)->count() > 0);  // the charts follow the prompt shown

        // The table: each figure the mean of the two prompts' runs, as stored.
        CompareTable* table = page()->table();
        QCOMPARE(table->columnCount(), 2);
        std::optional<LoadedComparison> loaded;
        const workbench::RowId id = page()->savedComparisonId();
        m_window->store()->call<LoadedComparison>(
            [id](workbench::Store& s) { return comparisons::load(s, id); }, this,
            [&](const workbench::Result<LoadedComparison>& r) {
                if (r.ok()) loaded = *r;
            });
        QTRY_VERIFY_WITH_TIMEOUT(loaded.has_value(), uitest::kTimeoutMs);
        QCOMPARE(loaded->prompts.size(), size_t(2));
        for (int column = 0; column < 2; ++column) {
            const auto& a = loaded->runs[0][column];
            const auto& b = loaded->runs[1][column];
            QVERIFY(a && b && a->ttft_ms && b->ttft_ms);
            const double mean = (*a->ttft_ms + *b->ttft_ms) / 2;
            const double shown = table->item(CompareTable::Ttft, column)->text().toDouble();
            QVERIFY2(std::abs(shown - mean) <= 0.51, qPrintable(QStringLiteral("%1 vs %2").arg(shown).arg(mean)));
            for (int row : {CompareTable::DecodeSpeed, CompareTable::KvBytes, CompareTable::ItlP50})
                QVERIFY(table->item(row, column)->text() != QStringLiteral("—"));
        }

        // History reopens it with both prompts, and the same aggregated table.
        m_window->showPage("History");
        HistoryPage* history = m_window->historyPage();
        history->tabs()->setCurrentIndex(1);
        ComparisonList* list = history->comparisons();
        list->refresh();
        QTRY_VERIFY_WITH_TIMEOUT(list->list()->count() == 3, uitest::kTimeoutMs);
        QSignalSpy shown(list, &ComparisonList::comparisonShown);
        list->list()->setCurrentRow(0);  // newest first
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, uitest::kTimeoutMs);
        QCOMPARE(shown.last().at(0).toLongLong(), id);
        QCOMPARE(list->promptMenu()->count(), 2);
        QVERIFY(list->promptText().contains("Name one fruit."));
        const QString firstOutputs = list->outputsText();
        QVERIFY2(!firstOutputs.contains("(no output)"), qPrintable(firstOutputs));
        list->promptMenu()->setCurrentIndex(1);
        QVERIFY(list->promptText().contains("Name one planet."));
        QVERIFY(!list->outputsText().contains("(no output)"));
        QVERIFY(list->outputsText() != firstOutputs);
        for (int row : {CompareTable::Ttft, CompareTable::DecodeSpeed, CompareTable::KvBytes})
            for (int column = 0; column < 2; ++column)
                QCOMPARE(list->table()->item(row, column)->text(), table->item(row, column)->text());
    }

};

WB_UI_TEST_MAIN(TestCompare, true)
#include "test_ui_compare.moc"
