// The Benchmark page: llama-bench's pp/tg tests and the batch sweep of the chat's model and
// configuration. It loads an Engine
// of its own (room for the largest batch, a context of n_prompt + n_gen + 16) on a MeasureClient
// thread, measures each batch size in turn (measure_batch_throughput), and draws throughput and
// latency against batch size; "Run pp/tg" runs pp<n_prompt> and tg<n_gen> at batch 1 with
// repetitions (mean ± standard deviation, as `workbench-cli bench` prints). Every row is saved (save_benchmark, with the machine it ran on) and
// the saved ones are listed with machine, configuration and date. A remote server's curves
// (RemoteSweepPanel: output tok/s and TTFT against concurrency) join the same charts, table and
// saved list. GUI thread only.
#pragma once

#include <QWidget>
#include <map>

#include "ui/bridge/engine_types.h"
#include "ui/bridge/measure_types.h"
#include "workbench/store.h"

class EngineClient;
class MeasureClient;
class OverlayChart;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class RemoteSweepPanel;
class StoreClient;
struct RemotePoint;

class BenchmarkPage : public QWidget {
    Q_OBJECT
public:
    BenchmarkPage(EngineClient* chat, StoreClient* store, QWidget* parent = nullptr);

    QLineEdit* batches() const { return m_batches; }
    QSpinBox* promptTokens() const { return m_nPrompt; }
    QSpinBox* genTokens() const { return m_nGen; }
    QTableWidget* results() const { return m_results; }
    QTableWidget* speedResults() const { return m_speed; }
    QSpinBox* repetitions() const { return m_reps; }
    QTableWidget* saved() const { return m_saved; }
    QPushButton* stopButton() const { return m_stop; }
    OverlayChart* throughputChart() const { return m_throughput; }
    OverlayChart* latencyChart() const { return m_latency; }
    RemoteSweepPanel* remotePanel() const { return m_remote; }
    bool isRunning() const;
    QString statusText() const;
    int savedCount() const { return m_savedCount; }  // rows this page saved since it was created

    // "1,2,4,8" → {1, 2, 4, 8}; empty when a part is not a positive number.
    static QList<int> parseBatches(const QString& text);

public slots:
    void run();
    void runSpeed();  // pp/tg tests
    void stop();
    void refreshSaved();

signals:
    void runFinished();
    void savedListLoaded(int rows);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void onPoint(const BenchPoint& point);
    void onRemotePoint(const RemotePoint& point);
    void save(const BenchPoint& point);
    void saveRecord(workbench::BenchmarkRecord record, const workbench::ConfigurationRecord& configuration);
    void setStatus(const QString& text);
    bool startRun();  // common checks and state for both kinds of run

    EngineClient* m_chat;
    StoreClient* m_store;
    MeasureClient* m_measure = nullptr;
    QLabel* m_config = nullptr;
    QLineEdit* m_batches = nullptr;
    QSpinBox *m_nPrompt = nullptr, *m_nGen = nullptr, *m_reps = nullptr;
    QPushButton *m_run = nullptr, *m_runSpeed = nullptr, *m_stop = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QTableWidget* m_results = nullptr;
    QTableWidget* m_speed = nullptr;
    QTableWidget* m_saved = nullptr;
    OverlayChart* m_throughput = nullptr;
    OverlayChart* m_latency = nullptr;
    int m_throughputLine = -1, m_ttftLine = -1, m_tpotLine = -1;
    RemoteSweepPanel* m_remote = nullptr;
    int m_remoteThroughputLine = -1, m_remoteTtftLine = -1;
    bool m_newRemoteSweep = false;
    workbench::EngineConfig m_runConfig;
    workbench::ModelInfo m_runInfo;
    int m_pendingSaves = 0;
    int m_savedCount = 0;
    bool m_runEnded = true;
    bool m_newSpeedRun = false, m_newSweep = false;  // a run's first row replaces the earlier run's
};
