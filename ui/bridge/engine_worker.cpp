#include "ui/bridge/engine_worker.h"

#include <QDateTime>
#include <QFileInfo>
#include <string>

#include "workbench/store.h"

void registerEngineTypes() {
    qRegisterMetaType<workbench::EngineConfig>();
    qRegisterMetaType<workbench::ModelInfo>();
    qRegisterMetaType<workbench::GenerationRequest>();
    qRegisterMetaType<ChatHistory>();
    qRegisterMetaType<CancelFlag>();
    qRegisterMetaType<TokenSample>();
    qRegisterMetaType<QList<TokenSample>>();
    qRegisterMetaType<ReplySummary>();
}

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) {}

// Runs on the worker thread (QThread::finished → deleteLater), so the Engine dies where it lived.
EngineWorker::~EngineWorker() = default;

void EngineWorker::loadModel(const workbench::EngineConfig& requested) {
    emit loadStarted(QString::fromStdString(requested.model_path));
    // The old model goes first: two models at once could double the memory of a large one.
    m_engine.reset();
    workbench::EngineConfig config = requested;
    int lastPercent = -1;
    config.on_load_progress = [this, &lastPercent](const std::string& step, float fraction) {
        // Per-tensor callbacks would flood the GUI's queue; whole percents are enough for a bar.
        const int percent = static_cast<int>(fraction * 100.0f);
        if (percent == lastPercent) return;
        lastPercent = percent;
        emit loadProgress(QString::fromStdString(step), fraction);
    };
    auto loaded = workbench::Engine::load(config);
    if (!loaded.ok()) {
        emit loadFailed(QString::fromStdString(loaded.status().message()));
        return;
    }
    m_engine = std::move(loaded).value();
    emit modelDigest(modelDigestFor(requested.model_path));
    emit modelLoaded(m_engine->model_info());
}

void EngineWorker::sendChat(const ChatHistory& messages, const workbench::GenerationRequest& request,
                            const CancelFlag& cancel) {
    if (!m_engine) {
        emit replyFailed(tr("No model is loaded."));
        return;
    }
    QElapsedTimer clock;
    clock.start();
    QString pendingText;
    QList<TokenSample> pendingSamples;
    qint64 lastFlushNs = 0, lastSampleNs = 0;
    int lastTokens = -1;
    auto flush = [&] {
        if (!pendingText.isEmpty()) emit tokensArrived(pendingText);
        if (!pendingSamples.isEmpty()) emit samplesArrived(pendingSamples);
        pendingText.clear();
        pendingSamples.clear();
    };
    // Called on this thread between decode steps, so reading the cache's usage here is safe
    // and sees exactly the tokens generated so far.
    auto onText = [&](std::string_view text) {
        const qint64 now = clock.nsecsElapsed();
        const workbench::KvUsageReport usage = m_engine->kv_usage();
        TokenSample s;
        s.nTokensContext = usage.n_tokens;
        s.kvBytesInUse = usage.bytes_in_use;
        s.kvBytesFull = usage.bytes_full;
        s.kvBytesAllocated = usage.bytes_allocated;
        s.msSinceRequest = now / 1e6;
        s.firstOfReply = lastTokens < 0;
        // A callback may carry several tokens (a held-back stop-string prefix, a split UTF-8
        // character): spread the gap over them.
        if (!s.firstOfReply) s.gapMs = (now - lastSampleNs) / 1e6 / std::max(1, usage.n_tokens - lastTokens);
        lastSampleNs = now;
        lastTokens = usage.n_tokens;
        pendingText += QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
        pendingSamples.append(s);
        if (now - lastFlushNs >= qint64(kBatchMs) * 1000000) {
            flush();
            lastFlushNs = now;
        }
    };
    auto result = m_engine->chat(messages, request, onText, cancel.get());
    flush();
    if (!result.ok()) {
        emit replyFailed(QString::fromStdString(result.status().message()));
        return;
    }
    ReplySummary summary;
    summary.text = QString::fromStdString(result->text);
    summary.metrics = result->metrics;
    summary.stopReason = result->stop_reason;
    summary.stopReasonName = QString::fromLatin1(workbench::stop_reason_name(result->stop_reason));
    emit replyFinished(summary);
}

QString EngineWorker::modelDigestFor(const std::string& path) {
    // Once per file: a reload of the same file with other settings (Apply) reads it again only
    // when it changed on disk.
    const QFileInfo file(QString::fromStdString(path));
    const QString key = file.absoluteFilePath() + QLatin1Char('|') + QString::number(file.size()) + QLatin1Char('|') +
                        QString::number(file.lastModified().toMSecsSinceEpoch());
    if (key == m_digestKey) return m_digest;
    auto digest = workbench::file_sha256(path);
    m_digestKey = key;
    m_digest = digest.ok() ? QString::fromStdString(*digest) : QString();
    return m_digest;
}

void EngineWorker::resetConversation() {
    if (m_engine) m_engine->reset();
}

void EngineWorker::unloadModel() { m_engine.reset(); }
