#include "ui/benchmark/benchmark_page.h"

#include <utility>

#include <QDateTime>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

#include "ui/benchmark/remote_sweep_panel.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/measure_worker.h"
#include "ui/bridge/store_client.h"
#include "ui/format.h"
#include "workbench/json.h"
#include "widgets/overlay_chart.h"

namespace {

QTableWidget* makeTable(QWidget* parent, const QString& name, const QStringList& headers) {
    auto* t = new QTableWidget(0, static_cast<int>(headers.size()), parent);
    t->setObjectName(name);
    t->setHorizontalHeaderLabels(headers);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->hide();
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    t->setSortingEnabled(false);
    return t;
}

void addRow(QTableWidget* t, const QStringList& cells) {
    const int row = t->rowCount();
    t->insertRow(row);
    for (int c = 0; c < cells.size(); ++c) t->setItem(row, c, new QTableWidgetItem(cells[c]));
}

}  // namespace

BenchmarkPage::BenchmarkPage(EngineClient* chat, StoreClient* store, QWidget* parent)
    : QWidget(parent), m_chat(chat), m_store(store) {
    m_measure = new MeasureClient(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);

    auto* setup = new QGroupBox(tr("pp/tg: one sequence, n_prompt tokens in one step and n_gen one at a time · "
                                   "batch sweep: B sequences prefill n_prompt tokens, then decode n_gen together"), this);
    auto* row = new QHBoxLayout(setup);
    auto* form = new QFormLayout();
    m_config = new QLabel(setup);
    m_config->setWordWrap(true);
    m_batches = new QLineEdit(QStringLiteral("1,2,4,8"), setup);
    m_batches->setObjectName(QStringLiteral("benchBatches"));
    m_nPrompt = new QSpinBox(setup);
    m_nPrompt->setObjectName(QStringLiteral("benchPromptTokens"));
    m_nPrompt->setRange(1, 8192);
    m_nPrompt->setValue(128);
    m_nGen = new QSpinBox(setup);
    m_nGen->setObjectName(QStringLiteral("benchGenTokens"));
    m_nGen->setRange(1, 4096);
    m_nGen->setValue(32);
    form->addRow(tr("Configuration"), m_config);
    form->addRow(tr("Batch sizes"), m_batches);
    form->addRow(tr("n_prompt"), m_nPrompt);
    form->addRow(tr("n_gen"), m_nGen);
    m_reps = new QSpinBox(setup);
    m_reps->setObjectName(QStringLiteral("benchRepetitions"));
    m_reps->setRange(1, 100);
    m_reps->setValue(5);
    m_reps->setToolTip(tr("pp/tg: timed runs after one warm-up (llama-bench's -r)"));
    form->addRow(tr("Repetitions (pp/tg)"), m_reps);
    row->addLayout(form, 1);
    auto* buttons = new QVBoxLayout();
    m_run = new QPushButton(tr("Run sweep"), setup);
    m_run->setObjectName(QStringLiteral("benchRun"));
    m_runSpeed = new QPushButton(tr("Run pp/tg"), setup);
    m_runSpeed->setObjectName(QStringLiteral("benchRunSpeed"));
    m_stop = new QPushButton(tr("Stop"), setup);
    m_stop->setObjectName(QStringLiteral("benchStop"));
    m_progress = new QProgressBar(setup);
    m_progress->setObjectName(QStringLiteral("benchProgress"));
    m_progress->setVisible(false);
    m_status = new QLabel(setup);
    m_status->setObjectName(QStringLiteral("benchStatus"));
    m_status->setWordWrap(true);
    for (QWidget* w : {static_cast<QWidget*>(m_runSpeed), static_cast<QWidget*>(m_run), static_cast<QWidget*>(m_stop), static_cast<QWidget*>(m_progress),
                       static_cast<QWidget*>(m_status)})
        buttons->addWidget(w);
    buttons->addStretch(1);
    row->addLayout(buttons, 1);
    // The local engine's setup and a remote server's share one place: tabs, not a taller page.
    auto* sources = new QTabWidget(this);
    sources->setObjectName(QStringLiteral("benchSources"));
    sources->addTab(setup, tr("This machine's engine"));
    m_remote = new RemoteSweepPanel(sources);
    sources->addTab(m_remote, tr("Remote server"));
    layout->addWidget(sources);

    auto* split = new QSplitter(Qt::Vertical, this);
    auto* charts = new QWidget(split);
    auto* chartRow = new QHBoxLayout(charts);
    chartRow->setContentsMargins(0, 0, 0, 0);
    m_throughput = new OverlayChart(tr("Throughput vs batch"), tr("batch size"), tr("tok/s"), charts);
    m_throughput->setObjectName(QStringLiteral("benchThroughputChart"));
    m_latency = new OverlayChart(tr("Latency vs batch"), tr("batch size"), tr("TTFT ms"), charts);
    m_latency->setObjectName(QStringLiteral("benchLatencyChart"));
    m_throughput->setPointsVisible(true);
    m_latency->setPointsVisible(true);
    chartRow->addWidget(m_throughput);
    chartRow->addWidget(m_latency);
    m_results = makeTable(split, QStringLiteral("benchResults"),
                          {tr("batch"), tr("total tok/s"), tr("prompt tok/s"), tr("generated tok/s"), tr("TTFT ms"),
                           tr("TPOT ms"), tr("KV peak")});
    m_speed = makeTable(split, QStringLiteral("benchSpeed"), {tr("test"), tr("tok/s"), tr("± stddev"), tr("threads")});
    auto* savedBox = new QGroupBox(tr("Saved benchmarks"), split);
    auto* savedCol = new QVBoxLayout(savedBox);
    m_saved = makeTable(savedBox, QStringLiteral("benchSaved"),
                        {tr("date"), tr("machine"), tr("configuration"), tr("test"), tr("batch"), tr("tok/s"), tr("threads")});
    savedCol->addWidget(m_saved);
    split->addWidget(charts);
    split->addWidget(m_speed);
    split->addWidget(m_results);
    split->addWidget(savedBox);
    // pp and tg (and a depth's two more) in full view, never a two-row slit.
    m_speed->setMinimumHeight(m_speed->horizontalHeader()->sizeHint().height() + 3 * m_speed->verticalHeader()->defaultSectionSize() +
                              2 * m_speed->frameWidth() + 4);
    split->setChildrenCollapsible(false);
    split->setSizes({330, m_speed->minimumHeight(), 160, 220});
    layout->addWidget(split, 1);

    connect(m_run, &QPushButton::clicked, this, &BenchmarkPage::run);
    connect(m_runSpeed, &QPushButton::clicked, this, &BenchmarkPage::runSpeed);
    connect(m_stop, &QPushButton::clicked, this, &BenchmarkPage::stop);
    connect(m_measure, &MeasureClient::progress, this, [this](const QString& step, double fraction) {
        m_progress->setValue(static_cast<int>(fraction * 100));
        setStatus(step);
    });
    connect(m_measure, &MeasureClient::benchLoaded, this, [this](const workbench::ModelInfo& info) { m_runInfo = info; });
    connect(m_measure, &MeasureClient::benchPointReady, this, &BenchmarkPage::onPoint);
    connect(m_measure, &MeasureClient::failed, this, [this](int index, const QString& message) {
        setStatus(index >= 0 ? tr("batch %1: %2").arg(index).arg(message) : message);
    });
    connect(m_measure, &MeasureClient::finished, this, [this] {
        m_progress->setVisible(false);
        m_run->setEnabled(true);
        m_runSpeed->setEnabled(true);
        m_stop->setEnabled(false);
        m_runEnded = true;
        if (m_pendingSaves == 0) emit runFinished();
    });
    connect(m_store, &StoreClient::opened, this, &BenchmarkPage::refreshSaved);
    connect(m_remote, &RemoteSweepPanel::started, this, [this] { m_newRemoteSweep = true; });
    connect(m_remote, &RemoteSweepPanel::pointReady, this, &BenchmarkPage::onRemotePoint);
    // A message about an earlier model (a file that failed) is stale once the chat loads one.
    connect(m_chat, &EngineClient::modelLoaded, this, [this] {
        if (!m_measure->isBusy()) setStatus(QString());
    });
    m_stop->setEnabled(false);
}

void BenchmarkPage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    const workbench::EngineConfig& c = m_chat->config();
    m_config->setText(c.model_path.empty() ? tr("no model loaded")
                                           : tr("%1 · attention %2 · KV %3 · weights %4")
                                                 .arg(QString::fromStdString(c.model_path).section('/', -1),
                                                      QString::fromStdString(c.attention),
                                                      QString::fromStdString(c.kv_types),
                                                      c.weight_type.empty() ? tr("as stored")
                                                                            : QString::fromStdString(c.weight_type)));
    refreshSaved();
}

bool BenchmarkPage::isRunning() const { return m_measure->isBusy(); }
QString BenchmarkPage::statusText() const { return m_status->text(); }
void BenchmarkPage::setStatus(const QString& text) { m_status->setText(text); }

QList<int> BenchmarkPage::parseBatches(const QString& text) {
    QList<int> out;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int b = part.trimmed().toInt(&ok);
        if (!ok || b <= 0 || b > 256) return {};
        out.append(b);
    }
    return out;
}

bool BenchmarkPage::startRun() {
    if (m_measure->isBusy()) return false;
    if (!m_chat->isLoaded()) {
        setStatus(tr("Load a model first (benchmarks run the chat's model and configuration)."));
        return false;
    }
    m_runConfig = m_chat->config();
    m_runConfig.on_load_progress = nullptr;
    m_runInfo = {};
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    m_progress->setVisible(true);
    m_run->setEnabled(false);
    m_runSpeed->setEnabled(false);
    m_stop->setEnabled(true);
    m_runEnded = false;
    return true;
}

void BenchmarkPage::runSpeed() {
    if (!startRun()) return;
    m_newSpeedRun = true;  // the earlier rows stay until this run has one of its own
    m_measure->speed(m_runConfig, m_nPrompt->value(), m_nGen->value(), m_reps->value());
}

void BenchmarkPage::run() {
    const QList<int> batches = parseBatches(m_batches->text());
    if (batches.isEmpty()) {
        setStatus(tr("Batch sizes: positive numbers separated by commas, e.g. 1,2,4,8."));
        return;
    }
    if (!startRun()) return;
    m_newSweep = true;  // the earlier sweep stays until this one has a point of its own
    m_measure->benchmark(m_runConfig, batches, m_nPrompt->value(), m_nGen->value());
}

void BenchmarkPage::stop() { m_measure->stop(); }

void BenchmarkPage::onPoint(const BenchPoint& p) {
    if (!p.test.isEmpty()) {  // a pp/tg test
        if (std::exchange(m_newSpeedRun, false)) m_speed->setRowCount(0);
        addRow(m_speed, {p.test, QString::number(p.totalTokS, 'f', 1), QString::number(p.stddevTokS, 'f', 1), QString::number(p.nThreads)});
        save(p);
        return;
    }
    if (std::exchange(m_newSweep, false)) {
        m_results->setRowCount(0);
        m_throughput->clear();
        m_latency->clear();
        m_throughputLine = m_throughput->addLine(tr("total tok/s"));
        m_throughput->addLine(tr("generated tok/s"));
        m_ttftLine = m_latency->addLine(tr("TTFT"));
        m_tpotLine = m_latency->addLine(tr("TPOT"), tr("TPOT ms"));  // a hundredth of TTFT: its own scale
    }
    addRow(m_results, {QString::number(p.batch), QString::number(p.totalTokS, 'f', 1), QString::number(p.promptTokS, 'f', 1),
                       QString::number(p.genTokS, 'f', 1), QString::number(p.ttftMs, 'f', 1),
                       QString::number(p.tpotMs, 'f', 2), fmt::bytes(static_cast<double>(p.kvBytesPeak))});
    m_throughput->appendPoints(m_throughputLine, {QPointF(p.batch, p.totalTokS)});
    m_throughput->appendPoints(m_throughputLine + 1, {QPointF(p.batch, p.genTokS)});
    m_latency->appendPoints(m_ttftLine, {QPointF(p.batch, p.ttftMs)});
    m_latency->appendPoints(m_tpotLine, {QPointF(p.batch, p.tpotMs)});
    save(p);
}

void BenchmarkPage::save(const BenchPoint& p) {
    if (!m_store->isOpen()) {
        setStatus(tr("Not saved: history is off (%1).").arg(m_store->offReason()));
        return;
    }
    // The row as the engine reported it (machine and configuration included), with the model file's digest.
    auto row = workbench::parse_json(p.json.toStdString());
    if (!row.ok() || !row->is_object()) {
        setStatus(tr("Not saved: the benchmark row is not a JSON object (%1).").arg(QString::fromStdString(row.status().message())));
        return;
    }
    (*row)["model_sha256"] = m_chat->modelSha256().toStdString();
    workbench::BenchmarkRecord record;
    record.test_name = (p.test.isEmpty() ? QStringLiteral("pp%1+tg%2").arg(p.nPrompt).arg(p.nGen) : p.test).toStdString();
    record.n_prompt = p.nPrompt;
    record.n_gen = p.nGen;
    record.n_batch = p.batch;
    record.n_threads = p.nThreads ? p.nThreads : m_runInfo.n_threads;
    record.avg_ts = p.totalTokS;
    record.stddev_ts = p.stddevTokS;
    record.json = workbench::dump_json(*row);
    saveRecord(record, workbench::make_configuration(m_runConfig));
}

// A remote level: its own lines beside the local sweep's, a row marked remote, and a saved row
// under a configuration that names the server (backend "remote", as bench --remote --db saves).
void BenchmarkPage::onRemotePoint(const RemotePoint& p) {
    if (std::exchange(m_newRemoteSweep, false) || m_remoteThroughputLine < 0) {
        m_remoteThroughputLine = m_throughput->addLine(tr("remote output tok/s (%1)").arg(p.server));
        m_remoteTtftLine = m_latency->addLine(tr("remote TTFT (%1)").arg(p.server));
    }
    addRow(m_results, {tr("c=%1 remote").arg(p.concurrency), QString::number(p.totalTokS, 'f', 1), QString(),
                       QString::number(p.outputTokS, 'f', 1), QString::number(p.ttftMs, 'f', 1), QString::number(p.tpotMs, 'f', 2),
                       tr("not reported")});
    m_throughput->appendPoints(m_remoteThroughputLine, {QPointF(p.concurrency, p.outputTokS)});
    m_latency->appendPoints(m_remoteTtftLine, {QPointF(p.concurrency, p.ttftMs)});
    if (!m_store->isOpen()) return;
    workbench::BenchmarkRecord record;
    record.test_name = QStringLiteral("serve c=%1").arg(p.concurrency).toStdString();
    record.n_prompt = p.nPrompt;
    record.n_gen = p.nGen;
    record.n_batch = p.concurrency;
    record.avg_ts = p.outputTokS;
    record.json = p.json.toStdString();
    saveRecord(record, wbremote::remote_configuration(m_remote->baseUrl().toStdString(), p.model.toStdString(), p.server.toStdString()));
}

void BenchmarkPage::saveRecord(workbench::BenchmarkRecord record, const workbench::ConfigurationRecord& configuration) {
    ++m_pendingSaves;
    m_store->call<workbench::RowId>(
        [configuration, record](workbench::Store& s) mutable -> workbench::Result<workbench::RowId> {
            auto id = s.save_configuration(configuration);
            if (!id.ok()) return id.status();
            record.configuration_id = *id;
            return s.save_benchmark(record);
        },
        this, [this](const workbench::Result<workbench::RowId>& result) {
            --m_pendingSaves;
            if (result.ok()) ++m_savedCount;
            else setStatus(tr("Not saved: %1").arg(QString::fromStdString(result.status().message())));
            refreshSaved();
            if (m_runEnded && m_pendingSaves == 0) emit runFinished();
        });
}

void BenchmarkPage::refreshSaved() {
    if (!m_store->isOpen()) return;
    struct Listing {
        std::vector<workbench::BenchmarkRecord> benchmarks;
        std::map<workbench::RowId, workbench::ConfigurationRecord> configurations;
    };
    m_store->call<Listing>(
        [](workbench::Store& s) -> workbench::Result<Listing> {
            Listing l;
            auto benchmarks = s.list_benchmarks();
            if (!benchmarks.ok()) return benchmarks.status();
            l.benchmarks = std::move(benchmarks).value();
            auto configurations = s.list_configurations();
            if (configurations.ok())
                for (const auto& c : *configurations) l.configurations[c.id] = c;
            return l;
        },
        this, [this](const workbench::Result<Listing>& result) {
            if (!result.ok()) return;
            m_saved->setRowCount(0);
            std::vector<workbench::BenchmarkRecord> rows = result->benchmarks;
            std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.id > b.id; });
            for (const workbench::BenchmarkRecord& b : rows) {
                const QJsonObject j = QJsonDocument::fromJson(QByteArray::fromStdString(b.json)).object();
                // cpu_info: llama-bench's name for the CPU; rows saved before it said cpu_model.
                QString machine = j.value(QStringLiteral("cpu_info")).toString();
                if (machine.isEmpty()) machine = j.value(QStringLiteral("cpu_model")).toString();
                QString configuration;
                auto c = result->configurations.find(b.configuration_id);
                if (c != result->configurations.end())
                    configuration = QStringLiteral("%1 · %2 · KV %3")
                                        .arg(QString::fromStdString(c->second.model), QString::fromStdString(c->second.variant),
                                             QString::fromStdString(c->second.kv_dtype));
                addRow(m_saved, {QDateTime::fromMSecsSinceEpoch(b.created_unix_ms).toString(QStringLiteral("yyyy-MM-dd HH:mm")),
                                 machine.isEmpty() ? tr("unknown") : machine, configuration,
                                 QString::fromStdString(b.test_name), QString::number(b.n_batch),
                                 QString::number(b.avg_ts, 'f', 1), QString::number(b.n_threads)});
            }
            emit savedListLoaded(m_saved->rowCount());
        });
}
