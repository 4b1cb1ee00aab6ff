// The main window's remote half: File → Connect to a server… (the dialog), switching the chat's
// backend between the local engine and a RemoteChatClient, and the status bar and Models page
// naming the server. Remote replies are recorded like local ones, under the server's configuration.
#include <QAction>
#include <QFileInfo>
#include <QLabel>

#include "ui/bridge/engine_client.h"
#include "ui/bridge/remote_chat_client.h"
#include "ui/format.h"
#include "ui/history/history_recorder.h"
#include "ui/main_window.h"
#include "ui/pages/chat_page.h"
#include "ui/pages/connect_server_dialog.h"
#include "ui/pages/metrics_panel.h"
#include "ui/pages/models_page.h"

ConnectServerDialog* MainWindow::connectDialog() const { return m_connectDialog; }

bool MainWindow::isRemote() const { return m_chat->backend() == m_remote; }

void MainWindow::connectToServer() {
    if (m_connectDialog) {
        m_connectDialog->raise();
        return;
    }
    auto* dialog = new ConnectServerDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    m_connectDialog = dialog;
    connect(dialog, &QDialog::accepted, this, [this, dialog] { useRemote(dialog->target()); });
    dialog->open();
}

void MainWindow::useRemote(const RemoteTarget& target) {
    if (m_chat->backend()->isGenerating()) {
        m_chat->addNote(tr("Stop the running reply (Esc) first, then connect."), true);
        return;
    }
    m_remote->setTarget(target);
    m_chat->setBackend(m_remote);
    m_recorder->setRemote(target.url, target.model, target.serverKind);
    m_remoteSince.start();
    m_chat->metricsPanel()->showServerKv(true, m_remote->description());
    m_useLocalAction->setEnabled(true);
    showRemoteStatus();
    m_chat->addNote(tr("Connected to %1%2. The next turns go to the server (the conversation so far with them); "
                       "they are recorded in the history under the server. File → Use local model switches back.")
                        .arg(m_remote->description(),
                             target.model.isEmpty() ? QString() : tr(", model %1").arg(target.model)));
    showPage(QStringLiteral("Chat"));
}

void MainWindow::useLocalModel() {
    if (!isRemote()) return;
    if (m_remote->isGenerating()) {
        m_chat->addNote(tr("Stop the running reply (Esc) first, then switch back."), true);
        return;
    }
    m_chat->setBackend(m_client);
    if (const auto& loaded = m_client->modelInfo()) m_recorder->setModel(m_client->config(), *loaded, m_client->modelSha256());
    m_chat->metricsPanel()->showServerKv(false);
    m_useLocalAction->setEnabled(false);
    m_statusModel->setToolTip(QString());
    const auto& info = m_client->modelInfo();
    m_statusBackend->setText(QString::fromStdString(info ? info->backend : m_client->config().backend).toUpper());
    if (info) {
        m_statusModel->setText(info->name.empty() ? QFileInfo(QString::fromStdString(info->path)).fileName()
                                                  : QString::fromStdString(info->name));
        m_statusModel->setToolTip(QString::fromStdString(info->path));
        m_statusWeights->setText(tr("weights %1").arg(fmt::weightTypes(*info)));
        m_models->showModel(*info);
    } else {
        m_statusModel->setText(tr("no model"));
        m_statusWeights->clear();
        m_models->showError(QString(), tr("No local model is loaded: File → Open (Ctrl+O)."));
    }
    m_chat->addNote(info ? tr("The chat uses the local model again.")
                         : tr("The chat uses the local engine again; no model is loaded (File → Open)."));
}

void MainWindow::showRemoteStatus() {
    const RemoteTarget& t = m_remote->target();
    m_statusModel->setText(tr("remote: %1%2").arg(m_remote->description(),
                                                  t.model.isEmpty() ? QString() : QStringLiteral(" · ") + t.model));
    m_statusModel->setToolTip(tr("The chat's turns go to this server; File → Use local model switches back."));
    m_statusBackend->setText(tr("remote"));
    m_statusWeights->setText(tr("KV: not polled yet"));
    m_models->showRemote(m_remote->description(), t.model, t.maxModelLen);
}
