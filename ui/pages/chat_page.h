// The Chat page: the transcript with the streaming reply, the input box, Stop / Regenerate /
// Edit-and-resend / New chat, the system prompt, the context gauge, the live charts below, and
// the configuration panel beside it; Tools… offers functions to the model, its calls wait in a
// bar for the results the user pastes. It keeps the conversation (the engine only caches tokens)
// and sends each turn to a ChatBackend: the local engine's EngineClient, or a remote server's
// RemoteChatClient (setBackend). GUI thread only.
#pragma once

#include <QWidget>

#include "ui/bridge/engine_types.h"
#include "workbench/chat_reply.h"

class ChatBackend;
class ConfigPanel;
class EngineClient;
class HistoryRecorder;
class MetricsPanel;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSplitter;
class TokenStreamView;
class ToolResultBar;

class ChatPage : public QWidget {
    Q_OBJECT
public:
    explicit ChatPage(EngineClient* client, QWidget* parent = nullptr);

    ConfigPanel* configPanel() const { return m_config; }
    MetricsPanel* metricsPanel() const { return m_metrics; }
    TokenStreamView* transcript() const { return m_view; }
    QPlainTextEdit* input() const { return m_input; }
    QWidget* welcome() const;
    QSplitter* mainSplitter() const { return m_split; }
    QSplitter* chatSplitter() const { return m_chatSplit; }
    // The configuration panel beside the chat (View → Configuration panel, F9): hidden, the
    // transcript and charts take its width, as small windows need.
    void setConfigPanelVisible(bool visible);
    bool configPanelVisible() const;
    // The conversation list, placed left of the chat (the window makes it: it needs the store).
    void setConversationList(QWidget* list);
    const ChatHistory& history() const { return m_history; }
    QString lastReply() const;  // the conversation's last assistant message; empty when none
    QString systemPrompt() const;
    void setSystemPrompt(const QString& text);

    // A banner above the transcript (a load error, no model found) with an "Open model…" button;
    // an empty message hides it.
    // The banner's "fetch the default model" button, and its busy bar while a fetch runs.
    void showFetchOffer(bool offer, bool running);
    // The banner's "load with this model's defaults" button, for a load refused under `changes`
    // (the settings that differ from the defaults; empty: no offer).
    void showDefaultsOffer(const QString& changes);
    void showBanner(const QString& message, bool offerOpen);
    QString bannerText() const;
    // A line in the transcript, not part of the conversation (a reload, a load error).
    void addNote(const QString& text, bool isError = false);
    int contextTokens() const { return m_contextTokens; }

    // Where the turns go from now on; null: the local engine. The conversation stays (the next
    // turn sends it whole). Not while a reply runs.
    void setBackend(ChatBackend* backend);
    ChatBackend* backend() const { return m_backend; }

    // Where the chat is recorded (the session database); null: nowhere.
    void setRecorder(HistoryRecorder* recorder) { m_recorder = recorder; }
    // A line above the transcript about the history (it is off, a write failed); empty hides it.
    void showHistoryNotice(const QString& message);
    QString historyNoticeText() const;
    // Starts over with a stored conversation (History → Continue): the transcript shows it and the
    // next turn sends it all to the engine, which prefills it from the start.
    void restoreConversation(const ChatHistory& turns);

public slots:
    void send();
    void stop();
    void regenerate();
    void editLast();
    void newChat();

signals:
    void openModelRequested();
    void fetchModelRequested();
    void loadWithDefaultsRequested();
    // The context gauge's offer: reload with a sliding window and keep the conversation.
    void continueWithSlidingRequested();
    // The welcome's variant example: reload with `attention`, then send `prompt`.
    void variantExampleRequested(const QString& attention, const QString& prompt);
    // Tokens in the cached conversation and the context length (0: no model).
    void contextChanged(int tokens, int nCtx);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void connectBackend();
    void startReply();
    void truncateHistory(int index);  // drops history[index..] and their transcript entries
    void onSamples(const QList<TokenSample>& samples);
    void onReplyFinished(const ReplySummary& summary);
    void onReplyFailed(const QString& message);
    void onReplyForm(const ReplyForm& form);
    void editTools();
    void updateToolsButton();
    // The model's calls waiting for results: the bar shows the first; none hides it.
    void showPendingCall();
    void sendToolResult(const QString& text);
    // A turn that answered calls failed: its results leave the conversation, the calls wait again
    // and the last result goes back into the input box.
    void restorePendingCalls();
    void addTurnToView(const workbench::ChatMessage& message);   // a user message or a tool's result
    void updateGauge();
    void updateButtons();
    void updateWelcome();  // the welcome instead of an empty transcript

    EngineClient* m_client;
    ChatBackend* m_backend;  // m_client, or a remote server's client
    QList<QMetaObject::Connection> m_backendConnections;
    HistoryRecorder* m_recorder = nullptr;
    QLabel* m_historyNotice = nullptr;
    ConfigPanel* m_config = nullptr;
    MetricsPanel* m_metrics = nullptr;
    TokenStreamView* m_view = nullptr;
    class WelcomePanel* m_welcome = nullptr;
    QSplitter* m_split = nullptr;
    QSplitter* m_chatSplit = nullptr;
    QWidget* m_configScroll = nullptr;
    QWidget* m_banner = nullptr;
    QLabel* m_bannerText = nullptr;
    QPushButton* m_bannerFetch = nullptr;
    QPushButton* m_bannerDefaults = nullptr;
    QPushButton* m_gaugeNewChat = nullptr;
    QPushButton* m_gaugeSliding = nullptr;
    QProgressBar* m_bannerProgress = nullptr;
    QPushButton* m_bannerOpen = nullptr;
    QLineEdit* m_system = nullptr;
    QProgressBar* m_gauge = nullptr;
    QLabel* m_gaugeNote = nullptr;
    QPlainTextEdit* m_input = nullptr;
    QPushButton *m_send = nullptr, *m_stop = nullptr, *m_regenerate = nullptr, *m_edit = nullptr, *m_new = nullptr;

    QPushButton* m_tools = nullptr;
    ToolResultBar* m_toolBar = nullptr;
    QList<workbench::ToolCall> m_pendingCalls;   // the last reply's calls not yet answered

    ChatHistory m_history;         // the turns (user, assistant, tool results), without the system prompt
    QList<int> m_viewIndex;        // transcript entry of each history turn
    int m_contextTokens = 0;
    bool m_replyStreaming = false;
    std::unique_ptr<workbench::ChatReplyStream> m_replyReader;   // the reply being read
    ReplyForm m_replyForm;        // how
    QString m_replyAnswer;        // its answer so far (without thinking or calls)
    QString m_replyThinking;
    std::vector<workbench::ToolCall> m_replyCalls;
    bool m_replyParted = false;   // it had thinking or calls
    void showReply(const workbench::ChatReply& part);
    bool m_regenerating = false;   // startReply() for Regenerate: the user message is already recorded
};
