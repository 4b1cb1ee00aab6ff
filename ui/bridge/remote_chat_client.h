// The Chat page's backend for a remote OpenAI-compatible server (vLLM, SGLang, llama-server, our
// own `workbench-cli serve`): each turn is one streamed /v1/chat/completions (wbremote) on a
// thread of its own, its text and per-piece timing batched back every 40 ms as queued calls, its
// figures measured on this side; while it streams, the server's /metrics is polled every second
// for its KV cache in use. RemoteProbe asks a server for its models and kind off the GUI thread
// (the connect dialog). Both live on the GUI thread; only their worker threads touch the network.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QStringList>
#include <optional>
#include <thread>

#include "ui/bridge/chat_backend.h"

class QNetworkAccessManager;
class QNetworkReply;
class QTimer;
struct RemoteOutcome;  // a finished stream, as the worker thread hands it back

// A server to chat with, as the connect dialog chose it.
struct RemoteTarget {
    QString url;             // the base URL as typed: "http://127.0.0.1:8080/v1"
    QString apiKey;          // empty: none sent
    QString model;           // empty: the server's default
    QString serverKind;      // wbremote::server_kind_name: "workbench", "vllm", "llama.cpp", "unknown"…
    qint64 maxModelLen = 0;  // the model's context when the server says; 0: unknown
};

// What a server answered to GET /v1/models, and what kind of server it is.
struct RemoteProbeResult {
    bool ok = false;
    QString error;           // why not, with the server's own message when it sent one
    QStringList models;      // ids, in the server's order
    QList<qint64> maxModelLens;  // per model; 0 when not given
    QString serverKind;
};

class RemoteProbe : public QObject {
    Q_OBJECT
public:
    explicit RemoteProbe(QObject* parent = nullptr);
    ~RemoteProbe() override;  // waits for a probe under way (bounded by its connect/read timeouts)

    // False when a probe is already running; else `finished` follows, on the GUI thread.
    bool start(const QString& url, const QString& apiKey);
    bool isRunning() const { return m_running; }

signals:
    void finished(const RemoteProbeResult& result);

private:
    std::thread m_thread;
    bool m_running = false;
};

class RemoteChatClient : public ChatBackend {
    Q_OBJECT
public:
    explicit RemoteChatClient(QObject* parent = nullptr);
    // A running reply is cancelled and its thread joined: it ends at the next piece the server
    // sends, or at the read timeout when the server has gone silent.
    ~RemoteChatClient() override;

    // The server to talk to from the next turn on; an empty url disconnects.
    void setTarget(const RemoteTarget& target);
    const RemoteTarget& target() const { return m_target; }
    // "workbench at http://127.0.0.1:8080/v1" (the footer's and status bar's words).
    QString description() const;
    // The server's /metrics URL: the base URL's root, not under /v1.
    static QString metricsUrl(const QString& baseUrl);

    using ChatBackend::sendChat;
    bool sendChat(const ChatHistory& messages, const workbench::GenerationRequest& request, const ToolOffer& tools) override;
    void stop() override;
    bool isReady() const override { return !m_target.url.isEmpty(); }
    bool isGenerating() const override { return m_generating; }
    bool isBusy() const override { return m_generating; }
    int contextLength() const override { return static_cast<int>(m_target.maxModelLen); }
    // The server keeps no conversation: every turn sends it whole.
    void resetConversation() override {}

signals:
    // A /metrics poll during a reply: the KV share in use (0…1), or reported false when the
    // server exposes none of the names servermetrics::kvUsageFraction knows.
    void kvUsageChanged(bool reported, double fraction);

private:
    void pollMetrics();
    void onPolled(QNetworkReply* reply);
    // On the GUI thread, once per reply: its end as a summary or a failure.
    void finishReply(const RemoteOutcome& outcome);

    RemoteTarget m_target;
    std::thread m_thread;
    CancelFlag m_cancel;
    bool m_generating = false;
    quint64 m_seed = 0;
    QNetworkAccessManager* m_net = nullptr;
    QTimer* m_pollTimer = nullptr;
    QNetworkReply* m_pendingPoll = nullptr;
    std::optional<double> m_kvPeak;  // this reply's most, from the polls
};

Q_DECLARE_METATYPE(RemoteProbeResult)
