// The Models page: what the loaded model is (file, architecture, shapes, tokenizer, template,
// tensor types, the configuration it runs with) or why the last load failed, a button to open
// another GGUF, and the recently loaded files (activate one to load it again). Dropping a .gguf
// anywhere on the window loads it too (MainWindow). "Connect to a server…" points the chat at a
// remote OpenAI-compatible server instead; the page then names it.
#pragma once

#include <QWidget>

#include "ui/bridge/engine_types.h"

class QLabel;
class QListWidget;
class QPushButton;
class QTextBrowser;

class ModelsPage : public QWidget {
    Q_OBJECT
public:
    explicit ModelsPage(QWidget* parent = nullptr);

    void showLoading(const QString& path);
    void showModel(const workbench::ModelInfo& info);
    void showError(const QString& path, const QString& message);
    // The chat talks to a remote server: `where` ("vllm at http://…/v1"), its model, its context.
    void showRemote(const QString& where, const QString& model, qint64 maxModelLen);
    QString detailsText() const;
    // Newest first; files that have gone missing are listed disabled.
    void setRecent(const QStringList& paths);
    QListWidget* recentList() const { return m_recent; }

signals:
    void openModelRequested();
    void recentChosen(const QString& path);
    void connectServerRequested();

private:
    QLabel* m_title = nullptr;
    QTextBrowser* m_details = nullptr;
    QPushButton* m_open = nullptr;
    QPushButton* m_connect = nullptr;
    QListWidget* m_recent = nullptr;
};
