#include "ui/history/history_recorder.h"

#include "remote/openai_client.h"

#include <algorithm>

#include "ui/bridge/store_client.h"

// The ids the recording needs. Created on the GUI thread, then read and written only by tasks on
// the store thread (which run one at a time, in order), so it needs no lock.
struct HistoryRecorder::Shared {
    workbench::RowId sessionId = 0;
    workbench::RowId configurationId = 0;
    std::string configurationJson;  // the configuration configurationId was saved for
};

HistoryRecorder::HistoryRecorder(StoreClient* store, QObject* parent)
    : QObject(parent), m_store(store), m_shared(std::make_shared<Shared>()) {}

void HistoryRecorder::setModel(const workbench::EngineConfig& config, const workbench::ModelInfo& info,
                               const QString& sha256) {
    m_configuration = workbench::make_configuration(config);
    m_provenance = workbench::app_provenance();
    m_provenance.model_sha256 = sha256.toStdString();
    m_provenance.cpu_features = info.cpu_features;
    m_provenance.backend = info.backend;
    m_provenance.n_threads = info.n_threads;
}

void HistoryRecorder::setRemote(const QString& baseUrl, const QString& model, const QString& serverKind) {
    m_configuration = wbremote::remote_configuration(baseUrl.toStdString(), model.toStdString(), serverKind.toStdString());
    m_provenance = workbench::app_provenance();
    m_provenance.backend = "remote";
}

namespace {

// How many of the session's stored messages the chat still shows before this turn: those before
// the answered user message (a new or edited turn), or up to and including it and the calls and
// results after it (a regenerated reply). Counting user messages copes with sessions of earlier
// versions, which kept a regenerated reply beside the one it replaced.
int32_t messagesToKeep(const std::vector<workbench::MessageRecord>& messages, int userIndex, int afterUser, bool regenerated) {
    int users = 0;
    for (size_t i = 0; i < messages.size(); ++i) {
        if (messages[i].role != "user") continue;
        if (users++ == userIndex)
            return static_cast<int32_t>(std::min(messages.size(), regenerated ? i + 1 + static_cast<size_t>(afterUser) : i));
    }
    return static_cast<int32_t>(messages.size());
}

}  // namespace

void HistoryRecorder::replyStarted(const ChatHistory& inputs, int userIndex, int afterUser) {
    m_pendingInputs = inputs;
    m_pendingUserIndex = userIndex;
    m_pendingAfterUser = afterUser;
    m_samples.clear();
    m_startedMs = QDateTime::currentMSecsSinceEpoch();
    m_inReply = true;
}

void HistoryRecorder::addSamples(const QList<TokenSample>& samples) {
    if (m_inReply) m_samples.append(samples);
}

void HistoryRecorder::replyFailed() {
    m_inReply = false;
    m_samples.clear();
    m_pendingInputs.clear();
}

void HistoryRecorder::startNewSession() {
    m_sessionId = 0;
    m_store->post([shared = m_shared](workbench::Store&) { shared->sessionId = 0; });
    emit sessionChanged(0);
}

void HistoryRecorder::continueSession(workbench::RowId sessionId) {
    m_sessionId = sessionId;
    m_store->post([shared = m_shared, sessionId](workbench::Store&) { shared->sessionId = sessionId; });
    emit sessionChanged(sessionId);
}

std::vector<workbench::MetricSample> HistoryRecorder::toMetricSamples(const QList<TokenSample>& samples,
                                                                       const workbench::GenerationMetrics& metrics) {
    std::vector<workbench::MetricSample> out;
    out.reserve(static_cast<size_t>(samples.size()));
    // Counted from the reply's first sample (token 1), so the index does not depend on whether
    // the cache already holds the newest token when the callback runs.
    int firstContext = -1;
    double firstMs = 0;
    for (const TokenSample& s : samples) {
        if (firstContext < 0) {
            firstContext = s.nTokensContext;
            firstMs = s.msSinceRequest;
        }
        workbench::MetricSample m;
        m.token_index = std::min(1 + s.nTokensContext - firstContext, std::max(1, metrics.n_generated));
        m.t_ms = s.msSinceRequest;
        m.kv_bytes = s.kvBytesInUse;
        m.kv_bytes_full = s.kvBytesFull;
        if (m.token_index > 1) {
            m.itl_ms = s.gapMs;
            // Decode speed so far, as the engine defines it: tokens after the first over the time since it.
            if (s.msSinceRequest > firstMs) m.tok_s = (m.token_index - 1) * 1000.0 / (s.msSinceRequest - firstMs);
        }
        // Two callbacks for one token (a held-back stop-string prefix) would collide on the key.
        if (!out.empty() && out.back().token_index >= m.token_index) continue;
        out.push_back(m);
    }
    return out;
}

void HistoryRecorder::replyFinished(const ReplySummary& summary, const workbench::ChatMessage& replyMessage) {
    if (!m_inReply) return;
    m_inReply = false;
    if (!m_store->isOpen() || m_configuration.config_json.empty()) return;

    workbench::RunRecord run;
    run.started_unix_ms = m_startedMs;
    run.provenance = m_provenance;
    workbench::apply_metrics(run, summary.metrics);
    run.stop_reason = summary.stopReasonName.toStdString();
    run.seed = static_cast<int64_t>(summary.seed);
    std::vector<workbench::MetricSample> samples = toMetricSamples(m_samples, summary.metrics);
    m_samples.clear();

    std::vector<workbench::MessageRecord> inputs;
    for (const workbench::ChatMessage& m : m_pendingInputs) {
        inputs.push_back(workbench::message_record(m));
        inputs.back().created_unix_ms = m_startedMs;
    }
    m_pendingInputs.clear();
    const int userIndex = m_pendingUserIndex, afterUser = m_pendingAfterUser;
    workbench::MessageRecord reply = workbench::message_record(replyMessage);

    // One task for the whole turn: the ids it creates are used at once, in order, on the store thread.
    m_store->call<workbench::RowId>(
        [shared = m_shared, configuration = m_configuration, run, samples = std::move(samples), inputs, reply,
         userIndex, afterUser](workbench::Store& store) mutable -> workbench::Result<workbench::RowId> {
            if (shared->configurationId == 0 || shared->configurationJson != configuration.config_json) {
                auto id = store.save_configuration(configuration);
                if (!id.ok()) return id.status();
                shared->configurationId = *id;
                shared->configurationJson = configuration.config_json;
            }
            // Deleted elsewhere (another window, the CLI): the turn opens a new session rather than fail.
            if (shared->sessionId != 0) {
                auto existing = store.load_session(shared->sessionId);
                if (!existing.ok() && existing.status().code() == workbench::StatusCode::not_found) shared->sessionId = 0;
            }
            if (shared->sessionId == 0) {
                workbench::SessionRecord session;
                session.configuration_id = shared->configurationId;
                auto id = store.create_session(session);
                if (!id.ok()) return id.status();
                shared->sessionId = *id;
            }
            if (userIndex >= 0) {
                auto stored = store.load_messages(shared->sessionId);
                if (!stored.ok()) return stored.status();
                const int32_t keep = messagesToKeep(*stored, userIndex, afterUser, inputs.empty());
                if (keep < static_cast<int32_t>(stored->size()))
                    if (auto st = store.truncate_session(shared->sessionId, keep); !st.ok()) return st;
            }
            for (workbench::MessageRecord& input : inputs) {
                input.session_id = shared->sessionId;
                if (auto st = store.add_message(input); !st.ok()) return st;
            }
            run.session_id = shared->sessionId;
            run.configuration_id = shared->configurationId;
            auto runId = store.begin_run(run);
            if (!runId.ok()) return runId.status();
            run.id = *runId;
            if (auto st = store.finish_run(run); !st.ok()) return st;
            if (auto st = store.append_samples(run.id, std::move(samples)); !st.ok()) return st;
            reply.session_id = shared->sessionId;
            reply.run_id = run.id;
            if (auto st = store.add_message(reply); !st.ok()) return st;
            // Queued writes fail later, in their batch: flush to report them with this turn.
            if (auto st = store.flush(); !st.ok()) return st;
            return shared->sessionId;
        },
        this, [this](const workbench::Result<workbench::RowId>& result) {
            if (!result.ok()) {
                emit m_store->writeFailed(QString::fromStdString(result.status().message()));
                return;
            }
            if (*result != m_sessionId) {
                m_sessionId = *result;
                emit sessionChanged(m_sessionId);
            }
        });
}
