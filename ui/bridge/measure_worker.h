// MeasureWorker runs the Compare page's quality evaluation, the Benchmark page's batch sweep and
// pp/tg tests, and the Variants map page's sweeps on its own QThread, with Engines of its own
// (loaded for the job, freed after it), so the chat's engine stays as it is. One job at a time;
// progress and results go back as queued signals; the job's cancel flag is checked between
// windows, batches and trials. Never touches a widget. MeasureClient is its GUI-thread handle
// (creates the thread, forwards requests, tracks "busy").
#pragma once

#include <QObject>
#include <QThread>
#include <memory>

#include "ui/bridge/engine_types.h"
#include "ui/bridge/measure_types.h"

class MeasureWorker : public QObject {
    Q_OBJECT
public slots:
    // Each configuration against a baseline of the same model (full attention, f16 KV, weights
    // as stored), on the text at textPath, in windows of nCtx tokens (at most maxWindows).
    void evaluate(const QList<workbench::EngineConfig>& configs, const QString& textPath, int nCtx, int maxWindows,
                  const CancelFlag& cancel);
    // Loads `config` with room for the largest batch, then measures each batch size in turn.
    void benchmark(const workbench::EngineConfig& config, const QList<int>& batches, int nPrompt, int nGen,
                   const CancelFlag& cancel);
    // Loads `config` for one sequence, then runs pp<nPrompt> and tg<nGen> (a 0 skips one), each
    // a warm-up and `repetitions` timed runs; each test's row arrives as a BenchPoint with `test` set.
    void speed(const workbench::EngineConfig& config, int nPrompt, int nGen, int repetitions, const CancelFlag& cancel);
    // Loads the baseline once, then measures each configuration of the list in turn (a row that
    // fails arrives as a failed row and the sweep goes on); a cancelled row is dropped.
    void sweep(const SweepRequest& request, const CancelFlag& cancel);

signals:
    void progress(const QString& step, double fraction);
    void qualityReady(const QualityFigures& figures);
    void benchLoaded(const workbench::ModelInfo& info);
    void benchPointReady(const BenchPoint& point);
    void sweepRowReady(const SweepRow& row);
    void failed(int index, const QString& message);  // index: the configuration or batch; -1: the whole job
    void finished();

private:
    // `config` loaded for nSeq sequences of nCtx tokens; on failure says so, ends the job, null.
    std::unique_ptr<workbench::Engine> loadForBenchmark(const workbench::EngineConfig& config, int nSeq, int nCtx, const QString& step);
};

class MeasureClient : public QObject {
    Q_OBJECT
public:
    explicit MeasureClient(QObject* parent = nullptr);
    ~MeasureClient() override;

    bool isBusy() const { return m_busy; }
    void evaluate(const QList<workbench::EngineConfig>& configs, const QString& textPath, int nCtx, int maxWindows);
    void benchmark(const workbench::EngineConfig& config, const QList<int>& batches, int nPrompt, int nGen);
    void speed(const workbench::EngineConfig& config, int nPrompt, int nGen, int repetitions);
    void sweep(const SweepRequest& request);
    void stop();

signals:
    void progress(const QString& step, double fraction);
    void qualityReady(const QualityFigures& figures);
    void benchLoaded(const workbench::ModelInfo& info);
    void benchPointReady(const BenchPoint& point);
    void sweepRowReady(const SweepRow& row);
    void failed(int index, const QString& message);
    void finished();

    // To the worker (queued).
    void requestEvaluate(const QList<workbench::EngineConfig>& configs, const QString& textPath, int nCtx,
                         int maxWindows, const CancelFlag& cancel);
    void requestBenchmark(const workbench::EngineConfig& config, const QList<int>& batches, int nPrompt, int nGen,
                          const CancelFlag& cancel);
    void requestSpeed(const workbench::EngineConfig& config, int nPrompt, int nGen, int repetitions, const CancelFlag& cancel);
    void requestSweep(const SweepRequest& request, const CancelFlag& cancel);

private:
    bool begin();   // false while a job runs; else marks busy with a fresh cancel flag
    QThread m_thread;
    MeasureWorker* m_worker = nullptr;
    CancelFlag m_cancel;
    bool m_busy = false;
};
