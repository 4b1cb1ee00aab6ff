// EngineWorker owns the Engine and runs every call on it, on its own QThread (see EngineClient,
// which creates the thread and talks to the worker only through queued signals). Tokens go back
// batched (every ~40 ms) with the KV and timing samples taken between decode steps. It never
// touches a widget and never throws; failures come back as messages.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <memory>

#include "ui/bridge/engine_types.h"

class EngineWorker : public QObject {
    Q_OBJECT
public:
    explicit EngineWorker(QObject* parent = nullptr);
    ~EngineWorker() override;

    static constexpr int kBatchMs = 40;  // how often streamed text reaches the GUI

public slots:
    // Loads config.model_path in place of the loaded model. Emits modelLoaded, or loadFailed with
    // modelKept true when the model loaded before still serves: a file that cannot be read as GGUF
    // is refused before the old model is freed, and when the load itself fails the old
    // configuration is loaded again. With keepOnFailure false (Compare, whose rows replace each
    // other) the old model is freed first and a failure leaves none.
    void loadModel(const workbench::EngineConfig& config, bool keepOnFailure);
    // Generates the assistant's reply to `messages`. Emits tokensArrived/samplesArrived while it
    // runs, then replyFinished (also when stopped) or replyFailed.
    void sendChat(const ChatHistory& messages, const ToolOffer& tools, const workbench::GenerationRequest& request, const CancelFlag& cancel);
    // Forgets the cached conversation (a new chat).
    void resetConversation();
    // Frees the model (the Compare page between runs: its memory goes back).
    void unloadModel();

signals:
    void loadStarted(const QString& path);
    void loadProgress(const QString& step, double fraction);
    // The loaded file's SHA-256 (run provenance), sent just before modelLoaded; empty if unreadable.
    void modelDigest(const QString& sha256);
    void modelLoaded(const workbench::ModelInfo& info);
    // fileReadable: the file is a model we can read, so the settings (or memory) refused it.
    void loadFailed(const QString& message, bool modelKept, bool fileReadable);
    void replyFormKnown(const ReplyForm& form);
    void tokensArrived(const QString& text);
    void samplesArrived(const QList<TokenSample>& samples);
    void replyFinished(const ReplySummary& summary);
    void replyFailed(const QString& message);
    // The cache's blocks per layer: while a reply streams (with the text) and when it ends.
    void blockMapArrived(const BlockMapSnapshot& map);
    // The reply's last prompt and decode steps, split into matmuls and attention.
    void rooflineArrived(const workbench::Engine::RooflineSnapshot& roofline);
    // After a load: the machine's ceilings (measured the first time, then from QSettings).
    void ceilingsMeasured(const MachineCeilings& ceilings);

private:
    BlockMapSnapshot blockMap() const;
    MachineCeilings ceilings();
    QString modelDigestFor(const std::string& path);

    // Loads `config` with progress reports; the engine or its error.
    workbench::Result<std::unique_ptr<workbench::Engine>> loadWithProgress(const workbench::EngineConfig& config);

    std::unique_ptr<workbench::Engine> m_engine;
    workbench::EngineConfig m_engineConfig;  // what m_engine was loaded with
    QString m_digestKey, m_digest;  // the last file hashed (path, size, mtime) and its SHA-256
};
