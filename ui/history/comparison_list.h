// History's "Comparisons" tab: the saved comparisons, newest first; selecting one reopens it:
// its prompts (a menu picks one when there are several), the metrics table averaged over the
// prompts as the Compare page shows it (with the latest quality evaluation of each configuration)
// and each configuration's output for the prompt picked. Reads on the store thread; GUI thread only.
#pragma once

#include <QWidget>
#include <optional>

#include "ui/compare/comparison_store.h"

#include "workbench/store.h"

class CompareTable;
class QComboBox;
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
    QComboBox* promptMenu() const { return m_promptMenu; }
    QString promptText() const;
    QString outputsText() const;  // the outputs of the prompt picked

public slots:
    void refresh();
    void showComparison(workbench::RowId comparisonId);

signals:
    void listLoaded(int count);
    void comparisonShown(qint64 comparisonId);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void showPrompt(int prompt);

    StoreClient* m_store;
    std::optional<LoadedComparison> m_loaded;
    QComboBox* m_promptMenu = nullptr;
    QListWidget* m_list = nullptr;
    QLabel* m_prompt = nullptr;
    CompareTable* m_table = nullptr;
    QTextBrowser* m_outputs = nullptr;
};
