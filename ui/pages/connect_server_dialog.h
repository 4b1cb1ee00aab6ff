// "Connect to a server…": the base URL of an OpenAI-compatible server, an optional API key, its
// models listed from /v1/models (off the GUI thread, through RemoteProbe), and Connect, which
// asks the server once more (its models and kind) and accepts only when it answered. URL and
// model are remembered in QSettings; the key only when "Remember the key" is ticked.
#pragma once

#include <QDialog>

#include "ui/bridge/remote_chat_client.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

class ConnectServerDialog : public QDialog {
    Q_OBJECT
public:
    explicit ConnectServerDialog(QWidget* parent = nullptr);

    // The server chosen, once accepted.
    const RemoteTarget& target() const { return m_target; }
    QString statusText() const;

    QLineEdit* urlEdit() const { return m_url; }
    QLineEdit* keyEdit() const { return m_key; }
    QCheckBox* rememberKeyCheck() const { return m_rememberKey; }
    QPushButton* listButton() const { return m_list; }
    QComboBox* modelCombo() const { return m_model; }
    QPushButton* connectButton() const { return m_connect; }

private:
    void probe(bool thenConnect);
    void onProbed(const RemoteProbeResult& result);
    void setStatus(const QString& text, bool error);
    void saveSettings() const;

    RemoteProbe* m_probe = nullptr;
    QLineEdit* m_url = nullptr;
    QLineEdit* m_key = nullptr;
    QCheckBox* m_rememberKey = nullptr;
    QPushButton* m_list = nullptr;
    QComboBox* m_model = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_connect = nullptr;
    RemoteTarget m_target;
    bool m_connecting = false;  // the probe under way was asked for by Connect
};
