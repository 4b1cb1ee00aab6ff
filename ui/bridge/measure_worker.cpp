#include "ui/bridge/measure_worker.h"

#include <QFile>
#include <QFileInfo>
#include <algorithm>

#include "workbench/digest.h"
#include "workbench/store.h"
#include "workbench/sweep.h"

namespace {

QString message(const workbench::Status& status) { return QString::fromStdString(status.message()); }

}  // namespace

void MeasureWorker::evaluate(const QList<workbench::EngineConfig>& configs, const QString& textPath, int nCtx,
                             int maxWindows, const CancelFlag& cancel) {
    QFile file(textPath);
    if (!file.open(QIODevice::ReadOnly)) {
        emit failed(-1, tr("Cannot read the evaluation text %1: %2").arg(textPath, file.errorString()));
        emit finished();
        return;
    }
    const std::string text = file.readAll().toStdString();
    const QString textSha = QString::fromStdString(workbench::sha256_hex(text));
    if (configs.isEmpty()) {
        emit finished();
        return;
    }
    // The reference every configuration is scored against: the same model and threads, full
    // attention, f16 KV, the file's weights.
    workbench::EngineConfig baseConfig;
    baseConfig.model_path = configs.first().model_path;
    baseConfig.n_threads = configs.first().n_threads;
    baseConfig.n_ctx = nCtx;
    baseConfig.backend = configs.first().backend;
    emit progress(tr("loading the baseline (full attention, f16 KV)"), 0);
    auto base = workbench::Engine::load(baseConfig);
    if (!base.ok()) {
        emit failed(-1, tr("baseline: %1").arg(message(base.status())));
        emit finished();
        return;
    }
    const std::vector<workbench::TokenId> tokens = (*base)->tokenize(text, true, false);
    const int n = static_cast<int>(configs.size());
    for (int i = 0; i < n; ++i) {
        if (cancel && cancel->load()) break;
        workbench::EngineConfig config = configs[i];
        config.n_ctx = std::max(nCtx, measure::kRetrievalContext);   // the retrieval grid's prompts too
        config.on_load_progress = nullptr;
        emit progress(tr("configuration %1 of %2: loading").arg(i + 1).arg(n), double(i) / n);
        auto engine = workbench::Engine::load(config);
        if (!engine.ok()) {
            emit failed(i, message(engine.status()));
            continue;
        }
        auto onProgress = [this, i, n](double fraction) {
            emit progress(tr("configuration %1 of %2: scoring").arg(i + 1).arg(n), (i + std::clamp(fraction, 0.0, 1.0)) / n);
        };
        auto figures = measure::evaluateQuality(**engine, **base, tokens, nCtx, maxWindows, onProgress, cancel.get());
        if (!figures.ok()) {
            emit failed(i, message(figures.status()));
            continue;
        }
        figures->index = i;
        figures->textName = QFileInfo(textPath).fileName();
        figures->textSha256 = textSha;
        emit qualityReady(*figures);
    }
    emit progress(tr("done"), 1);
    emit finished();
}

std::unique_ptr<workbench::Engine> MeasureWorker::loadForBenchmark(const workbench::EngineConfig& requested, int nSeq, int nCtx,
                                                                   const QString& step) {
    workbench::EngineConfig config = requested;
    config.on_load_progress = nullptr;
    config.n_seq_max = nSeq;
    config.n_ctx = nCtx;
    config.kv_budget_bytes = 0;
    emit progress(step, 0);
    auto engine = workbench::Engine::load(config);
    if (!engine.ok()) {
        emit failed(-1, message(engine.status()));
        emit finished();
        return nullptr;
    }
    emit benchLoaded((*engine)->model_info());
    return std::move(engine).value();
}

void MeasureWorker::benchmark(const workbench::EngineConfig& requested, const QList<int>& batches, int nPrompt, int nGen,
                              const CancelFlag& cancel) {
    const int maxBatch = batches.isEmpty() ? 1 : *std::max_element(batches.begin(), batches.end());
    // Room for every sequence of the largest batch, and a context just long enough for one.
    auto engine = loadForBenchmark(requested, maxBatch, nPrompt + nGen + 16, tr("loading the model for batch %1").arg(maxBatch));
    if (!engine) return;
    const int n = static_cast<int>(batches.size());
    for (int i = 0; i < n; ++i) {
        if (cancel && cancel->load()) break;
        emit progress(tr("batch %1 (%2 of %3)").arg(batches[i]).arg(i + 1).arg(n), double(i) / n);
        auto point = measure::measureBatch(*engine, batches[i], nPrompt, nGen, 1234, cancel.get());
        if (!point.ok()) {
            emit failed(batches[i], message(point.status()));
            // Without the engine's measurements no batch would do better.
            if (!measure::available()) break;
            continue;
        }
        emit benchPointReady(*point);
    }
    emit progress(tr("done"), 1);
    emit finished();
}

void MeasureWorker::speed(const workbench::EngineConfig& requested, int nPrompt, int nGen, int repetitions,
                          const CancelFlag& cancel) {
    auto engine = loadForBenchmark(requested, 1, std::max(nPrompt, nGen + 1) + 16, tr("loading the model"));
    if (!engine) return;
    const struct { bool prompt; int n; } tests[] = {{true, nPrompt}, {false, nGen}};
    for (int i = 0; i < 2; ++i) {
        if (tests[i].n <= 0) continue;
        if (cancel && cancel->load()) break;
        const QString name = QStringLiteral("%1%2").arg(tests[i].prompt ? QStringLiteral("pp") : QStringLiteral("tg")).arg(tests[i].n);
        auto point = measure::measureSpeed(*engine, tests[i].prompt, tests[i].n, repetitions, [&](double f) {
            emit progress(name, (i + f) / 2.0);
        }, cancel.get());
        if (!point.ok()) {
            emit failed(-1, name + QStringLiteral(": ") + message(point.status()));
            break;
        }
        emit benchPointReady(*point);
    }
    emit progress(tr("done"), 1);
    emit finished();
}

void MeasureWorker::sweep(const SweepRequest& request, const CancelFlag& cancel) {
    auto done = [this] {
        emit progress(tr("done"), 1);
        emit finished();
    };
    std::vector<std::string> lines;
    for (const QString& line : request.lines) lines.push_back(line.toStdString());
    auto configs = workbench::parse_sweep_configs(lines);
    if (!configs.ok()) {
        emit failed(-1, message(configs.status()));
        return done();
    }
    const QString textPath = QString::fromStdString(workbench::default_eval_text_path());
    QFile file(textPath);
    if (!file.open(QIODevice::ReadOnly)) {
        emit failed(-1, tr("Cannot read the evaluation text %1: %2").arg(textPath, file.errorString()));
        return done();
    }
    workbench::SweepSettings settings;
    settings.ctx = request.ctx;
    settings.retrieval = request.retrieval;
    settings.retrieval_options.trials = request.trials;
    settings.retrieval_options.question_agnostic = request.question_agnostic;
    emit progress(tr("loading the baseline (full attention, f16 KV)"), 0);
    auto baseline = workbench::Engine::load(workbench::sweep_baseline_config(request.base, settings));
    if (!baseline.ok()) {
        emit failed(-1, tr("baseline: %1").arg(message(baseline.status())));
        return done();
    }
    const std::vector<workbench::TokenId> tokens = (*baseline)->tokenize(file.readAll().toStdString(), true, false);
    if (tokens.size() < static_cast<size_t>(settings.ctx) + 1) {
        emit failed(-1, tr("%1 has %2 tokens, fewer than one window of %3").arg(textPath).arg(tokens.size()).arg(settings.ctx));
        return done();
    }
    emit progress(tr("measuring the decode reference (full attention at 512 tokens)"), 0);
    if (auto ref = workbench::measure_decode_reference(**baseline, tokens, settings); ref.ok()) settings.reference_gb_s = ref->gb_s;
    workbench::QualityBaseline baselineLogits(**baseline);   // kept after the first row where they fit
    const int n = static_cast<int>(configs->size());
    for (int i = 0; i < n; ++i) {
        if (cancel && cancel->load()) break;
        const workbench::SweepConfig& c = (*configs)[static_cast<size_t>(i)];
        const QString step = tr("%1 of %2: %3").arg(i + 1).arg(n).arg(QString::fromStdString(c.line));
        emit progress(step, double(i) / n);
        workbench::Json row = workbench::measure_sweep_row(c, request.base, baselineLogits, tokens, settings, [&](int64_t d, int64_t total) {
            emit progress(step, (i + (total > 0 ? double(d) / double(total) : 0.0)) / n);
        }, cancel.get());
        if (row.value("status", "") == "cancelled") break;
        emit sweepRowReady({i, n, QString::fromStdString(workbench::dump_json(row)), workbench::sweep_engine_config(c, request.base, settings)});
    }
    done();
}

MeasureClient::MeasureClient(QObject* parent) : QObject(parent) {
    registerEngineTypes();
    qRegisterMetaType<QualityFigures>();
    qRegisterMetaType<BenchPoint>();
    qRegisterMetaType<SweepRequest>();
    qRegisterMetaType<SweepRow>();
    qRegisterMetaType<QList<workbench::EngineConfig>>();
    qRegisterMetaType<QList<int>>();
    m_thread.setObjectName(QStringLiteral("measure"));
    m_worker = new MeasureWorker();
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(this, &MeasureClient::requestEvaluate, m_worker, &MeasureWorker::evaluate, Qt::QueuedConnection);
    connect(this, &MeasureClient::requestBenchmark, m_worker, &MeasureWorker::benchmark, Qt::QueuedConnection);
    connect(this, &MeasureClient::requestSpeed, m_worker, &MeasureWorker::speed, Qt::QueuedConnection);
    connect(this, &MeasureClient::requestSweep, m_worker, &MeasureWorker::sweep, Qt::QueuedConnection);
    connect(m_worker, &MeasureWorker::progress, this, &MeasureClient::progress, Qt::QueuedConnection);
    connect(m_worker, &MeasureWorker::qualityReady, this, &MeasureClient::qualityReady, Qt::QueuedConnection);
    connect(m_worker, &MeasureWorker::benchLoaded, this, &MeasureClient::benchLoaded, Qt::QueuedConnection);
    connect(m_worker, &MeasureWorker::benchPointReady, this, &MeasureClient::benchPointReady, Qt::QueuedConnection);
    connect(m_worker, &MeasureWorker::sweepRowReady, this, &MeasureClient::sweepRowReady, Qt::QueuedConnection);
    connect(m_worker, &MeasureWorker::failed, this, &MeasureClient::failed, Qt::QueuedConnection);
    connect(m_worker, &MeasureWorker::finished, this, [this] {
        m_busy = false;
        m_cancel.reset();
        emit finished();
    }, Qt::QueuedConnection);
    m_thread.start();
}

MeasureClient::~MeasureClient() {
    stop();
    m_thread.quit();
    m_thread.wait();
}

void MeasureClient::evaluate(const QList<workbench::EngineConfig>& configs, const QString& textPath, int nCtx,
                             int maxWindows) {
    if (begin()) emit requestEvaluate(configs, textPath, nCtx, maxWindows, m_cancel);
}

void MeasureClient::benchmark(const workbench::EngineConfig& config, const QList<int>& batches, int nPrompt, int nGen) {
    if (begin()) emit requestBenchmark(config, batches, nPrompt, nGen, m_cancel);
}

void MeasureClient::speed(const workbench::EngineConfig& config, int nPrompt, int nGen, int repetitions) {
    if (begin()) emit requestSpeed(config, nPrompt, nGen, repetitions, m_cancel);
}

void MeasureClient::sweep(const SweepRequest& request) {
    if (begin()) emit requestSweep(request, m_cancel);
}

bool MeasureClient::begin() {
    if (m_busy) return false;
    m_busy = true;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    return true;
}

void MeasureClient::stop() {
    if (m_cancel) m_cancel->store(true);
}
