// A Compare row that is a remote server, on the real window offscreen: `workbench-cli serve` on the
// default model (a loopback port the OS picks) becomes row #2 through the row's "Remote server…"
// menu item and the real connect dialog, beside row #1, the chat's settings with full attention.
// Run (greedy, a short prompt, few tokens) fills both columns with the same text (the same engine
// and chat template on both sides), the table has TTFT and tok/s for both and "not reported" for
// the remote's KV, the KV chart has no points for it; the saved comparison stores the row as a
// "remote" configuration and History reopens it; Evaluate quality scores the local row and says
// "not available for a remote" in the remote's cells. The chat's connected server is offered too.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QLineSeries>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <memory>
#include <optional>

#include "tests/app/server/serve_process.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/measure_types.h"
#include "ui/bridge/store_client.h"
#include "ui/compare/compare_config_form.h"
#include "ui/compare/compare_page.h"
#include "ui/compare/comparison_store.h"
#include "ui/history/comparison_list.h"
#include "ui/history/history_page.h"
#include "ui/main_window.h"
#include "ui/pages/connect_server_dialog.h"
#include "widgets/overlay_chart.h"
#include "widgets/token_stream_view.h"

namespace {

// Picks a menu item as a user does: makes it current, then activates it.
bool pick(QComboBox* menu, const QString& textStart) {
    for (int item = 0; item < menu->count(); ++item)
        if (menu->itemText(item).startsWith(textStart)) {
            menu->setCurrentIndex(item);
            emit menu->activated(item);
            return true;
        }
    return false;
}

}  // namespace

class TestCompareRemote : public QObject {
    Q_OBJECT
    std::unique_ptr<wbtest::ServeProcess> m_serve;
    MainWindow* m_window = nullptr;
    ComparePage* page() const { return m_window->comparePage(); }

private slots:
    void initTestCase() {
        m_serve = std::make_unique<wbtest::ServeProcess>();
        m_serve->environment.remove(QStringLiteral("WORKBENCH_API_KEY"));
        QVERIFY2(m_serve->start({}, uitest::kTimeoutMs), m_serve->log.c_str());
        m_window = new MainWindow();
        m_window->show();
        m_window->findChild<QSpinBox*>("contextSpin")->setValue(256);
        QSignalSpy loaded(m_window->client(), &EngineClient::modelLoaded);
        m_window->startWithModel(uitest::modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->store()->isOpen(), uitest::kTimeoutMs);
    }
    void cleanupTestCase() {
        delete m_window;
        m_serve.reset();
    }

    void localRowBesideARemoteRow() {
        m_window->showPage("Compare");
        CompareConfigForm* form = page()->form();
        // Row #1: the chat's settings (full attention, as loaded).
        QVERIFY(pick(form->presetMenu(0), "Chat's current settings"));
        QCOMPARE(form->findChild<QLineEdit*>("compareAttention0")->text(), QStringLiteral("full"));
        form->setRow(2, false, "full", "f16");
        form->setRow(3, false, "full", "f16");
        // Row #2: "Remote server…", then the connect dialog as a user fills it.
        QVERIFY(pick(form->presetMenu(1), "Remote server"));
        ConnectServerDialog* dialog = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((dialog = page()->findChild<ConnectServerDialog*>()) && dialog->isVisible(), 5000);
        dialog->urlEdit()->clear();
        QTest::keyClicks(dialog->urlEdit(), m_serve->baseUrl());
        dialog->keyEdit()->clear();
        QTest::mouseClick(dialog->connectButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(form->rowRemote(1).has_value(), uitest::kTimeoutMs);
        const RemoteTarget target = *form->rowRemote(1);
        QCOMPARE(target.url, m_serve->baseUrl());
        QCOMPARE(target.serverKind, QStringLiteral("workbench"));
        QVERIFY(!target.model.isEmpty());
        QVERIFY(!form->findChild<QLineEdit*>("compareAttention1")->isEnabled());
        QVERIFY(form->presetMenu(1)->currentText().startsWith("remote: workbench"));

        const QString prompt = QStringLiteral("Name three colours.");
        page()->prompt()->setPlainText(prompt);
        page()->maxTokens()->setValue(16);
        page()->findChild<QDoubleSpinBox*>("compareTemperature")->setValue(0);
        QSignalSpy done(page(), &ComparePage::runFinished);
        QSignalSpy saved(page(), &ComparePage::comparisonSaved);
        QTest::mouseClick(m_window->findChild<QPushButton*>("compareRun"), Qt::LeftButton);
        QVERIFY(page()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 2 * uitest::kTimeoutMs);
        QVERIFY2(saved.count() == 1, qPrintable(page()->statusText()));

        // Both columns got text, and the same text: greedy, the same model, engine and chat template.
        const QString local = page()->output(0)->textOf(0);
        const QString remote = page()->output(1)->textOf(0);
        qInfo().noquote() << "local:" << local << "| remote:" << remote << "| remote footer:" << page()->output(1)->footerOf(0);
        QVERIFY2(!local.isEmpty() && !remote.isEmpty(), qPrintable(page()->statusText()));
        QCOMPARE(remote, local);
        QVERIFY(page()->output(1)->footerOf(0).contains("remote: workbench at " + m_serve->baseUrl()));

        // The table: speed for both; the remote's KV is not reported.
        CompareTable* table = page()->table();
        QCOMPARE(table->columnCount(), 2);
        for (int row : {CompareTable::Ttft, CompareTable::Tpot, CompareTable::ItlP50, CompareTable::DecodeSpeed})
            for (int column = 0; column < 2; ++column) {
                const QString text = table->item(row, column)->text();
                QVERIFY2(text.toDouble() > 0, qPrintable(QStringLiteral("row %1 column %2: %3").arg(row).arg(column).arg(text)));
            }
        QVERIFY(table->item(CompareTable::KvBytes, 0)->text() != QStringLiteral("—"));
        QVERIFY(table->item(CompareTable::KvBytes, 0)->text() != QStringLiteral("not reported"));
        QCOMPARE(table->item(CompareTable::KvBytes, 1)->text(), QStringLiteral("not reported"));
        QCOMPARE(table->item(CompareTable::KvRead, 1)->text(), QStringLiteral("not reported"));
        QVERIFY(table->horizontalHeaderItem(1)->toolTip().startsWith("remote: workbench"));
        // The charts: decode speed for both, KV for the local row only (the legend says why).
        QCOMPARE(page()->kvChart()->lineCount(), 2);
        QVERIFY(page()->kvChart()->line(0)->count() > 0);
        QCOMPARE(page()->kvChart()->line(1)->count(), 0);
        QVERIFY(page()->kvChart()->line(1)->name().contains("KV not reported"));
        QVERIFY(page()->rateChart()->line(0)->count() > 0);
        QVERIFY(page()->rateChart()->line(1)->count() > 0);

        // Saved: the remote row as bench --remote --db stores a server, its run marked remote.
        std::optional<LoadedComparison> loaded;
        const workbench::RowId id = page()->savedComparisonId();
        m_window->store()->call<LoadedComparison>(
            [id](workbench::Store& s) { return comparisons::load(s, id); }, this,
            [&](const workbench::Result<LoadedComparison>& r) {
                if (r.ok()) loaded = *r;
            });
        QTRY_VERIFY_WITH_TIMEOUT(loaded.has_value(), uitest::kTimeoutMs);
        QCOMPARE(loaded->configurations.size(), size_t(2));
        QCOMPARE(loaded->configurations[0].backend, std::string("cpu"));
        const workbench::ConfigurationRecord& server = loaded->configurations[1];
        QCOMPARE(server.backend, std::string("remote"));
        QCOMPARE(server.variant, std::string("workbench"));
        QCOMPARE(server.model, target.model.toStdString());
        const QJsonObject json = QJsonDocument::fromJson(QByteArray::fromStdString(server.config_json)).object();
        QCOMPARE(json.keys(), QStringList({"base_url", "model", "server"}));
        QCOMPARE(json.value("base_url").toString(), m_serve->baseUrl());
        QCOMPARE(json.value("model").toString(), target.model);
        QCOMPARE(json.value("server").toString(), QStringLiteral("workbench"));
        QVERIFY(loaded->runs[0][0] && loaded->runs[0][1]);
        QCOMPARE(loaded->runs[0][1]->provenance.backend, std::string("remote"));
        QCOMPARE(loaded->runs[0][1]->kv_bytes, uint64_t(0));
        QCOMPARE(QString::fromStdString(loaded->outputs[0][1].value_or("")), remote);
        // A stored server is no local preset: the menus do not offer "workbench" as an attention spec.
        QSignalSpy presets(page(), &ComparePage::presetsLoaded);
        page()->refreshPresets();
        QTRY_VERIFY_WITH_TIMEOUT(presets.count() >= 1, uitest::kTimeoutMs);
        for (const ComparePreset& p : form->presets()) QVERIFY2(p.attention != "workbench", qPrintable(p.label));

        // History → Comparisons reopens it: the remote's KV still "not reported".
        m_window->showPage("History");
        HistoryPage* history = m_window->historyPage();
        history->tabs()->setCurrentIndex(1);
        ComparisonList* list = history->comparisons();
        list->refresh();
        QTRY_VERIFY_WITH_TIMEOUT(list->list()->count() == 1, uitest::kTimeoutMs);
        QSignalSpy shown(list, &ComparisonList::comparisonShown);
        list->list()->setCurrentRow(0);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, uitest::kTimeoutMs);
        QCOMPARE(list->table()->columnCount(), 2);
        QCOMPARE(list->table()->item(CompareTable::KvBytes, 1)->text(), QStringLiteral("not reported"));
        QCOMPARE(list->table()->item(CompareTable::Ttft, 1)->text(), table->item(CompareTable::Ttft, 1)->text());
        // Both outputs are there, the remote's under its server kind (History names a remote row by it).
        QVERIFY2(!list->outputsText().contains("(no output)"), qPrintable(list->outputsText()));
        QVERIFY2(list->outputsText().contains("remote: workbench · SmolLM2"), qPrintable(list->outputsText()));
        m_window->showPage("Compare");
    }

    void evaluationSkipsTheRemoteRow() {
        if (!measure::available()) QSKIP("the engine's measurements (workbench/measure.h) are not in this build");
        m_window->showPage("Compare");
        page()->evalWindows()->setValue(1);
        QSignalSpy done(page(), &ComparePage::evaluationFinished);
        QTest::mouseClick(m_window->findChild<QPushButton*>("compareEvaluate"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 2 * uitest::kTimeoutMs);
        CompareTable* table = page()->table();
        QVERIFY(!table->isRowHidden(CompareTable::Perplexity));
        for (int row : {CompareTable::Perplexity, CompareTable::DeltaPpl, CompareTable::Kl, CompareTable::Top1})
            QCOMPARE(table->item(row, 1)->text(), QStringLiteral("not available for a remote"));
        QVERIFY2(table->item(CompareTable::Perplexity, 0)->text().toDouble() > 0, qPrintable(page()->statusText()));
        QCOMPARE(table->item(CompareTable::Top1, 0)->text(), QStringLiteral("100.0%"));  // full attention vs its baseline
        QVERIFY2(page()->statusText().contains("saved"), qPrintable(page()->statusText()));
    }

    void theChatsServerIsOffered() {
        // The window's chat connects to the server: every row's menu offers it, no dialog needed.
        RemoteTarget target = *page()->form()->rowRemote(1);
        m_window->useRemote(target);
        m_window->showPage("History");
        m_window->showPage("Compare");
        CompareConfigForm* form = page()->form();
        QVERIFY(pick(form->presetMenu(2), "The chat's server"));
        QVERIFY(form->rowRemote(2).has_value());
        QCOMPARE(form->rowRemote(2)->url, m_serve->baseUrl());
        // A local preset makes the row local again.
        QVERIFY(pick(form->presetMenu(2), "Chat's current settings"));
        QVERIFY(!form->rowRemote(2).has_value());
        QVERIFY(form->findChild<QLineEdit*>("compareAttention2")->isEnabled());
        m_window->useLocalModel();
    }
};

WB_UI_TEST_MAIN(TestCompareRemote, true)
#include "test_ui_compare_remote.moc"
