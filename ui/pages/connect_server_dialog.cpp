// The connect dialog (see the header): its form, the probe's answers, the remembered settings.
#include "ui/pages/connect_server_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

namespace {
const QString kUrlKey = QStringLiteral("remote/url");
const QString kModelKey = QStringLiteral("remote/model");
const QString kApiKeyKey = QStringLiteral("remote/apiKey");
const QString kRememberKey = QStringLiteral("remote/rememberKey");
}  // namespace

ConnectServerDialog::ConnectServerDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Connect to a server"));
    setObjectName(QStringLiteral("connectServerDialog"));
    m_probe = new RemoteProbe(this);
    connect(m_probe, &RemoteProbe::finished, this, &ConnectServerDialog::onProbed);

    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("An OpenAI-compatible server: vLLM, SGLang, llama.cpp's llama-server, or "
                                "workbench-cli serve. The chat sends its turns there until you choose "
                                "File → Use local model."), this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout();
    m_url = new QLineEdit(this);
    m_url->setObjectName(QStringLiteral("serverUrlEdit"));
    m_url->setPlaceholderText(QStringLiteral("http://127.0.0.1:8080/v1"));
    form->addRow(tr("URL"), m_url);
    m_key = new QLineEdit(this);
    m_key->setObjectName(QStringLiteral("serverKeyEdit"));
    m_key->setEchoMode(QLineEdit::Password);
    m_key->setPlaceholderText(tr("none"));
    form->addRow(tr("API key"), m_key);
    m_rememberKey = new QCheckBox(tr("Remember the key (stored in plain text in the settings file)"), this);
    m_rememberKey->setObjectName(QStringLiteral("rememberKeyCheck"));
    form->addRow(QString(), m_rememberKey);
    auto* modelRow = new QHBoxLayout();
    m_model = new QComboBox(this);
    m_model->setObjectName(QStringLiteral("serverModelCombo"));
    m_model->setEditable(true);  // a server that lists nothing may still take a name
    m_model->setMinimumWidth(260);
    m_model->setToolTip(tr("Empty: the server's default model"));
    m_list = new QPushButton(tr("List models"), this);
    m_list->setObjectName(QStringLiteral("listModelsButton"));
    modelRow->addWidget(m_model, 1);
    modelRow->addWidget(m_list);
    form->addRow(tr("Model"), modelRow);
    layout->addLayout(form);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("connectStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_connect = buttons->addButton(tr("Connect"), QDialogButtonBox::AcceptRole);
    m_connect->setObjectName(QStringLiteral("connectButton"));
    layout->addWidget(buttons);

    connect(m_list, &QPushButton::clicked, this, [this] { probe(false); });
    // Accepted only once the server answered (onProbed), not by the button box itself.
    connect(m_connect, &QPushButton::clicked, this, [this] { probe(true); });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    QSettings s;
    m_url->setText(s.value(kUrlKey, QStringLiteral("http://127.0.0.1:8080/v1")).toString());
    m_rememberKey->setChecked(s.value(kRememberKey, false).toBool());
    if (m_rememberKey->isChecked()) m_key->setText(s.value(kApiKeyKey).toString());
    m_model->setCurrentText(s.value(kModelKey).toString());
}

QString ConnectServerDialog::statusText() const { return m_status->text(); }

void ConnectServerDialog::setStatus(const QString& text, bool error) {
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("color:#b02020") : QString());
}

void ConnectServerDialog::probe(bool thenConnect) {
    const QString url = m_url->text().trimmed();
    if (url.isEmpty()) {
        setStatus(tr("Enter the server's URL, e.g. http://127.0.0.1:8080/v1."), true);
        return;
    }
    if (!m_probe->start(url, m_key->text())) return;  // one already running answers first
    m_connecting = thenConnect;
    m_list->setEnabled(false);
    m_connect->setEnabled(false);
    setStatus(tr("Asking %1 for its models…").arg(url), false);
}

void ConnectServerDialog::onProbed(const RemoteProbeResult& result) {
    m_list->setEnabled(true);
    m_connect->setEnabled(true);
    if (!result.ok) {
        setStatus(tr("Could not reach the server: %1").arg(result.error), true);
        return;
    }
    const QString typed = m_model->currentText().trimmed();
    m_model->clear();
    m_model->addItems(result.models);
    // Keep a remembered or typed model the server lists; else its first.
    const int keep = result.models.indexOf(typed);
    if (keep >= 0) m_model->setCurrentIndex(keep);
    else if (!result.models.isEmpty()) m_model->setCurrentIndex(0);
    else m_model->setCurrentText(typed);
    setStatus(tr("%1 server, %n model(s).", nullptr, static_cast<int>(result.models.size())).arg(result.serverKind), false);
    if (!m_connecting) return;
    m_target.url = m_url->text().trimmed();
    m_target.apiKey = m_key->text();
    m_target.model = m_model->currentText().trimmed();
    m_target.serverKind = result.serverKind;
    const int i = result.models.indexOf(m_target.model);
    m_target.maxModelLen = i >= 0 ? result.maxModelLens.value(i) : 0;
    saveSettings();
    accept();
}

void ConnectServerDialog::saveSettings() const {
    QSettings s;
    s.setValue(kUrlKey, m_target.url);
    s.setValue(kModelKey, m_target.model);
    s.setValue(kRememberKey, m_rememberKey->isChecked());
    if (m_rememberKey->isChecked()) s.setValue(kApiKeyKey, m_target.apiKey);
    else s.remove(kApiKeyKey);  // unticked: a key remembered before goes too
}
