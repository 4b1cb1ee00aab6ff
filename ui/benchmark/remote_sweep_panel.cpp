#include "ui/benchmark/remote_sweep_panel.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ui/benchmark/benchmark_page.h"

namespace {

QSpinBox* spin(QWidget* parent, const char* name, int lo, int hi, int value) {
    auto* s = new QSpinBox(parent);
    s->setObjectName(QString::fromLatin1(name));
    s->setRange(lo, hi);
    s->setValue(value);
    return s;
}

}  // namespace

RemoteSweepPanel::RemoteSweepPanel(QWidget* parent)
    : QGroupBox(tr("An OpenAI-compatible server, measured client-side as vllm bench serve does"), parent),
      m_sweep(new RemoteSweep(this)) {
    auto* row = new QHBoxLayout(this);
    auto* form = new QFormLayout();
    m_url = new QLineEdit(QSettings().value(QStringLiteral("benchmark/remoteUrl"), QStringLiteral("http://127.0.0.1:8080/v1")).toString(), this);
    m_url->setObjectName(QStringLiteral("remoteUrl"));
    m_url->setToolTip(tr("vLLM, SGLang, TensorRT-LLM, llama.cpp's llama-server or workbench-cli serve: its base URL"));
    m_key = new QLineEdit(this);
    m_key->setObjectName(QStringLiteral("remoteKey"));
    m_key->setEchoMode(QLineEdit::Password);
    m_key->setPlaceholderText(tr("optional API key (not saved)"));
    m_levels = new QLineEdit(QStringLiteral("1,2,4,8"), this);
    m_levels->setObjectName(QStringLiteral("remoteLevels"));
    m_prompts = spin(this, "remotePrompts", 1, 10000, 16);
    m_prompts->setToolTip(tr("requests per level (at least the level's concurrency)"));
    m_input = spin(this, "remoteInputLen", 1, 65536, 128);
    m_output = spin(this, "remoteOutputLen", 1, 65536, 32);
    form->addRow(tr("Base URL"), m_url);
    form->addRow(tr("API key"), m_key);
    form->addRow(tr("Concurrency levels"), m_levels);
    form->addRow(tr("Requests per level"), m_prompts);
    form->addRow(tr("Input / output tokens"), [&] {
        auto* w = new QWidget(this);
        auto* h = new QHBoxLayout(w);
        h->setContentsMargins(0, 0, 0, 0);
        h->addWidget(m_input);
        h->addWidget(m_output);
        return w;
    }());
    row->addLayout(form, 1);
    auto* buttons = new QVBoxLayout();
    m_run = new QPushButton(tr("Run remote sweep"), this);
    m_run->setObjectName(QStringLiteral("remoteRun"));
    m_stop = new QPushButton(tr("Stop"), this);
    m_stop->setObjectName(QStringLiteral("remoteStop"));
    m_stop->setEnabled(false);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("remoteStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    buttons->addWidget(m_run);
    buttons->addWidget(m_stop);
    buttons->addWidget(m_status);
    buttons->addStretch(1);
    row->addLayout(buttons, 1);

    connect(m_run, &QPushButton::clicked, this, &RemoteSweepPanel::run);
    connect(m_stop, &QPushButton::clicked, this, &RemoteSweepPanel::stop);
    connect(m_sweep, &RemoteSweep::pointReady, this, [this](const RemotePoint& p) {
        setStatus(tr("%1 (%2) · concurrency %3: %4 output tok/s, TTFT %5 ms%6")
                      .arg(p.server, p.model)
                      .arg(p.concurrency)
                      .arg(p.outputTokS, 0, 'f', 1)
                      .arg(p.ttftMs, 0, 'f', 1)
                      .arg(p.failed ? tr(" · %1 failed: %2").arg(p.failed).arg(p.firstError) : QString()));
        emit pointReady(p);
    });
    connect(m_sweep, &RemoteSweep::failed, this, [this](const QString& message) { setStatus(tr("Not measured: %1").arg(message)); });
    connect(m_sweep, &RemoteSweep::finished, this, [this] {
        m_run->setEnabled(true);
        m_stop->setEnabled(false);
        emit finished();
    });
}

QString RemoteSweepPanel::statusText() const { return m_status->text(); }
void RemoteSweepPanel::setStatus(const QString& text) { m_status->setText(text); }
QString RemoteSweepPanel::baseUrl() const { return m_url->text().trimmed(); }

void RemoteSweepPanel::run() {
    const QList<int> levels = BenchmarkPage::parseBatches(m_levels->text());
    if (levels.isEmpty()) {
        setStatus(tr("Concurrency levels: positive numbers separated by commas, e.g. 1,2,4,8."));
        return;
    }
    if (!baseUrl().startsWith(QLatin1String("http://")) && !baseUrl().startsWith(QLatin1String("https://"))) {
        setStatus(tr("Base URL: the server's address, e.g. http://127.0.0.1:8000/v1."));
        return;
    }
    QSettings().setValue(QStringLiteral("benchmark/remoteUrl"), baseUrl());
    wbremote::RemoteEndpoint endpoint;
    endpoint.base_url = baseUrl().toStdString();
    endpoint.api_key = m_key->text().toStdString();
    if (!m_sweep->start(endpoint, levels, m_prompts->value(), m_input->value(), m_output->value())) return;
    m_run->setEnabled(false);
    m_stop->setEnabled(true);
    setStatus(tr("Measuring %1 …").arg(baseUrl()));
    emit started();
}

void RemoteSweepPanel::stop() { m_sweep->stop(); }
