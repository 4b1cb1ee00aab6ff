// HistoryRecorder writes the chat into the session database as it happens: a session per chat
// (with the configuration it started under), the user's messages, and per reply a run (begin_run,
// finish_run with the engine's metrics, ITL p90/p99 from the reply's gaps, provenance) with its
// per-token samples and the assistant's message. It keeps the reply's samples on the GUI thread
// and hands finished turns to the StoreClient, whose thread does every SQLite call; the ids it
// needs (session, configuration) live on that thread too, so nothing here waits for a commit.
// A turn that failed (and went back to the input box) is not recorded. A regenerated or edited
// turn replaces what it superseded in the session (Store::truncate_session), so the stored
// transcript is the chat's. GUI thread only.
#pragma once

#include <QDateTime>
#include <QObject>

#include "ui/bridge/engine_types.h"
#include "workbench/store.h"

class StoreClient;

class HistoryRecorder : public QObject {
    Q_OBJECT
public:
    explicit HistoryRecorder(StoreClient* store, QObject* parent = nullptr);

    // The model now loaded, as it was configured, and its file's SHA-256 (provenance). Later
    // runs are recorded under this configuration; a session keeps the one it started with.
    void setModel(const workbench::EngineConfig& config, const workbench::ModelInfo& info, const QString& sha256);
    // A remote server instead (the chat connected to one): later runs are recorded under its
    // configuration (backend "remote": base URL, model id, server kind) with this machine's and
    // build's provenance.
    void setRemote(const QString& baseUrl, const QString& model, const QString& serverKind);

    // The chat's events, in order.
    // `inputs`: what the turn adds before the reply (the user's message, or the results of the
    // calls the last reply made); empty for a regenerated reply. `userIndex`: which of the chat's
    // user messages (0-based) the reply answers, and `afterUser` how many turns (calls, results)
    // stand between it and a regenerated reply: what the session holds past them (a reply
    // regenerated, a message edited and sent again) is replaced when the reply is recorded.
    // userIndex -1: the turn only adds (it answers calls).
    void replyStarted(const ChatHistory& inputs, int userIndex, int afterUser = 0);
    void addSamples(const QList<TokenSample>& samples);
    // `reply`: the assistant's message as the chat keeps it (answer, thinking, calls).
    void replyFinished(const ReplySummary& summary, const workbench::ChatMessage& reply);
    void replyFailed();
    // A new chat: the next turn opens a new session.
    void startNewSession();
    // Continue a stored session: the next turns are recorded into it.
    void continueSession(workbench::RowId sessionId);

    // The session the chat records into (0: none yet); known once its row exists.
    workbench::RowId sessionId() const { return m_sessionId; }

    // The reply's samples as the store keeps them: token index within the reply (1-based), time
    // since the request, KV bytes, the gap before the token and decode speed so far.
    static std::vector<workbench::MetricSample> toMetricSamples(const QList<TokenSample>& samples,
                                                                const workbench::GenerationMetrics& metrics);

signals:
    // A session row was created or chosen for the chat (0: a new chat, no row yet).
    void sessionChanged(qint64 sessionId);

private:
    struct Shared;  // the ids, owned by the store thread
    StoreClient* m_store;
    std::shared_ptr<Shared> m_shared;
    workbench::ConfigurationRecord m_configuration;
    workbench::RunProvenance m_provenance;
    QList<TokenSample> m_samples;
    ChatHistory m_pendingInputs;
    int m_pendingUserIndex = -1;
    int m_pendingAfterUser = 0;
    qint64 m_startedMs = 0;
    bool m_inReply = false;
    workbench::RowId m_sessionId = 0;
};
