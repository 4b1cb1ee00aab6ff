// History's "Sweeps" tab: the sweeps kept in the session database (from the Variants map page or
// `workbench-cli sweep --db`), newest first, each with its model, settings and how many rows
// ran or failed; "Open on the map" (or a double-click) reopens one on the Variants map, Delete
// removes it (its evaluations stay). Reads on the store thread; GUI thread only.
#pragma once

#include <QWidget>

#include "workbench/store.h"

class QLabel;
class QListWidget;
class QPushButton;
class StoreClient;

class SweepList : public QWidget {
    Q_OBJECT
public:
    explicit SweepList(StoreClient* store, QWidget* parent = nullptr);

    QListWidget* list() const { return m_list; }
    QString statusText() const;

public slots:
    void refresh();
    // Loads the sweep's rows on the store thread, then emits sweepOpened.
    void openSweep(workbench::RowId sweepId);
    void deleteSweep(workbench::RowId sweepId);

signals:
    void listLoaded(int count);
    void sweepOpened(const QString& title, const QStringList& rows);

protected:
    void showEvent(QShowEvent* event) override;

private:
    workbench::RowId currentId() const;

    StoreClient* m_store;
    QListWidget* m_list = nullptr;
    QLabel* m_status = nullptr;
    QPushButton *m_open = nullptr, *m_delete = nullptr;
};
