#include "ui/benchmark/remote_sweep.h"

#include <cmath>

#include "remote/serve_benchmark.h"
#include "workbench/json.h"

RemoteSweep::RemoteSweep(QObject* parent) : QObject(parent) { qRegisterMetaType<RemotePoint>(); }

RemoteSweep::~RemoteSweep() {
    stop();
    if (m_thread) m_thread->wait();
}

bool RemoteSweep::isRunning() const { return m_thread && m_thread->isRunning(); }

void RemoteSweep::stop() {
    if (m_stop) m_stop->store(true);
}

bool RemoteSweep::start(const wbremote::RemoteEndpoint& endpoint, const QList<int>& concurrencies, int promptsPerLevel, int inputLen,
                        int outputLen) {
    if (isRunning()) return false;
    if (m_thread) m_thread->deleteLater();
    m_stop = std::make_shared<std::atomic<bool>>(false);
    auto stopFlag = m_stop;
    // Signals emitted from the worker thread reach this object's slots queued (it lives on the GUI thread).
    m_thread = QThread::create([this, stopFlag, endpoint, concurrencies, promptsPerLevel, inputLen, outputLen] {
        for (int c : concurrencies) {
            if (stopFlag->load()) break;
            wbremote::ServeBenchmarkOptions o;
            o.concurrency = c;
            o.num_prompts = std::max(promptsPerLevel, c);
            o.input_len = inputLen;
            o.output_len = outputLen;
            auto r = wbremote::run_serve_benchmark(endpoint, o);
            if (!r.ok()) {
                emit failed(QString::fromStdString(r.status().message()));
                break;
            }
            const workbench::BatchMetrics& m = r->batch.metrics;
            RemotePoint p;
            p.concurrency = c;
            p.completed = m.n_completed;
            p.failed = m.n_failed;
            p.nPrompt = inputLen;
            p.nGen = outputLen;
            p.outputTokS = m.output_tok_s;
            p.totalTokS = m.total_tok_s;
            p.ttftMs = m.ttft_ms.mean;
            p.tpotMs = m.tpot_ms.mean;
            p.model = QString::fromStdString(r->model);
            p.server = QString::fromUtf8(wbremote::server_kind_name(r->server));
            if (!r->errors.empty()) p.firstError = QString::fromStdString(r->errors.front());
            p.json = QString::fromStdString(workbench::dump_json(
                {{"base_url", endpoint.base_url}, {"server", r->server == wbremote::ServerKind::unknown ? "unknown" : wbremote::server_kind_name(r->server)},
                 {"model", r->model}, {"concurrency", c}, {"num_prompts", o.num_prompts}, {"input_len", inputLen}, {"output_len", outputLen},
                 {"completed", m.n_completed}, {"failed", m.n_failed}, {"output_throughput", workbench::json_rounded(m.output_tok_s)},
                 {"total_token_throughput", workbench::json_rounded(m.total_tok_s)}, {"mean_ttft_ms", workbench::json_rounded(m.ttft_ms.mean)},
                 {"mean_tpot_ms", workbench::json_rounded(m.tpot_ms.mean)}, {"mean_itl_ms", workbench::json_rounded(m.itl_ms.mean)},
                 {"mean_e2el_ms", workbench::json_rounded(m.e2e_ms.mean)}}));
            emit pointReady(p);
        }
        emit finished();
    });
    m_thread->start();
    return true;
}
