// Display formatting shared by the pages and the status bar.
#pragma once

#include <QString>
#include <cstdint>
#include <optional>

#include "workbench/engine.h"
#include "workbench/metrics.h"

namespace fmt {

// "512 B", "22.5 KiB", "90.0 MiB", "1.25 GiB".
QString bytes(double n);
// The per-reply footer: "24 tokens · TTFT 85 ms · 45.2 tok/s · KV 1.20 MiB (full 1.20 MiB) · seed 7 · max_tokens"
// (no seed part when it is unknown: a run recorded before seeds were kept).
QString replyFooter(const workbench::GenerationMetrics& m, const QString& stopReason, std::optional<quint64> seed = {});
// A remote server's reply, measured on this side: "24 tokens · TTFT 85 ms · 45.2 tok/s · prompt 31 ·
// server KV 3% in use · stop · remote: vllm at http://host:8000/v1, model X", with "cut off: <why>"
// when the stream broke and "KV: not reported by the server" when its /metrics says nothing of it.
QString remoteReplyFooter(const workbench::GenerationMetrics& m, const QString& stopReason, const QString& where,
                          std::optional<double> kvFraction, const QString& cutOff);

// The weights as computed: the layers' type ("q4_1"), or for layers of several types (Gemma's
// Q4_K_M) "mixed: q5_0, q4_k, q6_k", largest share first; a head of another type follows
// ("q4_1, head q8_0").
QString weightTypes(const workbench::ModelInfo& info);

}  // namespace fmt
