// The values that cross between the GUI thread and the engine's worker thread, by copy, through
// queued signals. registerEngineTypes() registers them with Qt's meta-type system; call it once
// before the first queued connection (EngineClient's constructor does).
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "workbench/chat_reply.h"
#include "workbench/config.h"
#include "workbench/engine.h"
#include "workbench/metrics.h"
#include "workbench/types.h"

using ChatHistory = std::vector<workbench::ChatMessage>;
// One per request: the GUI keeps a copy to set, the engine checks it between decode steps.
using CancelFlag = std::shared_ptr<std::atomic<bool>>;

// What the cache held when a piece of the reply reached the callback (between decode steps).
struct TokenSample {
    int nTokensContext = 0;        // tokens in the sequence (prompt + generated so far)
    quint64 kvBytesInUse = 0;
    quint64 kvBytesFull = 0;       // full attention, same tokens and KV types
    quint64 kvBytesAllocated = 0;  // the pool reserved at load
    double msSinceRequest = 0;     // since sendChat began
    double gapMs = 0;              // per token since the previous sample (0 on the reply's first)
    bool firstOfReply = false;     // its gap would be the prefill: charts of decode speed skip it
};

// The end of a reply that ran (finished or was stopped): its text and measurements.
struct ReplySummary {
    QString text;
    workbench::GenerationMetrics metrics;
    workbench::StopReason stopReason = workbench::StopReason::max_tokens;
    QString stopReasonName;  // "end_of_generation", "max_tokens", "stop_string", "context_full", "cancelled"
    quint64 seed = 0;        // the sampling seed the reply was drawn with
    // Set for a reply from a remote server (RemoteChatClient), measured on this side; the
    // metrics' KV fields are 0 then, the engine that held the cache being the server's.
    struct Remote {
        QString where;                     // "workbench at http://127.0.0.1:8080/v1, model X"
        std::optional<double> kvFraction;  // the server's KV cache in use (its /metrics, the most seen during the reply)
        QString cutOff;                    // the stream broke before its end: why (text is what arrived)
    };
    std::optional<Remote> remote;
};

// The tools a chat turn offers: OpenAI's tools array as JSON text (empty: none), and whether the
// reply must be a call (tool_choice "required").
struct ToolOffer {
    QString json;
    bool required = false;
};

// How the reply about to stream is read (workbench/chat_reply.h): the model's format, whether
// tools were offered, whether the prompt left it inside <think>. Sent before its first token.
struct ReplyForm {
    workbench::ChatFormat format;
    bool toolsOffered = false;
    bool thinkingOpen = false;
};

// The conversation's KV blocks per layer (workbench::KvBlockState values, row-major).
struct BlockMapSnapshot {
    int layers = 0, blocks = 0, blockTokens = 16;
    QList<quint8> cells;
};

// This machine's roofline ceilings on the engine's threads, measured once and remembered.
struct MachineCeilings {
    double bandwidthGbS = 0;   // read bandwidth at the weights' working set
    double int8Gops = 0;       // AVX2 int8 dot products
    double fp32Gflops = 0;     // FMA
};

Q_DECLARE_METATYPE(workbench::EngineConfig)
Q_DECLARE_METATYPE(workbench::ModelInfo)
Q_DECLARE_METATYPE(workbench::GenerationRequest)
Q_DECLARE_METATYPE(ChatHistory)
Q_DECLARE_METATYPE(CancelFlag)
Q_DECLARE_METATYPE(TokenSample)
Q_DECLARE_METATYPE(ReplySummary)
Q_DECLARE_METATYPE(ReplyForm)
Q_DECLARE_METATYPE(ToolOffer)
Q_DECLARE_METATYPE(BlockMapSnapshot)
Q_DECLARE_METATYPE(MachineCeilings)
Q_DECLARE_METATYPE(workbench::Engine::RooflineSnapshot)

void registerEngineTypes();
