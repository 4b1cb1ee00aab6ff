// The History page's table: one row per stored session (list_sessions' summaries) with its date,
// title, model, configuration, turns, tokens and mean decode speed. Display text is formatted
// here; Qt::UserRole holds the raw value each column sorts by (a QSortFilterProxyModel sorts on
// it). Filled wholesale from results the store thread loaded; changed only on the GUI thread.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "workbench/store.h"

class SessionTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Date, Title, Model, Configuration, Turns, Tokens, DecodeSpeed, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int IdRole = Qt::UserRole + 1;

    explicit SessionTableModel(QObject* parent = nullptr);

    void setSessions(std::vector<workbench::SessionSummary> sessions);
    const workbench::SessionSummary* sessionAt(int row) const;
    int rowOf(workbench::RowId sessionId) const;  // -1 when absent

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<workbench::SessionSummary> m_sessions;
};
