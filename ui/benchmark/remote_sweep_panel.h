// The Benchmark page's "Remote server" box: a base URL (and key) of an OpenAI-compatible server
// — vLLM, SGLang, TensorRT-LLM, llama-server or our own serve — the concurrency levels, prompts
// per level and prompt/output lengths; Run measures each level with RemoteSweep. The page plots
// and saves the points it emits. GUI thread only.
#pragma once

#include <QGroupBox>

#include "ui/benchmark/remote_sweep.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

class RemoteSweepPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit RemoteSweepPanel(QWidget* parent = nullptr);

    QLineEdit* url() const { return m_url; }
    QLineEdit* levels() const { return m_levels; }
    QSpinBox* prompts() const { return m_prompts; }
    QSpinBox* inputLen() const { return m_input; }
    QSpinBox* outputLen() const { return m_output; }
    QPushButton* runButton() const { return m_run; }
    QString statusText() const;
    bool isRunning() const { return m_sweep->isRunning(); }
    QString baseUrl() const;

public slots:
    void run();
    void stop();

signals:
    void started();
    void pointReady(const RemotePoint& point);
    void finished();

private:
    void setStatus(const QString& text);

    RemoteSweep* m_sweep;
    QLineEdit *m_url, *m_key, *m_levels;
    QSpinBox *m_prompts, *m_input, *m_output;
    QPushButton *m_run, *m_stop;
    QLabel* m_status;
};
