#include "ui/compare/compare_page.h"

#include <QDateTime>
#include <QFileDialog>
#include <QFileInfo>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLineEdit>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include "ui/bridge/engine_client.h"
#include "ui/bridge/measure_worker.h"
#include "ui/bridge/store_client.h"
#include "ui/compare/compare_config_form.h"
#include "ui/compare/compare_outputs.h"
#include "ui/compare/compare_presets.h"
#include "ui/compare/compare_remote.h"
#include "ui/compare/prompt_set.h"
#include "ui/format.h"
#include "ui/history/history_recorder.h"
#include "ui/pages/retrieval_heatmap_grid.h"
#include "widgets/accuracy_heatmap.h"
#include "widgets/overlay_chart.h"
#include "widgets/token_stream_view.h"
#include "workbench/measure.h"

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
// The evaluation's window: 512 tokens, the second half scored; 4 windows by default take seconds
// on a small model.
constexpr int kEvalContext = 512;
}  // namespace

ComparePage::ComparePage(EngineClient* chat, StoreClient* store, QWidget* parent)
    : QWidget(parent), m_chat(chat), m_store(store) {
    m_engine = new EngineClient(this);
    m_remote = new RemoteChatClient(this);
    m_measure = new MeasureClient(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* split = new QSplitter(Qt::Vertical, this);
    layout->addWidget(split);

    auto* top = new QWidget(split);
    auto* topRow = new QHBoxLayout(top);
    topRow->setContentsMargins(0, 0, 0, 0);
    auto* promptBox = new QGroupBox(tr("Prompt, or a set: prompts separated by a line holding only ---"), top);
    auto* promptCol = new QVBoxLayout(promptBox);
    m_prompt = new QPlainTextEdit(promptBox);
    m_prompt->setObjectName(QStringLiteral("comparePrompt"));
    m_prompt->setPlainText(tr("Explain in three sentences why the sky is blue."));
    promptCol->addWidget(m_prompt);
    auto* loadSet = new QPushButton(tr("Load prompt set…"), promptBox);
    loadSet->setObjectName(QStringLiteral("compareLoadPromptSet"));
    loadSet->setToolTip(tr("A .jsonl file (one {\"prompt\": …} per line, as workbench-cli batch reads) or a text "
                           "file with prompts separated by --- lines."));
    connect(loadSet, &QPushButton::clicked, this, &ComparePage::chooseAndLoadPromptSet);
    promptCol->addWidget(loadSet, 0, Qt::AlignLeft);
    auto* sampling = new QFormLayout();
    m_maxTokens = new QSpinBox(promptBox);
    m_maxTokens->setObjectName(QStringLiteral("compareMaxTokens"));
    m_maxTokens->setRange(1, 4096);
    m_maxTokens->setValue(96);
    m_temperature = new QDoubleSpinBox(promptBox);
    m_temperature->setObjectName(QStringLiteral("compareTemperature"));
    m_temperature->setRange(0, 5);
    m_temperature->setSingleStep(0.05);
    m_temperature->setValue(0);
    m_temperature->setToolTip(tr("0: greedy, so outputs differ only where the configurations do."));
    sampling->addRow(tr("Max tokens"), m_maxTokens);
    m_evalWindows = new QSpinBox(promptBox);
    m_evalWindows->setObjectName(QStringLiteral("compareEvalWindows"));
    m_evalWindows->setRange(1, 1000);
    m_evalWindows->setValue(4);
    m_evalWindows->setToolTip(tr("Windows of %1 tokens of alice_wonderland.txt that Evaluate quality scores.").arg(kEvalContext));
    sampling->addRow(tr("Quality windows"), m_evalWindows);
    sampling->addRow(tr("Temperature"), m_temperature);
    promptCol->addLayout(sampling);
    topRow->addWidget(promptBox, 2);

    auto* configBox = new QGroupBox(tr("Configurations (the chat's model, loaded one after the other)"), top);
    auto* configCol = new QVBoxLayout(configBox);
    m_form = new CompareConfigForm(configBox);
    configCol->addWidget(m_form);
    auto* buttons = new QHBoxLayout();
    m_run = new QPushButton(tr("Run"), configBox);
    m_run->setObjectName(QStringLiteral("compareRun"));
    m_stop = new QPushButton(tr("Stop"), configBox);
    m_stop->setObjectName(QStringLiteral("compareStop"));
    m_evaluate = new QPushButton(tr("Evaluate quality"), configBox);
    m_evaluate->setObjectName(QStringLiteral("compareEvaluate"));
    m_evaluate->setToolTip(tr("Perplexity on windows of %1 tokens of alice_wonderland.txt, and KL divergence and "
                              "top-1 agreement against full attention with f16 KV.")
                               .arg(kEvalContext));
    m_progress = new QProgressBar(configBox);
    m_progress->setObjectName(QStringLiteral("compareProgress"));
    m_progress->setVisible(false);
    for (QPushButton* b : {m_run, m_stop, m_evaluate}) buttons->addWidget(b);
    buttons->addWidget(m_progress, 1);
    configCol->addLayout(buttons);
    m_status = new QLabel(configBox);
    m_status->setObjectName(QStringLiteral("compareStatus"));
    m_status->setWordWrap(true);
    configCol->addWidget(m_status);
    topRow->addWidget(configBox, 3);

    m_outputs = new CompareOutputs(CompareConfigForm::kMaxRows, split);
    connect(m_outputs, &CompareOutputs::shownPromptChanged, this, &ComparePage::redrawCharts);

    auto* bottom = new QWidget(split);
    auto* bottomCol = new QVBoxLayout(bottom);
    bottomCol->setContentsMargins(0, 0, 0, 0);
    auto* bottomRow = new QHBoxLayout();
    bottomCol->addLayout(bottomRow, 1);
    m_table = new CompareTable(bottom);
    m_kvChart = new OverlayChart(tr("KV cache vs tokens in context"), tr("tokens"), tr("MiB"), bottom);
    m_kvChart->setObjectName(QStringLiteral("compareKvChart"));
    m_rateChart = new OverlayChart(tr("Decode speed"), tr("generated tokens"), tr("tok/s"), bottom);
    m_rateChart->setObjectName(QStringLiteral("compareRateChart"));
    bottomRow->addWidget(m_table, 3);
    bottomRow->addWidget(m_kvChart, 2);
    bottomRow->addWidget(m_rateChart, 2);
    // Evaluate quality's retrieval, column by column, as length × depth heatmaps.
    // In a strip that scrolls sideways: four columns' panels may be wider than the page.
    m_heatmapArea = new QScrollArea(bottom);
    m_heatmapArea->setFrameShape(QFrame::NoFrame);
    m_heatmapArea->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_heatmap = new AccuracyHeatmap();
    m_heatmap->setObjectName(QStringLiteral("compareHeatmap"));
    m_heatmapArea->setWidget(m_heatmap);
    m_heatmapArea->hide();
    bottomCol->addWidget(m_heatmapArea);
    split->addWidget(top);
    split->addWidget(m_outputs);
    split->addWidget(bottom);
    split->setSizes({220, 240, 420});

    connect(m_run, &QPushButton::clicked, this, &ComparePage::run);
    connect(m_stop, &QPushButton::clicked, this, &ComparePage::stop);
    connect(m_evaluate, &QPushButton::clicked, this, &ComparePage::evaluateQuality);
    connect(m_engine, &EngineClient::modelLoaded, this, [this] {
        if (!m_running || m_current < 0) return;
        if (m_stopRequested) nextConfiguration();  // stopped while loading
        else sendPrompt();
    });
    connect(m_engine, &EngineClient::loadFailed, this, &ComparePage::onLoadFailed);
    // A reply comes from the engine or the server, whichever the running row is; one at a time.
    for (ChatBackend* backend : {static_cast<ChatBackend*>(m_engine), static_cast<ChatBackend*>(m_remote)}) {
        connect(backend, &ChatBackend::tokensArrived, this, [this](const QString& text) {
            if (m_running && m_current >= 0 && m_currentPrompt >= 0)
                m_outputs->appendStream(m_currentPrompt, m_current, text);
        });
        connect(backend, &ChatBackend::samplesArrived, this, &ComparePage::onSamples);
        connect(backend, &ChatBackend::replyFinished, this, &ComparePage::onReplyFinished);
        connect(backend, &ChatBackend::replyFailed, this, &ComparePage::onReplyFailed);
    }
    connect(m_form, &CompareConfigForm::remoteRequested, this, [this](int row) {
        compareremote::askForServer(this, [this, row](const RemoteTarget& t) { m_form->setRemote(row, t); });
    });
    connect(m_store, &StoreClient::opened, this, &ComparePage::refreshPresets);
    connect(m_form, &CompareConfigForm::savePresetRequested, this, &ComparePage::askAndSavePreset);
    connect(this, &ComparePage::comparisonSaved, this, &ComparePage::refreshPresets);

    connect(m_measure, &MeasureClient::progress, this, [this](const QString& step, double fraction) {
        m_progress->setRange(0, 100);
        m_progress->setValue(static_cast<int>(fraction * 100));
        setStatus(step);
    });
    connect(m_measure, &MeasureClient::qualityReady, this, [this](QualityFigures f) {
        f.index = m_evalColumns.value(f.index, -1);  // only local columns were evaluated
        m_quality.push_back(f);
        if (f.index < 0 || f.index >= m_figures.size()) return;
        CompareFigures& c = m_figures[f.index];
        c.perplexity = f.perplexity;
        c.klMean = f.klMean;
        c.top1 = f.top1;
        c.retrieval = f.retrieval;
        if (f.baselinePerplexity > 0) c.deltaPplPct = (f.perplexity / f.baselinePerplexity - 1.0) * 100.0;
        refreshTable();
        const QJsonObject row = QJsonDocument::fromJson(f.json.toUtf8()).object();
        const HeatmapGrid grid = retrievalHeatmapGrid(QStringLiteral("#%1 · %2").arg(f.index + 1).arg(c.name), row.value(QStringLiteral("retrieval_cells")));
        if (!grid.rows.isEmpty()) {
            m_retrievalGrids.append(grid);
            m_heatmap->setPanels(m_retrievalGrids);
            m_heatmap->resize(m_heatmap->sizeHint());
            m_heatmapArea->setFixedHeight(m_heatmap->sizeHint().height() + m_heatmapArea->horizontalScrollBar()->sizeHint().height());
            m_heatmapArea->show();
        }
    });
    connect(m_measure, &MeasureClient::failed, this, [this](int index, const QString& message) {
        setStatus(index >= 0 ? tr("Configuration %1: %2").arg(m_evalColumns.value(index, index) + 1).arg(message) : message);
    });
    connect(m_measure, &MeasureClient::finished, this, [this] {
        m_progress->setVisible(false);
        updateButtons();
        std::vector<workbench::EngineConfig> configs(m_configs.begin(), m_configs.end());
        if (m_quality.empty() || !m_store->isOpen()) {
            emit evaluationFinished();
            return;
        }
        m_store->call<bool>([configs, quality = m_quality](workbench::Store& s) {
            return comparisons::saveEvaluations(s, configs, quality);
        }, this, [this](const workbench::Result<bool>& result) {
            if (!result.ok()) setStatus(QString::fromStdString(result.status().message()));
            else setStatus(tr("Quality evaluated and saved."));
            emit evaluationFinished();
        });
    });
    connect(m_chat, &EngineClient::busyChanged, this, &ComparePage::updateButtons);
    connect(m_chat, &EngineClient::modelLoaded, this, &ComparePage::updateButtons);
    connect(m_chat, &EngineClient::loadFailed, this, &ComparePage::updateButtons);
    updateButtons();
    refreshPresets();
    setStatus(tr("Pick configurations, write a prompt (or a set), Run."));
}

TokenStreamView* ComparePage::output(int column) const { return m_outputs->view(column); }
QString ComparePage::statusText() const { return m_status->text(); }
void ComparePage::setStatus(const QString& text) { m_status->setText(text); }

workbench::EngineConfig ComparePage::baseConfig() const {
    workbench::EngineConfig base = m_chat->config();
    base.on_load_progress = nullptr;
    // A comparison needs little context: a smaller pool loads faster.
    if (base.n_ctx <= 0 || base.n_ctx > 2048) base.n_ctx = 2048;
    base.kv_budget_bytes = 0;
    return base;
}

void ComparePage::setChatConfig(const workbench::EngineConfig& config) {
    m_chatConfig = config;
    m_form->setChatSettings(config);
    refreshPresets();  // the built-in latent rank and "stored for another model" follow the model
}

void ComparePage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    m_form->setConnectedServer(compareremote::connectedServer(this, m_remote));  // the chat may have connected since
    refreshPresets();
}

bool ComparePage::loadPromptSet(const QString& path) {
    const promptset::Loaded loaded = promptset::load(path);
    if (!loaded.error.isEmpty()) {
        setStatus(loaded.error);
        return false;
    }
    m_prompt->setPlainText(promptset::join(loaded.prompts));
    setStatus(tr("%n prompt(s) loaded from %1.", nullptr, static_cast<int>(loaded.prompts.size()))
                  .arg(QFileInfo(path).fileName()));
    return true;
}

void ComparePage::chooseAndLoadPromptSet() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load prompt set"), QString(),
                                                      tr("Prompt sets (*.jsonl *.txt);;All files (*)"));
    if (!path.isEmpty()) loadPromptSet(path);
}

void ComparePage::updateButtons() {
    const bool model = m_chat->isLoaded();  // a failed load leaves a path but no model
    const bool busy = m_running || m_measure->isBusy();
    m_run->setEnabled(model && !busy);
    m_evaluate->setEnabled(model && !busy);
    m_stop->setEnabled(busy);
}

void ComparePage::run() {
    if (m_running || m_measure->isBusy()) return;
    if (!m_chat->isLoaded()) {
        setStatus(tr("Load a model first (the comparison runs on the chat's model)."));
        return;
    }
    m_configs = m_form->configs(baseConfig());
    m_remotes = m_form->remotes();
    m_drafting = m_form->speculations();
    m_prompts = promptset::split(m_prompt->toPlainText());
    if (m_configs.isEmpty() || m_prompts.isEmpty()) {
        setStatus(tr("Tick at least one configuration and write a prompt."));
        return;
    }
    // Every row is checked before the first runs: a typo in the last row must not wait for the rest.
    for (int i = 0; i < m_configs.size(); ++i)
        if (const workbench::Status s = isRemoteColumn(i) ? workbench::Status{} : workbench::check_engine_config(m_configs[i]); !s.ok()) {
            setStatus(tr("Configuration %1 cannot run: %2").arg(i + 1).arg(QString::fromStdString(s.message())));
            return;
        }
    m_cells = QList<QList<Cell>>(m_configs.size(), QList<Cell>(m_prompts.size()));
    m_figures.clear();
    m_quality.clear();
    clearHeatmap();
    m_saved = {};
    m_kvChart->clear();
    m_rateChart->clear();
    QStringList titles;
    for (int i = 0; i < m_configs.size(); ++i) {
        titles << QStringLiteral("<b>#%1</b> %2").arg(i + 1).arg(columnName(i).toHtmlEscaped());
        m_figures.append(namedFigures(i));
        addChartLines(i);
    }
    m_outputs->reset(titles, m_prompts);
    refreshTable();
    m_running = true;
    m_stopRequested = false;
    m_current = -1;
    m_currentPrompt = -1;
    m_progress->setVisible(true);
    m_progress->setRange(0, static_cast<int>(m_configs.size() * m_prompts.size()));
    m_progress->setValue(0);
    updateButtons();
    nextConfiguration();
}

void ComparePage::stop() {
    m_stopRequested = true;
    m_engine->stop();
    m_remote->stop();
    m_measure->stop();
}

void ComparePage::nextConfiguration() {
    ++m_current;
    m_currentPrompt = -1;
    m_progress->setValue(static_cast<int>(m_current * m_prompts.size()));
    if (m_stopRequested || m_current >= m_configs.size()) {
        finishRun();
        return;
    }
    if (isRemoteColumn(m_current)) {  // nothing to load: the server has its model
        m_remote->setTarget(*m_remotes[m_current]);
        sendPrompt();
        return;
    }
    setStatus(tr("Configuration %1 of %2: loading…").arg(m_current + 1).arg(m_configs.size()));
    m_engine->loadModel(m_configs[m_current], false);  // a failed row is reported, not replaced by the last
}

void ComparePage::sendPrompt() {
    ++m_currentPrompt;
    workbench::GenerationRequest request;
    request.max_tokens = m_maxTokens->value();
    request.sampling.temperature = static_cast<float>(m_temperature->value());
    request.speculation = m_drafting.value(m_current);
    currentCell().startedMs = QDateTime::currentMSecsSinceEpoch();
    setStatus(tr("Configuration %1 of %2, prompt %3 of %4: generating…")
                  .arg(m_current + 1).arg(m_configs.size()).arg(m_currentPrompt + 1).arg(m_prompts.size()));
    m_outputs->beginStream(m_currentPrompt, m_current);
    // Each prompt is a conversation of its own.
    const ChatHistory messages{workbench::ChatMessage{"user", m_prompts[m_currentPrompt].toStdString()}};
    ChatBackend* backend = isRemoteColumn(m_current) ? static_cast<ChatBackend*>(m_remote) : m_engine;
    if (!backend->sendChat(messages, request)) onReplyFailed(tr("the engine was busy"));
}

void ComparePage::nextPrompt() {
    m_progress->setValue(static_cast<int>(m_current * m_prompts.size() + m_currentPrompt + 1));
    if (m_stopRequested || m_currentPrompt + 1 >= m_prompts.size()) nextConfiguration();
    else sendPrompt();
}

void ComparePage::appendChartPoints(int column, const QList<TokenSample>& samples, int from) {
    if (samples.isEmpty()) return;
    // Decode speed counts from the reply's first sample.
    const int firstContext = samples.first().nTokensContext;
    const double firstMs = samples.first().msSinceRequest;
    QList<QPointF> kv, rate;
    for (int i = std::max(0, from); i < samples.size(); ++i) {
        const TokenSample& s = samples[i];
        kv.append({static_cast<double>(s.nTokensContext), s.kvBytesInUse / kMiB});
        const int decoded = s.nTokensContext - firstContext;
        if (decoded > 0 && s.msSinceRequest > firstMs)
            rate.append({static_cast<double>(decoded + 1), decoded * 1000.0 / (s.msSinceRequest - firstMs)});
    }
    if (!isRemoteColumn(column)) m_kvChart->appendPoints(column, kv);  // a server reports no KV bytes
    m_rateChart->appendPoints(column, rate);
}

void ComparePage::onSamples(const QList<TokenSample>& arrived) {
    if (!m_running || m_current < 0 || m_currentPrompt < 0) return;
    Cell& c = currentCell();
    const int from = static_cast<int>(c.samples.size());
    QList<TokenSample> samples = arrived;
    if (isRemoteColumn(m_current)) compareremote::numberSamples(samples, from);
    c.samples.append(samples);
    if (m_currentPrompt == m_outputs->shownPrompt()) appendChartPoints(m_current, c.samples, from);
}

void ComparePage::redrawCharts() {
    m_kvChart->clear();
    m_rateChart->clear();
    const int shown = m_outputs->shownPrompt();
    for (int column = 0; column < m_configs.size(); ++column) {
        addChartLines(column);
        if (column < m_cells.size() && shown >= 0 && shown < m_cells[column].size())
            appendChartPoints(column, m_cells[column][shown].samples, 0);
    }
}

void ComparePage::onReplyFinished(const ReplySummary& summary) {
    if (!m_running || m_current < 0 || m_currentPrompt < 0) return;
    currentCell().reply = summary;
    m_outputs->finish(m_currentPrompt, m_current, summary.text, compareremote::footer(summary));
    nextPrompt();
}

void ComparePage::onReplyFailed(const QString& message) {
    if (!m_running || m_current < 0 || m_currentPrompt < 0) return;
    currentCell().error = message;
    m_outputs->fail(m_currentPrompt, m_current, message);
    nextPrompt();
}

void ComparePage::onLoadFailed(const QString& message) {
    if (!m_running || m_current < 0) return;
    // Without a load no prompt runs under this configuration.
    for (int p = 0; p < m_prompts.size(); ++p) {
        m_cells[m_current][p].error = message;
        m_outputs->fail(p, m_current, message);
    }
    nextConfiguration();
}

void ComparePage::finishRun() {
    m_running = false;
    m_progress->setVisible(false);
    m_engine->unload();  // the chat's model is the one that stays in memory
    std::vector<ComparisonCell> toSave;
    std::vector<std::string> errors(static_cast<size_t>(m_cells.size()));  // per column: its first failure
    workbench::RunProvenance provenance = workbench::app_provenance();
    provenance.model_sha256 = m_engine->modelSha256().toStdString();
    provenance.backend = m_chatConfig.backend;
    if (const auto& info = m_chat->modelInfo()) {
        provenance.backend = info->backend;
        provenance.cpu_features = info->cpu_features;
        provenance.n_threads = info->n_threads;
    }
    for (int i = 0; i < m_cells.size(); ++i) {
        std::vector<workbench::RunRecord> runs;
        bool failed = false;
        for (int p = 0; p < m_cells[i].size(); ++p) {
            const Cell& c = m_cells[i][p];
            failed = failed || !c.error.isEmpty();
            std::string& error = errors[static_cast<size_t>(i)];
            if (!c.error.isEmpty() && error.empty()) error = (m_prompts.size() > 1 ? tr("prompt %1: %2").arg(p + 1).arg(c.error) : c.error).toStdString();
            if (!c.reply) continue;
            ComparisonCell cell;
            cell.prompt = p;
            cell.column = i;
            cell.output = c.reply->text.toStdString();
            cell.run.started_unix_ms = c.startedMs;
            cell.run.provenance = isRemoteColumn(i) ? compareremote::provenance() : provenance;
            if (!isRemoteColumn(i) && i < m_configs.size()) cell.run.provenance.backend = m_configs[i].backend;
            workbench::apply_metrics(cell.run, c.reply->metrics);
            cell.run.stop_reason = c.reply->stopReasonName.toStdString();
            cell.samples = HistoryRecorder::toMetricSamples(c.samples, c.reply->metrics);
            runs.push_back(cell.run);
            toSave.push_back(std::move(cell));
        }
        m_figures[i] = runs.empty() ? namedFigures(i) : CompareFigures::fromRuns(columnName(i), runs);
        if (failed) m_figures[i].name += runs.empty() ? tr(" (failed)") : tr(" (some prompts failed)");
    }
    refreshTable();
    updateButtons();
    if (toSave.empty() || !m_store->isOpen()) {
        setStatus(toSave.empty() ? tr("No configuration produced an output.")
                                 : tr("Done (not saved: history is off)."));
        emit runFinished();
        return;
    }
    setStatus(tr("Done; saving…"));
    std::vector<std::string> prompts;
    for (const QString& p : m_prompts) prompts.push_back(p.toStdString());
    std::vector<workbench::EngineConfig> configs(m_configs.begin(), m_configs.end());
    std::vector<std::optional<workbench::ConfigurationRecord>> stored;
    for (const std::optional<RemoteTarget>& remote : m_remotes)
        stored.push_back(remote ? std::optional(compareremote::configuration(*remote)) : std::nullopt);
    m_store->call<SavedComparison>(
        [prompts, configs, stored, errors, toSave = std::move(toSave)](workbench::Store& s) mutable {
            return comparisons::save(s, prompts, configs, std::move(toSave), stored, errors);
        },
        this, [this](const workbench::Result<SavedComparison>& result) {
            if (!result.ok()) {
                setStatus(tr("Not saved: %1").arg(QString::fromStdString(result.status().message())));
            } else {
                m_saved = *result;
                setStatus(tr("Done; saved as comparison %1 (History → Comparisons).").arg(m_saved.id));
                emit comparisonSaved(m_saved.id);
            }
            emit runFinished();
        });
}

void ComparePage::refreshTable() { m_table->setFigures(m_figures); }

void ComparePage::clearHeatmap() {
    m_retrievalGrids.clear();
    m_heatmap->setPanels({});
    m_heatmapArea->hide();
}

QString ComparePage::columnName(int column) const {
    return isRemoteColumn(column) ? compareremote::shortName(*m_remotes[column]) : CompareConfigForm::shortName(m_configs.value(column), m_drafting.value(column));
}

CompareFigures ComparePage::namedFigures(int column) const {
    return compareremote::marked(CompareFigures::named(columnName(column)), isRemoteColumn(column));
}

void ComparePage::addChartLines(int column) {
    const QString name = QStringLiteral("#%1").arg(column + 1);
    m_kvChart->addLine(isRemoteColumn(column) ? tr("%1 (remote: KV not reported)").arg(name) : name);
    m_rateChart->addLine(name);
}

void ComparePage::evaluateQuality() {
    if (m_running || m_measure->isBusy()) return;
    if (m_chat->config().model_path.empty()) {
        setStatus(tr("Load a model first."));
        return;
    }
    const QList<workbench::EngineConfig> configs = m_form->configs(baseConfig());
    // New configurations since the last run: start a fresh table for them.
    if (configs.size() != m_configs.size() || m_figures.size() != configs.size()) {
        m_configs = configs;
        m_remotes = m_form->remotes();
        m_drafting = m_form->speculations();
        m_figures.clear();
        for (int i = 0; i < m_configs.size(); ++i) m_figures.append(namedFigures(i));
    }
    // A server returns no full logits: its rows are left out (the table says so in their cells).
    m_evalColumns = compareremote::localColumns(m_remotes, static_cast<int>(m_configs.size()));
    QList<workbench::EngineConfig> local;
    for (int i : m_evalColumns) local.append(m_configs[i]);
    if (local.isEmpty()) {
        setStatus(tr("Quality is %1: tick a local row too.").arg(compareremote::notAvailable()));
        return;
    }
    m_quality.clear();
    clearHeatmap();
    m_progress->setVisible(true);
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    const QString text = QString::fromStdString(workbench::default_eval_text_path());
    m_measure->evaluate(local, text, kEvalContext, m_evalWindows->value());
    updateButtons();
}
