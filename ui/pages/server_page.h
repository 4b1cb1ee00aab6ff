// The Server page: serves the chat's model to other programs through `workbench-cli serve` (the
// OpenAI-compatible API) run as a child process (ServerProcess). Host, port, API key and max
// running sequences are set here; the model and its load settings are the chat's. While it runs,
// the page polls /metrics every second (QNetworkAccessManager, on the GUI thread like every widget
// update here) for requests running, waiting and completed, tokens/s and KV in use, and offers
// the URL and a curl example to copy. Destroying the page stops the server. GUI thread only.
#pragma once

#include <QElapsedTimer>
#include <QWidget>
#include <optional>

#include "ui/pages/server_metrics_text.h"
#include "ui/pages/server_process.h"

class EngineClient;
class QLabel;
class QLineEdit;
class QNetworkAccessManager;
class QNetworkReply;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTimer;

class ServerPage : public QWidget {
    Q_OBJECT
public:
    explicit ServerPage(EngineClient* chat, QWidget* parent = nullptr);
    ~ServerPage() override;

    // The request a user can paste into a shell: POST /v1/chat/completions at `url`, with the
    // Authorization header when `apiKey` is set; quoted for a POSIX shell.
    static QString curlExample(const QString& url, const QString& apiKey, const QString& modelName);

    ServerProcess* process() const { return m_server; }
    QLineEdit* hostEdit() const { return m_host; }
    QSpinBox* portSpin() const { return m_port; }
    QLineEdit* apiKeyEdit() const { return m_apiKey; }
    QSpinBox* maxRunningSpin() const { return m_maxRunning; }
    QPushButton* startButton() const { return m_start; }
    QPushButton* stopButton() const { return m_stop; }
    QString statusText() const;
    QString urlText() const;
    QString curlText() const;
    // The figures as shown; tokens/s is that of the last poll (absent before the second one).
    QString completedText() const;
    std::optional<double> tokensPerSecond() const { return m_tokensPerSecond; }

public slots:
    void start();
    void stop();

signals:
    // A /metrics poll arrived and the figures show it.
    void figuresUpdated();

private:
    void refresh();  // buttons, fields and the status line from the server's and the chat's state
    void onStateChanged(ServerProcess::State state);
    void onListening(const QString& url);
    void poll();
    void onPolled(QNetworkReply* reply);
    void showFigures(const servermetrics::Figures& f);
    void updateCurl();
    QString startBlocker() const;  // why Start is off (no model, no workbench-cli); empty when it may run

    EngineClient* m_chat;
    ServerProcess* m_server = nullptr;
    QString m_program;  // workbench-cli, found once
    QLabel* m_model = nullptr;
    QLineEdit* m_host = nullptr;
    QLabel* m_hostNote = nullptr;
    QSpinBox* m_port = nullptr;
    QLineEdit* m_apiKey = nullptr;
    QSpinBox* m_maxRunning = nullptr;
    QPushButton *m_start = nullptr, *m_stop = nullptr;
    QLabel* m_status = nullptr;
    QLineEdit* m_url = nullptr;
    QPushButton *m_copyUrl = nullptr, *m_copyCurl = nullptr;
    QPlainTextEdit* m_curl = nullptr;
    QLabel *m_running = nullptr, *m_waiting = nullptr, *m_completed = nullptr, *m_rate = nullptr, *m_kv = nullptr;
    QNetworkAccessManager* m_net = nullptr;
    QNetworkReply* m_pending = nullptr;  // one poll at a time: a slow server is not flooded
    QTimer* m_pollTimer = nullptr;
    QString m_failure;      // why the server last ended on its own; shown until the next start
    QString m_servedKey;    // the key the running server was started with (the field may change)
    QString m_servedModel;  // the file it serves (the chat may load another meanwhile)
    std::optional<servermetrics::Figures> m_lastFigures;
    QElapsedTimer m_lastPollClock;
    std::optional<double> m_tokensPerSecond;
};
