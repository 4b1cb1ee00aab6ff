// The seam between the Chat page and whatever writes the replies: the local engine (EngineClient)
// or a remote OpenAI-compatible server (RemoteChatClient). The page sends a whole conversation per
// turn and reads the reply back through these signals, always on the GUI thread (queued from the
// backend's own thread). GUI thread only.
#pragma once

#include <QObject>

#include "ui/bridge/engine_types.h"

class ChatBackend : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    // False (and nothing sent) when there is nothing to talk to or a reply is running. `tools`:
    // what the turn offers the model to call.
    virtual bool sendChat(const ChatHistory& messages, const workbench::GenerationRequest& request, const ToolOffer& tools) = 0;
    bool sendChat(const ChatHistory& messages, const workbench::GenerationRequest& request) { return sendChat(messages, request, {}); }
    // Ends the running reply soon; it still ends with replyFinished (stop reason "cancelled").
    virtual void stop() = 0;
    // A model to talk to: loaded here, or a server connected.
    virtual bool isReady() const = 0;
    virtual bool isGenerating() const = 0;
    // Generating, or anything else that makes a send wait (a local load).
    virtual bool isBusy() const = 0;
    // The context length replies run in; 0 when unknown.
    virtual int contextLength() const = 0;
    // A new conversation: whatever the backend cached of the old one may go.
    virtual void resetConversation() = 0;

signals:
    // Before the reply's first token: how to read it.
    void replyFormKnown(const ReplyForm& form);
    void tokensArrived(const QString& text);
    void samplesArrived(const QList<TokenSample>& samples);
    void replyFinished(const ReplySummary& summary);
    void replyFailed(const QString& message);
    void busyChanged(bool busy);
};
