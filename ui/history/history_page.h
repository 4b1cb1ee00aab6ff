// The History page: every recorded chat session in a sortable table (date, title, model,
// configuration, turns, tokens, decode speed), narrowed by a full-text search over the messages
// and by model, attention variant and date; the selected session's transcript and replayed
// charts; Continue (back to the chat with its configuration), Delete (after a confirmation) and
// Export (JSON, runs CSV, samples CSV, Markdown). Further tabs list saved comparisons and sweeps. Every
// read runs on the store thread (StoreClient); the table model changes only here, on the GUI thread.
#pragma once

#include <QWidget>

#include "workbench/store.h"

class ComparisonList;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QTimer;
class SessionDetail;
class SessionTableModel;
class SweepList;
class StoreClient;

class HistoryPage : public QWidget {
    Q_OBJECT
public:
    enum class ExportKind { Json, RunsCsv, SamplesCsv, Markdown };

    explicit HistoryPage(StoreClient* store, QWidget* parent = nullptr);

    QLineEdit* searchBox() const { return m_search; }
    QComboBox* modelFilter() const { return m_model; }
    QComboBox* variantFilter() const { return m_variant; }
    QComboBox* dateFilter() const { return m_date; }
    QTableView* table() const { return m_table; }
    SessionTableModel* sessions() const { return m_sessions; }
    SessionDetail* detail() const { return m_detail; }
    ComparisonList* comparisons() const { return m_comparisons; }
    SweepList* sweeps() const { return m_sweeps; }
    QTabWidget* tabs() const { return m_tabs; }
    workbench::RowId selectedSessionId() const;
    QString statusText() const;

    // Writes the session as `kind` to `path` (on the store thread); emits exported.
    void exportSession(workbench::RowId sessionId, ExportKind kind, const QString& path);
    // Deletes without asking (the Delete button asks first); emits deleted.
    void deleteSession(workbench::RowId sessionId);

public slots:
    // Reloads the filter choices and the table with the current search and filters.
    void refresh();
    void selectSession(workbench::RowId sessionId);

signals:
    void listLoaded(int rows);
    void sessionShown(qint64 sessionId);
    void continueRequested(qint64 sessionId);
    void exported(const QString& path, bool ok, const QString& message);
    void deleted(qint64 sessionId, bool ok);

protected:
    void showEvent(QShowEvent* event) override;

private:
    QWidget* buildSessionsTab();
    workbench::SessionFilter currentFilter() const;
    void loadFilterChoices();
    void onSelectionChanged();
    void markSearchedWords();
    void askExport(ExportKind kind);
    void askDelete();
    void updateButtons();

    StoreClient* m_store;
    QTabWidget* m_tabs = nullptr;
    QLineEdit* m_search = nullptr;
    QComboBox *m_model = nullptr, *m_variant = nullptr, *m_date = nullptr;
    QTableView* m_table = nullptr;
    SessionTableModel* m_sessions = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    SessionDetail* m_detail = nullptr;
    ComparisonList* m_comparisons = nullptr;
    SweepList* m_sweeps = nullptr;
    QPushButton *m_continue = nullptr, *m_delete = nullptr, *m_export = nullptr;
    QLabel* m_status = nullptr;
    QTimer* m_searchDelay = nullptr;
    int m_listGeneration = 0;    // a newer refresh makes older results stale
    int m_detailGeneration = 0;
    workbench::RowId m_shownId = 0;
};
