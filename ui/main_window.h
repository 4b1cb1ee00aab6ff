// The main window: a sidebar (Chat, Compare, History, Models, Benchmark; the pages that need the
// session database or batching are disabled with a tooltip saying so), the pages, the menus and
// shortcuts (Ctrl+N new chat, Esc stop, Ctrl+O open model, Ctrl+Q quit), and the status bar
// (model, backend, weights, process memory, tokens in context). It owns the EngineClient and
// starts every model load (File → Open, the Models page's recent list, a .gguf dropped on the
// window). Window geometry, settings and the recent models persist with QSettings.
#pragma once

#include <QMainWindow>

#include "ui/bridge/engine_types.h"

class ChatPage;
class EngineClient;
class ModelsPage;
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

    EngineClient* client() const { return m_client; }
    ChatPage* chatPage() const { return m_chat; }
    ModelsPage* modelsPage() const { return m_models; }
    QListWidget* sidebar() const { return m_sidebar; }
    QAction* stopAction() const { return m_stopAction; }
    QString modelPath() const { return m_modelPath; }
    QString statusText() const;  // the status bar's fields, joined (for tests and the log)

public slots:
    void openModel();
    void showPage(const QString& name);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildSidebar();
    void buildActions();
    void buildStatusBar();
    void onModelLoaded(const workbench::ModelInfo& info);
    void onLoadFailed(const QString& message);
    void refreshMemory();
    void rememberRecent(const QString& path);
    void saveSettings() const;
    void restoreSettings();

    EngineClient* m_client = nullptr;
    QListWidget* m_sidebar = nullptr;
    QStackedWidget* m_pages = nullptr;
    ChatPage* m_chat = nullptr;
    ModelsPage* m_models = nullptr;
    QAction* m_stopAction = nullptr;
    QLabel *m_statusModel = nullptr, *m_statusBackend = nullptr, *m_statusWeights = nullptr, *m_statusMemory = nullptr,
           *m_statusContext = nullptr;
    QTimer* m_memoryTimer = nullptr;
    QString m_modelPath;
    bool m_reloading = false;  // a load from Apply, with a conversation to keep
};
