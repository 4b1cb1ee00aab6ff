// The session database through the GUI, on the real default model and a temporary database
// ($WORKBENCH_HISTORY_DB): a chat turn is recorded (session, messages, a finished run with ITL
// p90/p99, provenance and per-token samples); History's search finds the session by a word in it
// and not by an absent word; selecting it replays its transcript and charts; Continue reopens it
// (reloading when its configuration differs) and the next turn lands in the same session; Export
// writes JSON that parses and Markdown holding the transcript; Delete removes it.
#include <QAbstractItemModelTester>
#include <QBarSet>
#include <QDir>
#include <QTimer>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLineSeries>
#include <QComboBox>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QTableView>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <functional>
#include <optional>

#include "tests/ui/ui_chat_support.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/store_client.h"
#include "ui/history/history_page.h"
#include "ui/history/history_recorder.h"
#include "ui/history/session_detail.h"
#include "ui/main_window.h"
#include "ui/models/session_table_model.h"
#include "ui/pages/chat_page.h"
#include "ui/pages/conversation_list.h"
#include "ui/pages/metrics_panel.h"
#include "widgets/kv_memory_chart.h"
#include "widgets/token_rate_chart.h"
#include "widgets/token_stream_view.h"
#include "widgets/turn_latency_chart.h"

class TestHistory : public QObject {
    Q_OBJECT
    MainWindow* m_window = nullptr;
    qint64 m_giraffes = 0;  // the session whose first turn mentions giraffes
    QTemporaryDir m_out;

    HistoryPage* history() const { return m_window->historyPage(); }
    ChatPage* chat() const { return m_window->chatPage(); }
    template <typename T>
    T* child(const char* name) const {
        T* w = m_window->findChild<T*>(QString::fromLatin1(name));
        if (!w) qFatal("no child '%s'", name);
        return w;
    }

    ReplySummary send(const QString& text) { return uitest::sendAndWait(m_window, text); }
    // Applies an attention variant in the chat's configuration panel and waits for the reload.
    void applyInChat(const QString& attention, int slidingWindow = 0) {
        m_window->showPage("Chat");
        child<QComboBox>("attentionCombo")->setCurrentText(attention);
        if (slidingWindow > 0) child<QSpinBox>("slidingWindow")->setValue(slidingWindow);
        QSignalSpy loaded(m_window->client(), &EngineClient::modelLoaded);
        QTest::mouseClick(child<QPushButton>("applyButton"), Qt::LeftButton);
        if (!QTest::qWaitFor([&] { return loaded.count() == 1; }, uitest::kTimeoutMs)) qFatal("no reload after Apply");
    }
    template <typename T>
    workbench::Result<T> query(std::function<workbench::Result<T>(workbench::Store&)> task) {
        return uitest::storeQuery<T>(m_window, this, std::move(task));
    }

    int search(const QString& text) {
        QSignalSpy loaded(history(), &HistoryPage::listLoaded);
        history()->searchBox()->setText(text);
        history()->refresh();  // now, rather than after the typing pause; older answers are dropped
        if (!QTest::qWaitFor([&] { return loaded.count() >= 1; }, uitest::kTimeoutMs)) qFatal("no list");
        return loaded.last().at(0).toInt();
    }

private slots:
    void initTestCase() {
        m_window = new MainWindow();
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
        child<QSpinBox>("contextSpin")->setValue(512);
        QSignalSpy loaded(m_window->client(), &EngineClient::modelLoaded);
        m_window->startWithModel(uitest::modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->store()->isOpen(), uitest::kTimeoutMs);
        QCOMPARE(m_window->store()->path(), qEnvironmentVariable("WORKBENCH_HISTORY_DB"));
        QVERIFY(chat()->historyNoticeText().isEmpty());
        child<QDoubleSpinBox>("temperatureSpin")->setValue(0);
        child<QSpinBox>("maxTokensSpin")->setValue(12);
    }
    void cleanupTestCase() { delete m_window; }

    void aTurnIsRecorded() {
        const ReplySummary r = send("Tell me one fact about giraffes.");
        m_giraffes = m_window->recorder()->sessionId();
        QVERIFY(m_giraffes > 0);
        auto messages = query<std::vector<workbench::MessageRecord>>(
            [id = m_giraffes](workbench::Store& s) { return s.load_messages(id); });
        QVERIFY(messages.ok());
        QCOMPARE(messages->size(), size_t{2});
        QCOMPARE(messages->at(0).role, std::string("user"));
        QCOMPARE(QString::fromStdString(messages->at(1).text), r.text);
        auto runs = query<std::vector<workbench::RunRecord>>([id = m_giraffes](workbench::Store& s) { return s.load_runs(id); });
        QVERIFY(runs.ok());
        QCOMPARE(runs->size(), size_t{1});
        const workbench::RunRecord& run = runs->front();
        QCOMPARE(messages->at(1).run_id, run.id);
        QVERIFY(run.finished_unix_ms > 0);
        QCOMPARE(run.n_tokens_generated, r.metrics.n_generated);
        QCOMPARE(QString::fromStdString(run.stop_reason), r.stopReasonName);
        QVERIFY(run.itl_ms_p90 && run.itl_ms_p99 && *run.itl_ms_p99 >= *run.itl_ms_p90);
        QCOMPARE(run.provenance.model_sha256.size(), size_t{64});
        QVERIFY(!run.provenance.cpu_features.empty());
        QVERIFY(run.provenance.n_threads > 0);
        auto samples = query<std::vector<workbench::MetricSample>>([id = run.id](workbench::Store& s) { return s.load_samples(id); });
        QVERIFY(samples.ok());
        QVERIFY(samples->size() >= 2);
        QVERIFY(samples->back().kv_bytes > 0);
        QVERIFY(samples->back().token_index <= r.metrics.n_generated);
        // The configuration is the EngineConfig as the CLI saves it.
        auto config = query<workbench::ConfigurationRecord>([](workbench::Store& s) { return s.load_configuration(1); });
        QVERIFY(config.ok());
        QCOMPARE(config->variant, std::string("full"));
        QVERIFY(QJsonDocument::fromJson(QByteArray::fromStdString(config->config_json)).object().contains("n_ctx"));

        // A second chat: a second session.
        chat()->newChat();
        send("What is the capital of France?");
        QVERIFY(m_window->recorder()->sessionId() != m_giraffes);
    }

    void searchFindsAWordAndNotAnAbsentOne() {
        m_window->showPage("History");
        QTRY_COMPARE_WITH_TIMEOUT(history()->sessions()->rowCount(), 2, uitest::kTimeoutMs);
        QCOMPARE(search("giraffes"), 1);
        QCOMPARE(history()->sessions()->sessionAt(0)->id, m_giraffes);
        QCOMPARE(search("zeppelinquartz"), 0);
        QCOMPARE(search(""), 2);
        // The model filter offers the model; choosing it keeps both.
        QComboBox* model = history()->modelFilter();
        QVERIFY(model->count() >= 2);
        QVERIFY(model->itemText(1).endsWith(".gguf"));
    }

    void selectingReplaysTranscriptAndCharts() {
        QSignalSpy shown(history(), &HistoryPage::sessionShown);
        history()->selectSession(m_giraffes);
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), uitest::kTimeoutMs);
        SessionDetail* d = history()->detail();
        QVERIFY(d->transcript()->toPlainText().contains("giraffes"));
        QCOMPARE(d->transcript()->messageCount(), 2);
        QVERIFY(d->transcript()->footerOf(1).contains("tokens"));
        QVERIFY(d->kvChart()->inUseSeries()->count() >= 2);
        QCOMPARE(d->turnChart()->ttftSet()->count(), 1);
        // Sorting by any column keeps the model's rows.
        history()->table()->sortByColumn(SessionTableModel::Tokens, Qt::AscendingOrder);
        QCOMPARE(history()->table()->model()->rowCount(), 2);
    }


    // Issue 24, defect 10: the transcript takes half the detail's width, not a narrow column,
    // and the words searched for are marked in it.
    void transcriptIsWideAndMarksTheSearchedWords() {
        m_window->resize(1600, 1000);
        QCoreApplication::processEvents();
        SessionDetail* d = history()->detail();
        QTRY_VERIFY2_WITH_TIMEOUT(d->transcript()->width() >= 0.4 * d->width(),
                                  qPrintable(QStringLiteral("%1 of %2").arg(d->transcript()->width()).arg(d->width())), uitest::kTimeoutMs);
        QCOMPARE(d->transcript()->highlightCount(), 0);
        QCOMPARE(search("giraffes"), 1);
        QVERIFY(d->transcript()->highlightCount() >= 1);
        QCOMPARE(d->transcript()->extraSelections().first().cursor.selectedText().toLower(), QStringLiteral("giraffes"));
        QCOMPARE(search(""), 2);
        QCOMPARE(d->transcript()->highlightCount(), 0);
    }
    void continueReopensAndRecordsIntoTheSameSession() {
        // The chat runs another configuration: Continue must reload the session's.
        applyInChat("sliding", 64);
        QSignalSpy loaded(m_window->client(), &EngineClient::modelLoaded);
        QSignalSpy continued(m_window, &MainWindow::sessionContinued);
        m_window->showPage("History");
        history()->selectSession(m_giraffes);
        QCOMPARE(history()->selectedSessionId(), m_giraffes);
        QTest::mouseClick(child<QPushButton>("historyContinue"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(continued.count() == 1, uitest::kTimeoutMs);
        QVERIFY(continued.at(0).at(1).toBool());
        QCOMPARE(loaded.count(), 1);  // reloaded with the session's configuration
        QCOMPARE(m_window->client()->config().attention, std::string("full"));
        QCOMPARE(chat()->history().size(), size_t{2});
        QVERIFY(chat()->transcript()->toPlainText().contains("giraffes"));
        QCOMPARE(m_window->recorder()->sessionId(), m_giraffes);

        send("And one fact about elephants.");
        QCOMPARE(m_window->recorder()->sessionId(), m_giraffes);
        // The continued conversation's next turn is its second: the TTFT chart counts on from it.
        QCOMPARE(chat()->metricsPanel()->findChild<TurnLatencyChart*>()->turnLabels(), QStringList{QStringLiteral("2")});
        auto messages = query<std::vector<workbench::MessageRecord>>(
            [id = m_giraffes](workbench::Store& s) { return s.load_messages(id); });
        QVERIFY(messages.ok());
        QCOMPARE(messages->size(), size_t{4});
        QVERIFY(messages->at(2).text.find("elephants") != std::string::npos);

        // Regenerate replaces the stored reply (its run goes with it); Continue goes on from it.
        QSignalSpy finished(m_window->client(), &EngineClient::replyFinished);
        QTest::mouseClick(child<QPushButton>("regenerateButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, uitest::kTimeoutMs);
        QVERIFY(m_window->store()->waitIdle(uitest::kTimeoutMs));
        const std::string regenerated = chat()->history().back().content;
        messages = query<std::vector<workbench::MessageRecord>>(
            [id = m_giraffes](workbench::Store& s) { return s.load_messages(id); });
        QVERIFY(messages.ok());
        QCOMPARE(messages->size(), size_t{4});
        QCOMPARE(messages->back().text, regenerated);
        // One run per stored reply: the replaced one went with its message.
        auto runs = query<std::vector<workbench::RunRecord>>(
            [id = m_giraffes](workbench::Store& s) { return s.load_runs(id); });
        QVERIFY(runs.ok());
        QCOMPARE(runs->size(), size_t{2});
        QCOMPARE(runs->back().id, messages->back().run_id);
        m_window->showPage("History");
        history()->selectSession(m_giraffes);
        QTest::mouseClick(child<QPushButton>("historyContinue"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(continued.count() == 2, uitest::kTimeoutMs);
        QCOMPARE(loaded.count(), 1);  // the same configuration: no reload
        QCOMPARE(chat()->history().size(), size_t{4});
        QCOMPARE(chat()->history().back().content, regenerated);

        // Edit and send again: the edited question and its reply replace the old turn.
        QTest::mouseClick(child<QPushButton>("editButton"), Qt::LeftButton);
        QCOMPARE(chat()->history().size(), size_t{2});
        send("Tell me one more fact about elephants.");
        messages = query<std::vector<workbench::MessageRecord>>(
            [id = m_giraffes](workbench::Store& s) { return s.load_messages(id); });
        QVERIFY(messages.ok());
        QCOMPARE(messages->size(), size_t{4});
        QCOMPARE(messages->at(2).text, std::string("Tell me one more fact about elephants."));
        QCOMPARE(messages->back().text, chat()->history().back().content);
    }

    // Issue 48: a conversation whose turns ran under different configurations is recorded, listed
    // and shown with each turn's own (it showed the first on every turn).
    void eachTurnKeepsItsConfiguration() {
        applyInChat("sliding", 64);
        send("And a fact about zebras?");
        QCOMPARE(m_window->recorder()->sessionId(), m_giraffes);   // the same conversation goes on
        auto runs = query<std::vector<workbench::RunRecord>>([id = m_giraffes](workbench::Store& s) { return s.load_runs(id); });
        QVERIFY(runs.ok());
        QCOMPARE(runs->size(), size_t{3});
        auto last = query<workbench::ConfigurationRecord>(
            [id = runs->back().configuration_id](workbench::Store& s) { return s.load_configuration(id); });
        QVERIFY(last.ok());
        QVERIFY2(last->variant.rfind("sliding", 0) == 0, last->variant.c_str());
        QVERIFY(runs->front().configuration_id != runs->back().configuration_id);

        m_window->showPage("History");
        QCOMPARE(search(""), 2);
        const int row = history()->sessions()->rowOf(m_giraffes);
        QVERIFY(row >= 0);
        const QString listed = history()->sessions()->index(row, SessionTableModel::Configuration).data().toString();
        QVERIFY2(listed.startsWith("mixed"), qPrintable(listed));
        QSignalSpy shown(history(), &HistoryPage::sessionShown);
        history()->selectSession(m_giraffes);
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), uitest::kTimeoutMs);
        SessionDetail* d = history()->detail();
        QVERIFY2(d->findChild<QLabel*>("sessionHeader")->text().contains("mixed"), qPrintable(d->findChild<QLabel*>("sessionHeader")->text()));
        const int n = d->transcript()->messageCount();
        QVERIFY2(d->transcript()->footerOf(n - 1).contains("sliding"), qPrintable(d->transcript()->footerOf(n - 1)));
        QVERIFY2(d->transcript()->footerOf(1).contains("full"), qPrintable(d->transcript()->footerOf(1)));

        applyInChat("full");   // back to full attention for the tests that follow
    }

    // Issue 48: opening a long session never freezes the window (the tour saw 1.6 s for 5 turns):
    // a 10 ms heartbeat on the GUI thread keeps beating while the session is read and shown.
    void openingALongSessionKeepsTheWindowResponsive() {
        const std::string reply = [] {
            std::string r;
            for (int p = 0; p < 12; ++p)
                r += "A paragraph with **bold**, `code` and a [link](https://example.org) about the long session, number " +
                     std::to_string(p) + ".\n\n```python\nfor i in range(10):\n    print(i * " + std::to_string(p) + ")\n```\n\n";
            return r;
        }();
        auto id = query<workbench::RowId>([reply](workbench::Store& s) -> workbench::Result<workbench::RowId> {
            WB_ASSIGN_OR_RETURN(workbench::RowId session, s.create_session({}));
            for (int turn = 0; turn < 8; ++turn) {
                WB_RETURN_IF_ERROR(s.add_message({0, session, 0, 0, "user", "Question " + std::to_string(turn), 0}));
                workbench::RunRecord run;
                run.session_id = session;
                run.n_tokens_generated = 512;
                run.ttft_ms = 20.0;
                run.started_unix_ms = 1'700'000'000'000 + turn * 60'000;   // a minute of reading between turns
                WB_ASSIGN_OR_RETURN(workbench::RowId run_id, s.begin_run(run));
                std::vector<workbench::MetricSample> samples;
                for (int k = 1; k <= 512; ++k) samples.push_back({k, 10.0 * k, uint64_t(1024) * k, uint64_t(2048) * k, 10.0, 100.0});
                WB_RETURN_IF_ERROR(s.append_samples(run_id, std::move(samples)));
                WB_RETURN_IF_ERROR(s.add_message({0, session, run_id, 0, "assistant", reply, 0}));
            }
            WB_RETURN_IF_ERROR(s.flush());
            return session;
        });
        QVERIFY(id.ok());
        m_window->showPage("History");
        QCOMPARE(search(""), 3);
        QElapsedTimer clock;
        qint64 last = 0, longest = 0;
        QTimer beat;
        beat.setInterval(10);
        QObject::connect(&beat, &QTimer::timeout, [&] {
            longest = std::max(longest, clock.elapsed() - last);
            last = clock.elapsed();
        });
        QSignalSpy shown(history(), &HistoryPage::sessionShown);
        clock.start();
        beat.start();
        history()->selectSession(*id);
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), uitest::kTimeoutMs);
        QTest::qWait(50);
        beat.stop();
        QCOMPARE(history()->detail()->transcript()->messageCount(), 16);
        // The decode chart's clock is time spent generating (8 replies of 5.12 s), as the live
        // chart's: the minutes between turns are left out (they made it 7 minutes long).
        QLineSeries* rate = history()->detail()->rateChart()->rateSeries();
        QVERIFY(rate->count() > 0 && rate->count() <= 1000);
        QVERIFY2(rate->at(rate->count() - 1).x() < 42.0, qPrintable(QString::number(rate->at(rate->count() - 1).x())));
        QVERIFY(rate->at(rate->count() - 1).x() > 40.0);
        // Generous against a busy machine; the stall this guards against was 4.5 s.
        QVERIFY2(longest < 1000, qPrintable(QStringLiteral("the GUI thread stalled %1 ms").arg(longest)));
        qInfo("longest GUI-thread stall while opening: %lld ms", static_cast<long long>(longest));
        const auto st = query<bool>([id = *id](workbench::Store& s) -> workbench::Result<bool> {
            WB_RETURN_IF_ERROR(s.delete_session(id));
            return true;
        });
        QVERIFY(st.ok());
    }

    void exportWritesJsonAndMarkdown() {
        const QString json = m_out.filePath("s.json"), md = m_out.filePath("s.md");
        QSignalSpy exported(history(), &HistoryPage::exported);
        history()->exportSession(m_giraffes, HistoryPage::ExportKind::Json, json);
        history()->exportSession(m_giraffes, HistoryPage::ExportKind::Markdown, md);
        history()->exportSession(m_giraffes, HistoryPage::ExportKind::SamplesCsv, m_out.filePath("s.csv"));
        QTRY_VERIFY_WITH_TIMEOUT(exported.count() == 3, uitest::kTimeoutMs);
        for (const auto& e : exported) QVERIFY2(e.at(1).toBool(), qPrintable(e.at(2).toString()));
        QFile j(json);
        QVERIFY(j.open(QIODevice::ReadOnly));
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(j.readAll(), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QVERIFY(doc.isObject());
        QFile m(md);
        QVERIFY(m.open(QIODevice::ReadOnly));
        const QString markdown = QString::fromUtf8(m.readAll());
        QVERIFY(markdown.contains("giraffes") && markdown.contains("elephants"));
        QFile csv(m_out.filePath("s.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QVERIFY(csv.readAll().count('\n') > 3);
    }

    void deleteRemovesIt() {
        QSignalSpy deleted(history(), &HistoryPage::deleted);
        history()->deleteSession(m_giraffes);
        QTRY_VERIFY_WITH_TIMEOUT(deleted.count() == 1, uitest::kTimeoutMs);
        QVERIFY(deleted.at(0).at(1).toBool());
        QCOMPARE(search("giraffes"), 0);
        QCOMPARE(search(""), 1);
        QCOMPARE(history()->sessions()->rowOf(m_giraffes), -1);
        auto gone = query<workbench::SessionRecord>([id = m_giraffes](workbench::Store& s) { return s.load_session(id); });
        QVERIFY(!gone.ok());
        // It was the chat's session: the next turn opens a new one, and nothing failed.
        QCOMPARE(m_window->recorder()->sessionId(), 0);
        m_window->showPage("Chat");
        send("Name a color.");
        QVERIFY(m_window->recorder()->sessionId() > m_giraffes);
        QVERIFY2(chat()->historyNoticeText().isEmpty(), qPrintable(chat()->historyNoticeText()));

        // Deleted behind the window's back (the CLI, another window): the next turn still lands.
        const qint64 colors = m_window->recorder()->sessionId();
        auto removed = query<bool>([colors](workbench::Store& s) -> workbench::Result<bool> {
            if (auto st = s.delete_session(colors); !st.ok()) return st;
            return true;
        });
        QVERIFY(removed.ok());
        send("Name another color.");
        // (SQLite may hand the deleted row's id out again: check the session's contents, not its id.)
        auto fresh = query<std::vector<workbench::MessageRecord>>(
            [id = m_window->recorder()->sessionId()](workbench::Store& s) { return s.load_messages(id); });
        QVERIFY(fresh.ok());
        QCOMPARE(fresh->size(), size_t{2});
        QCOMPARE(fresh->front().text, std::string("Name another color."));
        QVERIFY2(chat()->historyNoticeText().isEmpty(), qPrintable(chat()->historyNoticeText()));
    }

    // The conversations beside the chat: the stored chats newest first (no comparisons), a search
    // over their messages, a click continues one, rename and delete through the store; and a new
    // window reopens the newest conversation once its model has loaded.
    void conversationListBesideTheChat() {
        m_window->showPage("Chat");
        chat()->newChat();
        send("Tell me one fact about owls.");
        const qint64 owls = m_window->recorder()->sessionId();
        chat()->newChat();
        send("Name a fruit.");
        auto* list = m_window->findChild<ConversationList*>();
        QVERIFY(list && list->isVisible());
        list->refresh();
        QListWidget* items = list->list();
        QTRY_VERIFY_WITH_TIMEOUT(items->count() >= 2, uitest::kTimeoutMs);
        auto rowOf = [&](qint64 id) {
            for (int i = 0; i < items->count(); ++i)
                if (items->item(i)->data(Qt::UserRole).toLongLong() == id) return i;
            return -1;
        };
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(owls) >= 0, uitest::kTimeoutMs);
        for (int i = 0; i < items->count(); ++i) QVERIFY(!items->item(i)->text().startsWith("Compare:"));
        child<QLineEdit>("conversationSearch")->setText("owls");
        QTRY_COMPARE_WITH_TIMEOUT(items->count(), 1, uitest::kTimeoutMs);
        child<QLineEdit>("conversationSearch")->clear();
        QTRY_VERIFY_WITH_TIMEOUT(items->count() >= 2, uitest::kTimeoutMs);

        chat()->newChat();
        QSignalSpy continued(m_window, &MainWindow::sessionContinued);
        QListWidgetItem* owlsItem = items->item(rowOf(owls));
        QTest::mouseClick(items->viewport(), Qt::LeftButton, {}, items->visualItemRect(owlsItem).center());
        QTRY_VERIFY_WITH_TIMEOUT(continued.count() == 1, uitest::kTimeoutMs);
        QVERIFY(continued.at(0).at(1).toBool());
        QCOMPARE(m_window->recorder()->sessionId(), owls);
        QVERIFY(chat()->transcript()->toPlainText().contains("owls"));

        list->renameSession(owls, QStringLiteral("Owl facts"));
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(owls) >= 0 && items->item(rowOf(owls))->text().startsWith("Owl facts"),
                                 uitest::kTimeoutMs);
        auto session = query<workbench::SessionRecord>([id = owls](workbench::Store& s) { return s.load_session(id); });
        QVERIFY(session.ok());
        QCOMPARE(session->title, std::string("Owl facts"));

        // A new window on the same database reopens the newest chat, keeping its own configuration.
        chat()->newChat();
        send("Name a bird.");
        const qint64 newest = m_window->recorder()->sessionId();
        QVERIFY(m_window->store()->waitIdle(uitest::kTimeoutMs));
        QSettings().setValue(QStringLiteral("chat/reopenLast"), true);
        {
            MainWindow second;
            QSignalSpy reopened(&second, &MainWindow::sessionContinued);
            second.startWithModel(uitest::modelPath());
            QTRY_VERIFY_WITH_TIMEOUT(reopened.count() == 1, uitest::kTimeoutMs);
            QCOMPARE(reopened.at(0).at(0).toLongLong(), newest);
            QCOMPARE(second.chatPage()->history().size(), size_t{2});
            QCOMPARE(second.chatPage()->history().front().content, std::string("Name a bird."));
        }
        QSettings().setValue(QStringLiteral("chat/reopenLast"), false);

        // Delete from the list: gone from the list and the store; the chat recording into it starts anew.
        QSignalSpy deleted(list, &ConversationList::deleted);
        list->deleteSession(newest);
        QTRY_VERIFY_WITH_TIMEOUT(deleted.count() == 1, uitest::kTimeoutMs);
        QVERIFY(deleted.at(0).at(1).toBool());
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(newest) < 0, uitest::kTimeoutMs);
    }

    void theTableModelPassesTheModelTester() {
        SessionTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        std::vector<workbench::SessionSummary> rows(3);
        for (int i = 0; i < 3; ++i) {
            rows[static_cast<size_t>(i)].id = i + 1;
            rows[static_cast<size_t>(i)].title = "session " + std::to_string(i);
            rows[static_cast<size_t>(i)].n_turns = i;
            if (i) rows[static_cast<size_t>(i)].mean_decode_tok_s = 10.0 * i;
        }
        model.setSessions(rows);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(0, SessionTableModel::DecodeSpeed).data().toString(), QStringLiteral("—"));
        QCOMPARE(model.index(2, SessionTableModel::Turns).data(SessionTableModel::SortRole).toInt(), 2);
        model.setSessions({});
        QCOMPARE(model.rowCount(), 0);
    }
};

WB_UI_TEST_MAIN(TestHistory, true)
#include "test_ui_history.moc"
