// The live charts under the chat: KV memory against tokens in context, TTFT per turn, and decode
// speed with inter-token latency over the session. It turns the worker's TokenSample batches
// into the charts' plain numbers; the charts themselves (widgets/) know nothing of the engine.
#pragma once

#include <QWidget>

#include "ui/bridge/engine_types.h"

class KvBlockMapView;
class KvMemoryChart;
class QStackedWidget;
class QTabWidget;
class ServerKvChart;
class RooflinePlot;
class TurnLatencyChart;
class TokenRateChart;

class MetricsPanel : public QWidget {
    Q_OBJECT
public:
    explicit MetricsPanel(QWidget* parent = nullptr);

    void beginReply();
    void addSamples(const QList<TokenSample>& samples);
    void endReply(const ReplySummary& summary);
    void showBlockMap(const BlockMapSnapshot& map);
    // `activeExperts`: the model is a mixture of experts (its matmul bytes are the chosen experts').
    void showRoofline(const workbench::Engine::RooflineSnapshot& roofline, bool activeExperts);
    void setCeilings(const MachineCeilings& ceilings, bool quantizedWeights);
    // A new conversation: every chart starts empty.
    void clearAll();
    // After clearAll(), for a stored conversation continued: its next turn is turn n + 1.
    void continueAfterTurns(int n);
    // A reload with other KV settings: the memory chart's old points would not compare.
    void clearKv();

    // The chat talks to a remote server (its KV share polled from /metrics, charted in place of
    // the local KV-vs-tokens chart), or to the local engine again.
    void showServerKv(bool remote, const QString& serverDescription = QString());
    void addServerKv(double secondsSinceConnected, double fraction);

    KvMemoryChart* kvChart() const { return m_kv; }
    ServerKvChart* serverKvChart() const { return m_serverKv; }
    TurnLatencyChart* turnChart() const { return m_turns; }
    TokenRateChart* rateChart() const { return m_rate; }
    KvBlockMapView* blockMap() const { return m_blockMap; }
    RooflinePlot* roofline() const { return m_roofline; }
    QTabWidget* tabs() const { return m_tabs; }

private:
    KvMemoryChart* m_kv = nullptr;
    ServerKvChart* m_serverKv = nullptr;
    QStackedWidget* m_kvStack = nullptr;   // the local chart or the server's
    TurnLatencyChart* m_turns = nullptr;
    TokenRateChart* m_rate = nullptr;
    KvBlockMapView* m_blockMap = nullptr;
    RooflinePlot* m_roofline = nullptr;
    QTabWidget* m_tabs = nullptr;
    double m_generatingSeconds = 0;  // the rate chart's time axis: seconds spent in replies so far
    double m_replyStartSeconds = 0;
    bool m_turnShown = false;  // this reply's TTFT bar is drawn (from its first token)
};
