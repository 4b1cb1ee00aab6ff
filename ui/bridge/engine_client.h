// EngineClient is the GUI thread's handle on the engine: it starts the worker thread, moves an
// EngineWorker onto it, and forwards requests as queued signals and results as its own signals.
// It tracks what the GUI needs to know synchronously (a model is loaded, a reply is running,
// the loaded ModelInfo). stop() sets the running request's cancel flag directly: the worker is
// busy inside the engine and could not take a queued call until the reply ends.
// It is the Chat page's local ChatBackend (the chat signals are declared there).
// Lives on the GUI thread; all its methods are GUI-thread only.
#pragma once

#include <QObject>
#include <QThread>
#include <optional>

#include "ui/bridge/chat_backend.h"
#include "ui/bridge/engine_types.h"

class EngineWorker;

class EngineClient : public ChatBackend {
    Q_OBJECT
public:
    explicit EngineClient(QObject* parent = nullptr);
    ~EngineClient() override;

    // A load that fails leaves the model loaded before in place (loadFailed's modelKept), unless
    // keepOnFailure is false.
    void loadModel(const workbench::EngineConfig& config, bool keepOnFailure = true);
    // False (and nothing sent) when no model is loaded or a reply or load is running.
    using ChatBackend::sendChat;
    bool sendChat(const ChatHistory& messages, const workbench::GenerationRequest& request, const ToolOffer& tools) override;
    // Halts the running reply within one decode step; it still ends with replyFinished.
    void stop() override;
    void resetConversation() override;
    // Frees the loaded model; isLoaded() turns false.
    void unload();

    bool isLoaded() const { return m_info.has_value(); }
    bool isLoading() const { return m_loading; }
    bool isGenerating() const override { return m_generating; }
    bool isBusy() const override { return m_loading || m_generating; }
    bool isReady() const override { return isLoaded(); }
    int contextLength() const override { return m_info ? m_info->n_ctx : 0; }
    const std::optional<workbench::ModelInfo>& modelInfo() const { return m_info; }
    // The configuration of the loaded model (or of the load under way).
    const workbench::EngineConfig& config() const { return m_config; }
    // The loaded model file's SHA-256, known when modelLoaded arrives (hashed on the worker thread).
    QString modelSha256() const { return m_modelSha256; }

signals:
    void loadStarted(const QString& path);
    void loadProgress(const QString& step, double fraction);
    void modelLoaded(const workbench::ModelInfo& info);
    // modelKept: the model loaded before still serves (modelInfo() and config() are its again).
    void loadFailed(const QString& message, bool modelKept, bool fileReadable);
    void blockMapArrived(const BlockMapSnapshot& map);
    void rooflineArrived(const workbench::Engine::RooflineSnapshot& roofline);
    void ceilingsMeasured(const MachineCeilings& ceilings);

    // To the worker (queued: it lives on m_thread).
    void requestLoad(const workbench::EngineConfig& config, bool keepOnFailure);
    void requestChat(const ChatHistory& messages, const ToolOffer& tools, const workbench::GenerationRequest& request, const CancelFlag& cancel);
    void requestReset();
    void requestUnload();

private:
    void setBusy(bool loading, bool generating);

    QThread m_thread;
    EngineWorker* m_worker = nullptr;  // owned by m_thread's lifetime (deleteLater on finished)
    std::optional<workbench::ModelInfo> m_info;
    workbench::EngineConfig m_config;
    QString m_modelSha256;
    // The loaded model's, while a load that may fail back to it runs.
    std::optional<workbench::ModelInfo> m_keptInfo;
    workbench::EngineConfig m_keptConfig;
    QString m_keptSha256;
    CancelFlag m_cancel;
    bool m_loading = false;
    bool m_generating = false;
};
