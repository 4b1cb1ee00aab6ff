// The bridge on the real default model, through EngineClient as the GUI uses it: the engine
// lives on its own thread, results arrive on the GUI thread as queued signals, streamed text
// adds up to the reply, samples carry the cache's growth, Stop ends a reply as 'cancelled'
// within a decode step or so, and a corrupt file is a message, after which a good load works.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <random>

#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "tests/greedy_request.h"

using wbtest::greedy;

namespace {

workbench::EngineConfig smallConfig(const QString& path) {
    workbench::EngineConfig c;
    c.model_path = path.toStdString();
    c.n_ctx = 1024;
    return c;
}

}  // namespace

class TestEngineWorker : public QObject {
    Q_OBJECT
    EngineClient* m_client = nullptr;

    void loadDefault() {
        QSignalSpy loaded(m_client, &EngineClient::modelLoaded);
        m_client->loadModel(smallConfig(uitest::modelPath()));
        QVERIFY(m_client->isLoading());
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, uitest::kTimeoutMs);
        QVERIFY(m_client->isLoaded());
    }

private slots:
    void initTestCase() { m_client = new EngineClient(this); }
    void cleanupTestCase() { delete m_client; }

    void loadsOnTheWorkerThread() {
        QThread* seenOn = nullptr;
        connect(m_client, &EngineClient::modelLoaded, this, [&] { seenOn = QThread::currentThread(); });
        loadDefault();
        QCOMPARE(seenOn, QThread::currentThread());  // delivered to the GUI thread
        const workbench::ModelInfo& info = *m_client->modelInfo();
        QCOMPARE(info.n_ctx, 1024);
        QCOMPARE(info.kv_bytes_per_token, uint64_t{23040});  // 2 · 30 · 3 · 64 · 2 bytes at f16
    }

    void streamsAReplyWithSamples() {
        QSignalSpy text(m_client, &EngineClient::tokensArrived);
        QSignalSpy samples(m_client, &EngineClient::samplesArrived);
        QSignalSpy finished(m_client, &EngineClient::replyFinished);
        QVERIFY(m_client->sendChat({{"user", "What is the capital of France? Answer in one word."}}, greedy(24, true)));
        QVERIFY(m_client->isGenerating());
        QVERIFY(!m_client->sendChat({{"user", "busy"}}, greedy(4, true)));  // one reply at a time
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, uitest::kTimeoutMs);
        QVERIFY(!m_client->isBusy());
        const auto summary = finished.at(0).at(0).value<ReplySummary>();
        QString streamed;
        for (const auto& args : text) streamed += args.at(0).toString();
        QCOMPARE(streamed, summary.text);
        QVERIFY2(summary.text.contains("Paris"), qPrintable(summary.text));
        QVERIFY(summary.metrics.n_generated > 0 && summary.metrics.n_generated <= 24);
        QVERIFY(summary.metrics.ttft_ms > 0);

        QList<TokenSample> all;
        for (const auto& args : samples) all += args.at(0).value<QList<TokenSample>>();
        QVERIFY(!all.isEmpty());
        // Batching: never more text signals than pieces of text.
        QVERIFY(text.count() <= all.size());
        QVERIFY(all.first().firstOfReply);
        for (int i = 1; i < all.size(); ++i) {
            QVERIFY(!all[i].firstOfReply);
            QVERIFY(all[i].nTokensContext > all[i - 1].nTokensContext);
            QVERIFY(all[i].gapMs > 0);
            QVERIFY(all[i].kvBytesFull >= all[i - 1].kvBytesFull);
        }
        // Full attention: the cache holds every token, in 16-token blocks, at 23040 bytes each.
        const TokenSample& last = all.last();
        const quint64 blockBytes = quint64((last.nTokensContext + 15) / 16 * 16) * 23040;
        QCOMPARE(last.kvBytesInUse, blockBytes);
        QCOMPARE(last.kvBytesFull, blockBytes);
        QVERIFY(last.kvBytesAllocated >= last.kvBytesInUse);
    }

    void stopEndsTheReplyAsCancelled() {
        m_client->resetConversation();
        QSignalSpy finished(m_client, &EngineClient::replyFinished);
        int pieces = 0;
        auto c = connect(m_client, &EngineClient::tokensArrived, this, [&] {
            if (++pieces == 1) m_client->stop();
        });
        QVERIFY(m_client->sendChat({{"user", "Write a long story about a dragon who learns to read."}}, greedy(400, true)));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, uitest::kTimeoutMs);
        disconnect(c);
        const auto summary = finished.at(0).at(0).value<ReplySummary>();
        QCOMPARE(summary.stopReasonName, QStringLiteral("cancelled"));
        QVERIFY(summary.stopReason == workbench::StopReason::cancelled);
        QVERIFY2(summary.metrics.n_generated < 400, qPrintable(QString::number(summary.metrics.n_generated)));
    }

    void corruptFileIsAMessageAndTheModelStays() {
        QTemporaryDir dir;
        const QString path = dir.filePath("corrupt.gguf");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        std::mt19937 rng(7);
        QByteArray bytes(64 * 1024, '\0');
        for (char& b : bytes) b = static_cast<char>(rng());
        f.write(bytes);
        f.close();

        loadDefault();
        QSignalSpy failed(m_client, &EngineClient::loadFailed);
        QSignalSpy loaded(m_client, &EngineClient::modelLoaded);
        m_client->loadModel(smallConfig(path));
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, uitest::kTimeoutMs);
        const QString message = failed.at(0).at(0).toString();
        QVERIFY2(message.contains("corrupt.gguf"), qPrintable(message));
        // Refused before the loaded model was freed: it still answers, with its own settings.
        QVERIFY(failed.at(0).at(1).toBool());
        QCOMPARE(loaded.count(), 0);
        QVERIFY(m_client->isLoaded());
        QCOMPARE(QString::fromStdString(m_client->modelInfo()->path), uitest::modelPath());
        QCOMPARE(QString::fromStdString(m_client->config().model_path), uitest::modelPath());
        QVERIFY(!m_client->modelSha256().isEmpty());
        QSignalSpy finished(m_client, &EngineClient::replyFinished);
        QVERIFY(m_client->sendChat({{"user", "Hi"}}, greedy(4, true)));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, uitest::kTimeoutMs);

        // Without keepOnFailure (Compare's rows) the failure leaves no model, and the worker lives on.
        m_client->loadModel(smallConfig(path), false);
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 2, uitest::kTimeoutMs);
        QVERIFY(!failed.at(1).at(1).toBool());
        QVERIFY(!m_client->isLoaded());
        QVERIFY(!m_client->sendChat({{"user", "hello"}}, greedy(4, true)));
        loadDefault();
    }

    void settingsThatCannotLoadFallBackToTheLoadedOnes() {
        // Settings the engine refuses: a spec that does not parse is refused before the loaded
        // model is freed; one that parses but does not fit this model (a latent rank above 384)
        // fails at load, and the settings that worked load again. Either way the chat goes on.
        for (const char* attention : {"nonsense", "latent:rank=5000"}) {
            loadDefault();
            workbench::EngineConfig refused = smallConfig(uitest::modelPath());
            refused.attention = attention;
            QSignalSpy failed(m_client, &EngineClient::loadFailed);
            m_client->loadModel(refused);
            QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, uitest::kTimeoutMs);
            const QString message = failed.at(0).at(0).toString();
            QVERIFY2(message.contains(attention), qPrintable(message));
            QVERIFY(failed.at(0).at(1).toBool());
            QVERIFY(m_client->isLoaded());
            QCOMPARE(m_client->config().attention, std::string("full"));
            QCOMPARE(m_client->modelInfo()->attention, std::string("full"));
            QSignalSpy finished(m_client, &EngineClient::replyFinished);
            QVERIFY(m_client->sendChat({{"user", "Hi"}}, greedy(4, true)));
            QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, uitest::kTimeoutMs);
        }
    }
};

WB_UI_TEST_MAIN(TestEngineWorker, true)
#include "test_ui_engine_worker.moc"

