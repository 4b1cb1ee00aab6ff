// The right half of the History page: a stored session's transcript (each reply with its run's
// figures as the footer) and its charts replayed from the saved per-token samples, drawn by the
// same widgets as the live chat (KV memory vs tokens, TTFT per turn, decode speed over time).
// Turns run under different configurations: the header says "mixed" and each footer names its own.
// Takes a SessionData the store thread loaded; GUI thread only.
#pragma once

#include <QWidget>
#include <map>
#include <vector>

#include "workbench/store.h"

class KvMemoryChart;
class QLabel;
class TokenRateChart;
class TokenStreamView;
class TurnLatencyChart;

// Everything the detail view shows of one session, read in one go on the store thread.
struct SessionData {
    workbench::SessionRecord session;
    workbench::ConfigurationRecord configuration;   // what the session started with
    std::map<workbench::RowId, workbench::ConfigurationRecord> runConfigurations;   // what each run ran under, by id
    std::vector<workbench::MessageRecord> messages;
    std::vector<workbench::RunRecord> runs;
    std::map<workbench::RowId, std::vector<workbench::MetricSample>> samples;  // by run id

    // Reads it all (store thread). Errors: the store's, e.g. not_found for a deleted session.
    static workbench::Result<SessionData> load(const workbench::Store& store, workbench::RowId sessionId);
};

class SessionDetail : public QWidget {
    Q_OBJECT
public:
    explicit SessionDetail(QWidget* parent = nullptr);

    void showSession(const SessionData& data);
    void clear(const QString& message = {});

    TokenStreamView* transcript() const { return m_view; }
    KvMemoryChart* kvChart() const { return m_kv; }
    TurnLatencyChart* turnChart() const { return m_turns; }
    TokenRateChart* rateChart() const { return m_rate; }

    // A run's figures as one line, as the chat's reply footer shows them.
    static QString runFooter(const workbench::RunRecord& run);

private:
    QLabel* m_header = nullptr;
    TokenStreamView* m_view = nullptr;
    KvMemoryChart* m_kv = nullptr;
    TurnLatencyChart* m_turns = nullptr;
    TokenRateChart* m_rate = nullptr;
};
