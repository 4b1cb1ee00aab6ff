// History's "Comparisons" tab: the saved comparisons, newest first; selecting one reopens it:
// its prompt, the metrics table (with the latest quality evaluation of each configuration) and
// each configuration's output. Reads on the store thread; GUI thread only.
#pragma once

#include <QWidget>

#include "workbench/store.h"

class CompareTable;
class QLabel;
class QListWidget;
class QTextBrowser;
class StoreClient;

class ComparisonList : public QWidget {
    Q_OBJECT
public:
    explicit ComparisonList(StoreClient* store, QWidget* parent = nullptr);

    QListWidget* list() const { return m_list; }
    CompareTable* table() const { return m_table; }
    QString outputsText() const;

public slots:
    void refresh();
    void showComparison(workbench::RowId comparisonId);

signals:
    void listLoaded(int count);
    void comparisonShown(qint64 comparisonId);

protected:
    void showEvent(QShowEvent* event) override;

private:
    StoreClient* m_store;
    QListWidget* m_list = nullptr;
    QLabel* m_prompt = nullptr;
    CompareTable* m_table = nullptr;
    QTextBrowser* m_outputs = nullptr;
};
