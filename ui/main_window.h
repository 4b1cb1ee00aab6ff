// The main window: a sidebar (Chat, Compare, History, Models, Benchmark, Server), the pages, the menus
// and shortcuts (Ctrl+N new chat, Esc stop, Ctrl+R regenerate, Ctrl+E edit, Ctrl+Shift+C copy the
// last reply, Ctrl+1…6 the pages, Ctrl+O open model, Ctrl+Q quit; Help lists them), and the status bar
// (model, backend, weights, process memory, tokens in context). It owns the EngineClient and the
// StoreClient (the session database, opened at start; when it cannot open, a notice says
// "history is off" and the chat runs without it), records the chat through a HistoryRecorder,
// and starts every model load (File → Open, the Models page's recent list, a .gguf dropped on the
// window, History → Continue). File → Connect to a server… points the chat at a remote
// OpenAI-compatible server (RemoteChatClient; the status bar names it, its replies are not
// recorded in the history) until File → Use local model. Window geometry, settings and recent
// models persist with QSettings. View → Theme switches Light, Dark or System (ui/theme).
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>
#include <QPointer>
#include <optional>

#include "ui/bridge/engine_types.h"

class BenchmarkPage;
class VariantsMapPage;
class ChatPage;
class ComparePage;
class ConnectServerDialog;
class EngineClient;
class RemoteChatClient;
struct RemoteTarget;
class HistoryPage;
class HistoryRecorder;
class ModelFetcher;
class ModelsPage;
class StoreClient;
class ThemeController;
class ServerPage;
class QAction;
class QLabel;
class QListWidget;
class QStackedWidget;
class QTimer;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Loads `path` with the configuration panel's settings; an empty path finds the default
    // model, and when there is none says how to get it and offers File → Open.
    void startWithModel(const QString& path);
    void loadModel(const QString& path);
    // No model given and none at the default place: say how to get one, offer File → Open.
    void showNoModelFound();
    // Runs installer/fetch_model.sh into the XDG data folder, then loads the model it fetched.
    void fetchDefaultModel();

    EngineClient* client() const { return m_client; }
    RemoteChatClient* remoteClient() const { return m_remote; }
    // The chat sends to the remote server (not the local engine).
    bool isRemote() const;
    // The open "Connect to a server…" dialog; null when none.
    ConnectServerDialog* connectDialog() const;
    QAction* connectAction() const { return m_connectAction; }
    QAction* useLocalAction() const { return m_useLocalAction; }
    ChatPage* chatPage() const { return m_chat; }
    ModelsPage* modelsPage() const { return m_models; }
    HistoryPage* historyPage() const { return m_history; }
    ComparePage* comparePage() const { return m_compare; }
    BenchmarkPage* benchmarkPage() const { return m_benchmark; }
    VariantsMapPage* variantsPage() const { return m_variants; }
    ServerPage* serverPage() const { return m_server; }
    StoreClient* store() const { return m_store; }
    ThemeController* theme() const { return m_theme; }
    HistoryRecorder* recorder() const { return m_recorder; }
    QListWidget* sidebar() const { return m_sidebar; }
    QAction* stopAction() const { return m_stopAction; }
    QString modelPath() const { return m_modelPath; }
    QString statusText() const;  // the status bar's fields, joined (for tests and the log)
    QString shortcutList() const;  // "Ctrl+R\tChat → Regenerate" per line, from the menus

public slots:
    void openModel();
    void showPage(const QString& name);
    // History → Continue: reopens a stored session in the chat with its configuration (reloading
    // the model when it differs); its next turns are recorded into the same session. With
    // `keepLoaded` (the last conversation reopened at start) the loaded configuration stays.
    void continueSession(qint64 sessionId, bool keepLoaded = false);
    // File → Connect to a server…: the dialog (window-modal); once it connects, the chat's turns
    // go to that server.
    void connectToServer();
    void useRemote(const RemoteTarget& target);
    // File → Use local model: the chat goes back to the engine in this process.
    void useLocalModel();

signals:
    // A continued session is in the chat, ready for the next turn (or could not be: ok false).
    void sessionContinued(qint64 sessionId, bool ok);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    // The loaded configuration with another attention layout: no longer one a calibration chose.
    workbench::EngineConfig loadedConfigWith(const std::string& attention) const;
    void buildSidebar();
    void buildActions();
    void buildStatusBar();
    void onModelLoaded(const workbench::ModelInfo& info);
    void onLoadFailed(const QString& message, bool modelKept, bool fileReadable);
    void refreshMemory();
    void rememberRecent(const QString& path);
    void saveSettings() const;
    void openHistory();
    void finishContinue();
    void reopenLastConversation();
    void restoreSettings();
    void showRemoteStatus();

    ThemeController* m_theme = nullptr;
    EngineClient* m_client = nullptr;
    RemoteChatClient* m_remote = nullptr;
    QElapsedTimer m_remoteSince;   // the server KV chart's time axis: since the chat connected
    QPointer<ConnectServerDialog> m_connectDialog;
    QAction* m_connectAction = nullptr;
    QAction* m_useLocalAction = nullptr;
    QListWidget* m_sidebar = nullptr;
    QStackedWidget* m_pages = nullptr;
    ChatPage* m_chat = nullptr;
    class ConversationList* m_conversations = nullptr;
    bool m_reopenedLast = false;  // the last conversation is reopened once, after the first load
    ModelsPage* m_models = nullptr;
    ModelFetcher* m_fetcher = nullptr;
    HistoryPage* m_history = nullptr;
    ComparePage* m_compare = nullptr;
    BenchmarkPage* m_benchmark = nullptr;
    ServerPage* m_server = nullptr;
    VariantsMapPage* m_variants = nullptr;
    StoreClient* m_store = nullptr;
    HistoryRecorder* m_recorder = nullptr;
    QStringList m_shownStoreErrors;  // each write failure is shown once
    struct PendingContinue {
        qint64 sessionId = 0;
        ChatHistory turns;
    };
    std::optional<PendingContinue> m_continue;  // waiting for its configuration to load
    QAction* m_stopAction = nullptr;
    QLabel *m_statusModel = nullptr, *m_statusBackend = nullptr, *m_statusWeights = nullptr, *m_statusMemory = nullptr,
           *m_statusContext = nullptr;
    QTimer* m_memoryTimer = nullptr;
    QString m_modelPath;
    QString m_failedPath;   // the file the last failed load was for (its "load with defaults" offer)
    bool m_reloading = false;  // a load from Apply, with a conversation to keep
    QString m_pendingPrompt;   // sent once the load under way finishes (the welcome's variant example)
};
