#include "ui/bridge/engine_client.h"

#include "ui/bridge/engine_worker.h"

EngineClient::EngineClient(QObject* parent) : ChatBackend(parent) {
    registerEngineTypes();
    m_thread.setObjectName(QStringLiteral("engine"));
    m_worker = new EngineWorker();
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);

    connect(this, &EngineClient::requestLoad, m_worker, &EngineWorker::loadModel, Qt::QueuedConnection);
    connect(this, &EngineClient::requestChat, m_worker, &EngineWorker::sendChat, Qt::QueuedConnection);
    connect(this, &EngineClient::requestReset, m_worker, &EngineWorker::resetConversation, Qt::QueuedConnection);
    connect(this, &EngineClient::requestUnload, m_worker, &EngineWorker::unloadModel, Qt::QueuedConnection);

    connect(m_worker, &EngineWorker::loadStarted, this, &EngineClient::loadStarted, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::loadProgress, this, &EngineClient::loadProgress, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::modelDigest, this, [this](const QString& sha256) { m_modelSha256 = sha256; },
            Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::modelLoaded, this, [this](const workbench::ModelInfo& info) {
        m_info = info;
        m_keptInfo.reset();
        setBusy(false, m_generating);
        emit modelLoaded(info);
    }, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::loadFailed, this, [this](const QString& message, bool modelKept, bool fileReadable) {
        if (modelKept && m_keptInfo) {
            m_info = m_keptInfo;
            m_config = m_keptConfig;
            m_modelSha256 = m_keptSha256;
        } else {
            m_info.reset();
            modelKept = false;
        }
        m_keptInfo.reset();
        setBusy(false, m_generating);
        emit loadFailed(message, modelKept, fileReadable);
    }, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::replyFormKnown, this, &EngineClient::replyFormKnown, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::tokensArrived, this, &EngineClient::tokensArrived, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::samplesArrived, this, &EngineClient::samplesArrived, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::blockMapArrived, this, &EngineClient::blockMapArrived, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::rooflineArrived, this, &EngineClient::rooflineArrived, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::ceilingsMeasured, this, &EngineClient::ceilingsMeasured, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::replyFinished, this, [this](const ReplySummary& summary) {
        m_cancel.reset();
        setBusy(m_loading, false);
        emit replyFinished(summary);
    }, Qt::QueuedConnection);
    connect(m_worker, &EngineWorker::replyFailed, this, [this](const QString& message) {
        m_cancel.reset();
        setBusy(m_loading, false);
        emit replyFailed(message);
    }, Qt::QueuedConnection);
    m_thread.start();
}

EngineClient::~EngineClient() {
    // A running reply ends at its next decode step; a load cannot be interrupted and is waited for.
    stop();
    m_thread.quit();
    m_thread.wait();
}

void EngineClient::loadModel(const workbench::EngineConfig& config, bool keepOnFailure) {
    stop();  // a running reply ends first; the load is queued behind it
    // Kept for a load that fails back to the model loaded now (see loadFailed); a load queued
    // behind another keeps the model from before both.
    if (m_info) {
        m_keptInfo = m_info;
        m_keptConfig = m_config;
        m_keptSha256 = m_modelSha256;
    }
    m_config = config;
    m_config.on_load_progress = nullptr;  // the worker sets its own, on its thread
    m_info.reset();
    m_modelSha256.clear();
    setBusy(true, m_generating);
    emit requestLoad(m_config, keepOnFailure);
}

bool EngineClient::sendChat(const ChatHistory& messages, const workbench::GenerationRequest& request, const ToolOffer& tools) {
    if (!isLoaded() || isBusy()) return false;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    setBusy(false, true);
    emit requestChat(messages, tools, request, m_cancel);
    return true;
}

void EngineClient::stop() {
    if (m_cancel) m_cancel->store(true);
}

void EngineClient::resetConversation() { emit requestReset(); }

void EngineClient::unload() {
    stop();
    m_info.reset();
    m_keptInfo.reset();
    emit requestUnload();
}

void EngineClient::setBusy(bool loading, bool generating) {
    const bool wasBusy = isBusy();
    m_loading = loading;
    m_generating = generating;
    if (wasBusy != isBusy()) emit busyChanged(isBusy());
}
