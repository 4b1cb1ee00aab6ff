#include "ui/format.h"

#include <QObject>
#include <QStringList>
#include <algorithm>

namespace fmt {

QString bytes(double n) {
    if (n >= 1024.0 * 1024 * 1024) return QStringLiteral("%1 GiB").arg(n / (1024.0 * 1024 * 1024), 0, 'f', 2);
    if (n >= 1024.0 * 1024) return QStringLiteral("%1 MiB").arg(n / (1024.0 * 1024), 0, 'f', 2);
    if (n >= 1024.0) return QStringLiteral("%1 KiB").arg(n / 1024.0, 0, 'f', 1);
    return QStringLiteral("%1 B").arg(static_cast<qulonglong>(n));
}

QString replyFooter(const workbench::GenerationMetrics& m, const QString& stopReason, std::optional<quint64> seed) {
    QStringList parts;
    parts << QStringLiteral("%1 tokens").arg(m.n_generated);
    parts << QStringLiteral("TTFT %1 ms").arg(m.ttft_ms, 0, 'f', 0);
    // A model that thought first: when its answer began.
    if (m.first_answer_ms && *m.first_answer_ms > m.ttft_ms + 0.5) parts << QStringLiteral("answer at %1 ms").arg(*m.first_answer_ms, 0, 'f', 0);
    // Undefined for a one-token reply: say so rather than print a made-up rate.
    parts << (m.decode_tok_s ? QStringLiteral("%1 tok/s").arg(*m.decode_tok_s, 0, 'f', 1) : QStringLiteral("— tok/s"));
    parts << QStringLiteral("prompt %1 (%2 reused)").arg(m.n_prompt_tokens).arg(m.n_prompt_reused);
    parts << QStringLiteral("KV %1 (full %2)").arg(bytes(static_cast<double>(m.kv_bytes)), bytes(static_cast<double>(m.kv_bytes_full)));
    if (m.acceptance_rate)
        parts << QStringLiteral("drafts %1/%2 accepted (%3%)").arg(m.n_accepted_tokens).arg(m.n_draft_tokens).arg(*m.acceptance_rate * 100, 0, 'f', 0);
    if (seed) parts << QStringLiteral("seed %1").arg(*seed);
    parts << stopReason;
    return parts.join(QStringLiteral(" · "));
}

QString remoteReplyFooter(const workbench::GenerationMetrics& m, const QString& stopReason, const QString& where,
                          std::optional<double> kvFraction, const QString& cutOff) {
    QStringList parts;
    parts << QStringLiteral("%1 tokens").arg(m.n_generated);
    parts << QStringLiteral("TTFT %1 ms").arg(m.ttft_ms, 0, 'f', 0);
    parts << (m.decode_tok_s ? QStringLiteral("%1 tok/s").arg(*m.decode_tok_s, 0, 'f', 1) : QStringLiteral("— tok/s"));
    // The server's own count when it reports usage; the cache it reuses it does not say.
    if (m.n_prompt_tokens > 0) parts << QStringLiteral("prompt %1").arg(m.n_prompt_tokens);
    parts << (kvFraction ? QStringLiteral("server KV %1% in use").arg(*kvFraction * 100, 0, 'f', *kvFraction < 0.1 ? 1 : 0)
                         : QStringLiteral("KV: not reported by the server"));
    parts << (cutOff.isEmpty() ? stopReason : QStringLiteral("cut off: %1").arg(cutOff));
    parts << QStringLiteral("remote: %1").arg(where);
    return parts.join(QStringLiteral(" · "));
}

QString weightTypes(const workbench::ModelInfo& info) {
    const auto& layers = info.layer_weight_types;
    if (layers.empty()) return QString::fromStdString(info.weight_type);   // a server's model: no breakdown
    QString text = QString::fromStdString(layers.front());
    if (layers.size() > 1) {   // largest share first, by the bytes of every matrix of that type
        auto types = info.weight_types;
        std::stable_sort(types.begin(), types.end(), [](const auto& a, const auto& b) { return a.n_bytes > b.n_bytes; });
        QStringList names;
        for (const auto& t : types)
            if (std::find(layers.begin(), layers.end(), t.type) != layers.end()) names << QString::fromStdString(t.type);
        text = QObject::tr("mixed: %1").arg(names.join(QStringLiteral(", ")));
    }
    if (!info.output_weight_type.empty() && (layers.size() > 1 || info.output_weight_type != layers.front()))
        text += QObject::tr(", head %1").arg(QString::fromStdString(info.output_weight_type));
    return text;
}

}  // namespace fmt
