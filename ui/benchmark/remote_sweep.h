// A remote server's throughput and latency against concurrency, for the Benchmark page: each
// concurrency level is one `bench --remote` run (wbremote::run_serve_benchmark, vLLM's
// definitions) on a thread of its own; points arrive as queued signals on the GUI thread.
// Stop ends the sweep after the level under way. GUI-thread object; the work runs off it.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>
#include <memory>

#include "remote/openai_client.h"

// One concurrency level's aggregates.
struct RemotePoint {
    int concurrency = 0, completed = 0, failed = 0, nPrompt = 0, nGen = 0;
    double outputTokS = 0, totalTokS = 0, ttftMs = 0, tpotMs = 0;
    QString model, server, firstError;
    QString json;   // as `bench --remote --json` prints it
};
Q_DECLARE_METATYPE(RemotePoint)

class RemoteSweep : public QObject {
    Q_OBJECT
public:
    explicit RemoteSweep(QObject* parent = nullptr);
    ~RemoteSweep() override;   // stops and waits for the level under way

    // False (nothing started) while a sweep runs.
    bool start(const wbremote::RemoteEndpoint& endpoint, const QList<int>& concurrencies, int promptsPerLevel, int inputLen, int outputLen);
    void stop();
    bool isRunning() const;

signals:
    void pointReady(const RemotePoint& point);
    void failed(const QString& message);   // the server could not be reached: nothing measured
    void finished();

private:
    QThread* m_thread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_stop;
};
