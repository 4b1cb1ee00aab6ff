#include "ui/pages/sweep_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <filesystem>

#include "ui/bridge/engine_client.h"
#include "ui/bridge/measure_worker.h"
#include "ui/bridge/store_client.h"
#include "workbench/sweep.h"

namespace {
constexpr int kStandard = 0;   // the menu's items: the presets, then "From a file…", then files chosen
constexpr int kPresses = 1;
constexpr int kFromFile = 2;
}  // namespace

SweepPanel::SweepPanel(EngineClient* chat, StoreClient* store, QWidget* parent) : QWidget(parent), m_chat(chat), m_store(store) {
    m_measure = new MeasureClient(this);
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Sweep:"), this));
    m_list = new QComboBox(this);
    m_list->setObjectName(QStringLiteral("sweepList"));
    m_list->addItem(tr("Standard preset (%1 configurations)").arg(workbench::standard_sweep_preset().size()));
    m_list->addItem(tr("Eviction presses (%1 configurations)").arg(workbench::presses_sweep_preset().size()));
    m_list->setItemData(kPresses, tr("SnapKV, PyramidKV, AdaKV, TOVA and KNorm keeping a quarter and a half of each prompt, beside "
                                     "full attention: with Retrieval, what each keeps of a long prompt's facts."), Qt::ToolTipRole);
    m_list->addItem(tr("From a file…"));
    m_list->setToolTip(tr("A list file has one configuration a line: an attention spec, then optionally --kv-type T "
                          "--weights W; # starts a comment (as workbench-cli sweep -f reads it)."));
    connect(m_list, &QComboBox::activated, this, [this](int index) {
        if (index != kFromFile) return;
        const QString path = QFileDialog::getOpenFileName(this, tr("Configuration list"), QString(), tr("Text files (*.txt);;All files (*)"));
        if (path.isEmpty()) m_list->setCurrentIndex(kStandard);
        else setConfigurationFile(path);
    });
    row->addWidget(m_list);
    row->addWidget(new QLabel(tr("Context:"), this));
    m_ctx = new QSpinBox(this);
    m_ctx->setObjectName(QStringLiteral("sweepContext"));
    m_ctx->setRange(128, 32768);
    m_ctx->setSingleStep(512);
    m_ctx->setValue(4096);
    m_ctx->setSuffix(tr(" tokens"));
    m_ctx->setToolTip(tr("Each configuration scores one window of this many tokens and decodes at this context."));
    row->addWidget(m_ctx);
    m_retrieval = new QCheckBox(tr("Retrieval"), this);
    m_retrieval->setObjectName(QStringLiteral("sweepRetrieval"));
    m_retrieval->setToolTip(tr("Also passkey and multi-key retrieval at lengths up to the context (5 depths, 2 trials "
                               "each): what a window forgets. Several minutes a configuration on a laptop."));
    row->addWidget(m_retrieval);
    m_questionAgnostic = new QCheckBox(tr("Question-agnostic"), this);
    m_questionAgnostic->setObjectName(QStringLiteral("sweepQuestionAgnostic"));
    m_questionAgnostic->setToolTip(tr("Each retrieval prompt's context is read as a request of its own before its question, so an "
                                      "eviction press compresses it without knowing what will be asked (as a cached, compressed "
                                      "document would be); unchecked, the press sees the question."));
    m_questionAgnostic->setEnabled(false);
    connect(m_retrieval, &QCheckBox::toggled, m_questionAgnostic, &QCheckBox::setEnabled);
    row->addWidget(m_questionAgnostic);
    m_run = new QPushButton(tr("Run sweep"), this);
    m_run->setObjectName(QStringLiteral("sweepRun"));
    m_run->setToolTip(tr("Measure every configuration of the list with the chat's model; press again to stop"));
    connect(m_run, &QPushButton::clicked, this, [this] {
        if (isRunning()) stop();
        else start();
    });
    row->addWidget(m_run);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("sweepProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setVisible(false);
    m_progress->setMinimumWidth(260);
    row->addWidget(m_progress, 1);
    // Takes the row's slack while the progress bar is hidden (an item with stretch 1 outweighs it).
    row->addStretch(0);

    connect(m_measure, &MeasureClient::progress, this, [this](const QString& step, double fraction) {
        m_progress->setValue(static_cast<int>(fraction * 1000));
        QString eta;
        const double elapsed = m_clock.elapsed() / 1000.0;
        if (fraction > 0.005 && fraction < 1) {
            const int left = static_cast<int>(elapsed * (1 - fraction) / fraction / 60.0 + 0.5);
            eta = left >= 1 ? tr(" · about %1 min left").arg(left) : tr(" · under a minute left");
        }
        m_progress->setFormat(QStringLiteral("%p% · %1%2").arg(step, eta));
    });
    connect(m_measure, &MeasureClient::sweepRowReady, this, [this](const SweepRow& r) {
        ++m_rows;
        const QJsonObject o = QJsonDocument::fromJson(r.json.toUtf8()).object();
        if (o.value(QStringLiteral("status")).toString() != QStringLiteral("ok")) ++m_failed;
        saveRow(r);
        emit rowMeasured(r.json);
    });
    connect(m_measure, &MeasureClient::failed, this, [this](int, const QString& message) { m_error = message; });
    connect(m_measure, &MeasureClient::finished, this, [this] {
        m_progress->setVisible(false);
        m_run->setText(tr("Run sweep"));
        QString summary = tr("%1: %2 configurations measured (%3 failed) in %4 min%5")
                              .arg(m_title).arg(m_rows).arg(m_failed).arg(m_clock.elapsed() / 60000.0, 0, 'f', 1)
                              .arg(m_stopped ? tr(", stopped before the list's end") : QString());
        if (!m_error.isEmpty()) summary = tr("%1: stopped: %2").arg(m_title, m_error);
        emit finished(summary);
        emit statusChanged(summary);
    });
}

bool SweepPanel::isRunning() const { return m_measure->isBusy(); }

void SweepPanel::stop() {
    if (isRunning()) m_stopped = true;
    m_measure->stop();
}

void SweepPanel::setConfigurationFile(const QString& path) {
    int index = m_list->findData(path);
    if (index < 0) {
        m_list->addItem(QFileInfo(path).fileName(), path);
        index = m_list->count() - 1;
    }
    m_list->setCurrentIndex(index);
}

QStringList SweepPanel::chosenLines(QString& name, QString& error) const {
    QStringList lines;
    const QString path = m_list->currentData().toString();
    if (m_list->currentIndex() == kPresses) {
        name = QStringLiteral("presses");
        for (const std::string& line : workbench::presses_sweep_preset()) lines.append(QString::fromStdString(line));
        return lines;
    }
    if (m_list->currentIndex() == kStandard || path.isEmpty()) {
        name = QStringLiteral("standard");
        for (const std::string& line : workbench::standard_sweep_preset()) lines.append(QString::fromStdString(line));
        return lines;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        error = tr("Cannot read the configuration list %1: %2").arg(path, file.errorString());
        return {};
    }
    name = QFileInfo(path).fileName();
    while (!file.atEnd()) lines.append(QString::fromUtf8(file.readLine()).trimmed());
    return lines;
}

bool SweepPanel::start() {
    if (isRunning()) return false;
    if (!m_chat->isLoaded()) {
        emit statusChanged(tr("Load a model in the Chat first: the sweep runs its configurations on that model."));
        return false;
    }
    QString name, error;
    SweepRequest request;
    request.lines = chosenLines(name, error);
    if (!error.isEmpty()) {
        emit statusChanged(error);
        return false;
    }
    std::vector<std::string> check;
    for (const QString& line : request.lines) check.push_back(line.toStdString());
    auto configs = workbench::parse_sweep_configs(check);
    if (!configs.ok()) {
        emit statusChanged(tr("%1: %2").arg(name, QString::fromStdString(configs.status().message())));
        return false;
    }
    request.base = m_chat->config();
    request.ctx = m_ctx->value();
    request.retrieval = m_retrieval->isChecked();
    request.question_agnostic = request.retrieval && m_questionAgnostic->isChecked();
    const int n = static_cast<int>(configs->size());
    m_title = tr("%1 sweep of %2").arg(name, QFileInfo(QString::fromStdString(request.base.model_path)).fileName());
    m_rows = m_failed = 0;
    m_stopped = false;
    m_error.clear();
    m_clock.start();
    saveSweepRecord(request, name, n);
    m_progress->setValue(0);
    m_progress->setFormat(tr("%p% · loading the baseline"));
    m_progress->setVisible(true);
    m_run->setText(tr("Stop"));
    emit started(m_title, n);
    emit statusChanged(tr("%1: %2 configurations at %3 tokens%4").arg(m_title).arg(n).arg(request.ctx)
                           .arg(request.retrieval ? (request.question_agnostic ? tr(", with question-agnostic retrieval") : tr(", with retrieval"))
                                                  : QString()));
    m_measure->sweep(request);
    return true;
}

void SweepPanel::saveSweepRecord(const SweepRequest& request, const QString& name, int configurations) {
    m_stored = std::make_shared<StoredIds>();
    if (!m_store || !m_store->isOpen()) return;
    workbench::SweepSettings settings;
    settings.ctx = request.ctx;
    settings.retrieval = request.retrieval;
    settings.retrieval_options.trials = request.trials;
    settings.retrieval_options.question_agnostic = request.question_agnostic;
    workbench::SweepRecord record;
    record.name = name.toStdString();
    record.model = std::filesystem::path(request.base.model_path).filename().string();
    record.settings = workbench::dump_json(workbench::sweep_settings_json(settings, static_cast<size_t>(configurations)));
    const workbench::ConfigurationRecord baseline = workbench::make_configuration(workbench::sweep_baseline_config(request.base, settings));
    m_store->call<bool>(
        [ids = m_stored, record, baseline](workbench::Store& store) -> workbench::Result<bool> {
            WB_ASSIGN_OR_RETURN(ids->baseline, store.save_configuration(baseline));
            WB_ASSIGN_OR_RETURN(ids->sweep, store.create_sweep(record));
            return true;
        },
        this, [this](const workbench::Result<bool>& saved) {
            if (!saved.ok())
                emit statusChanged(tr("This sweep is not kept in the history: %1").arg(QString::fromStdString(saved.status().message())));
        });
}

void SweepPanel::saveRow(const SweepRow& row) {
    if (!m_store || !m_store->isOpen() || !m_stored) return;
    const std::string text_name = QFileInfo(QString::fromStdString(workbench::default_eval_text_path())).fileName().toStdString();
    m_store->call<bool>(
        [ids = m_stored, json = row.json.toStdString(), config = row.config, text_name](workbench::Store& store) -> workbench::Result<bool> {
            if (ids->sweep == 0) return false;   // the record could not be created (said when it failed)
            WB_ASSIGN_OR_RETURN(workbench::Json parsed, workbench::parse_json(json));
            WB_RETURN_IF_ERROR(workbench::record_sweep_row(store, ids->sweep, ids->baseline, config, parsed, text_name));
            WB_RETURN_IF_ERROR(store.flush());   // committed before History lists the sweep
            return true;
        },
        this, [this](const workbench::Result<bool>& saved) {
            if (!saved.ok()) emit statusChanged(tr("A sweep row was not saved: %1").arg(QString::fromStdString(saved.status().message())));
        });
}
