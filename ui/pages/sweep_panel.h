// The Variants map page's sweep controls: which configurations (the standard preset or a list
// file, as `workbench-cli sweep -f` reads it), the context, retrieval on or off, Run/Stop and a
// progress bar with the row being measured and an ETA. The sweep runs on a MeasureClient of its
// own with the chat's model and threads (workbench/sweep.h, row by row beside one baseline), so
// the chat keeps its engine; each row arrives as it finishes and is kept in the session database
// as one sweep (History → Sweeps reopens it). GUI thread only.
#pragma once

#include <QElapsedTimer>
#include <QWidget>
#include <memory>

#include "ui/bridge/measure_types.h"
#include "workbench/store.h"

class EngineClient;
class MeasureClient;
class QCheckBox;
class QComboBox;
class QProgressBar;
class QPushButton;
class QSpinBox;
class StoreClient;

class SweepPanel : public QWidget {
    Q_OBJECT
public:
    SweepPanel(EngineClient* chat, StoreClient* store, QWidget* parent = nullptr);

    // Starts a sweep of the chosen list with the chat's model; false (and why, through
    // statusChanged) when no model is loaded, a sweep runs already or the list cannot be read.
    bool start();
    void stop();
    bool isRunning() const;
    // Chooses a configuration list file (the menu's "From a file…" asks for one).
    void setConfigurationFile(const QString& path);

    QComboBox* listMenu() const { return m_list; }
    QSpinBox* contextSpin() const { return m_ctx; }
    QCheckBox* retrievalBox() const { return m_retrieval; }
    QCheckBox* questionAgnosticBox() const { return m_questionAgnostic; }
    QPushButton* runButton() const { return m_run; }
    QProgressBar* progressBar() const { return m_progress; }

signals:
    void started(const QString& title, int configurations);
    void rowMeasured(const QString& json);
    void finished(const QString& summary);
    void statusChanged(const QString& text);

private:
    QStringList chosenLines(QString& name, QString& error) const;
    void saveSweepRecord(const SweepRequest& request, const QString& name, int configurations);
    void saveRow(const SweepRow& row);

    EngineClient* m_chat;
    StoreClient* m_store;
    MeasureClient* m_measure = nullptr;
    QComboBox* m_list = nullptr;
    QSpinBox* m_ctx = nullptr;
    QCheckBox* m_retrieval = nullptr;
    QCheckBox* m_questionAgnostic = nullptr;
    QPushButton* m_run = nullptr;
    QProgressBar* m_progress = nullptr;
    QElapsedTimer m_clock;
    QString m_title, m_error;
    int m_rows = 0, m_failed = 0;
    bool m_stopped = false;
    // The store thread's ids for this sweep (written there by the create task, read by later ones).
    struct StoredIds {
        workbench::RowId sweep = 0, baseline = 0;
    };
    std::shared_ptr<StoredIds> m_stored;
};
