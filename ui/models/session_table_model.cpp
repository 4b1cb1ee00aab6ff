#include "ui/models/session_table_model.h"

#include <QDateTime>

SessionTableModel::SessionTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void SessionTableModel::setSessions(std::vector<workbench::SessionSummary> sessions) {
    beginResetModel();
    m_sessions = std::move(sessions);
    endResetModel();
}

const workbench::SessionSummary* SessionTableModel::sessionAt(int row) const {
    if (row < 0 || row >= static_cast<int>(m_sessions.size())) return nullptr;
    return &m_sessions[static_cast<size_t>(row)];
}

int SessionTableModel::rowOf(workbench::RowId sessionId) const {
    for (size_t i = 0; i < m_sessions.size(); ++i)
        if (m_sessions[i].id == sessionId) return static_cast<int>(i);
    return -1;
}

int SessionTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_sessions.size());
}

int SessionTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant SessionTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const workbench::SessionSummary& s = m_sessions[static_cast<size_t>(index.row())];
    const qint64 tokens = s.n_tokens_prompt + s.n_tokens_generated;
    if (role == IdRole) return QVariant::fromValue<qint64>(s.id);
    if (role == Qt::TextAlignmentRole && index.column() >= Turns)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == Title) return QString::fromStdString(s.title);
    if (role == Qt::ToolTipRole && index.column() == Model) return QString::fromStdString(s.model);
    if (role == Qt::ToolTipRole && index.column() == Configuration) return QString::fromStdString(s.config_summary);
    if (role == Qt::ToolTipRole && index.column() == Tokens) return tr("prompt + generated, over every reply");
    if (role == SortRole) {
        switch (index.column()) {
        case Date: return QVariant::fromValue<qint64>(s.created_unix_ms);
        case Title: return QString::fromStdString(s.title).toLower();
        case Model: return QString::fromStdString(s.model);
        case Configuration: return QString::fromStdString(s.config_summary);
        case Turns: return s.n_turns;
        case Tokens: return QVariant::fromValue<qint64>(tokens);
        case DecodeSpeed: return s.mean_decode_tok_s.value_or(-1.0);
        }
        return {};
    }
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case Date:
        return QDateTime::fromMSecsSinceEpoch(s.created_unix_ms).toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    case Title: return QString::fromStdString(s.title).simplified();
    case Model: return QString::fromStdString(s.model);
    case Configuration: return QString::fromStdString(s.config_summary);
    case Turns: return s.n_turns;
    case Tokens: return QStringLiteral("%1 + %2").arg(s.n_tokens_prompt).arg(s.n_tokens_generated);
    case DecodeSpeed:
        return s.mean_decode_tok_s ? QString::number(*s.mean_decode_tok_s, 'f', 1) : QStringLiteral("—");
    }
    return {};
}

QVariant SessionTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Date: return tr("Date");
    case Title: return tr("Title");
    case Model: return tr("Model");
    case Configuration: return tr("Configuration");
    case Turns: return tr("Turns");
    case Tokens: return tr("Tokens");
    case DecodeSpeed: return tr("Decode tok/s");
    }
    return {};
}
