#include "ui/pages/predicted_kv.h"

#include <QCoreApplication>

#include "ui/format.h"

namespace predictedkv {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("PredictedKv", text); }

// A small share still reads as a number ("0.8%"), a large one without false precision ("42%").
QString percentOf(uint64_t part, uint64_t whole) {
    if (whole == 0) return QStringLiteral("—");
    const double percent = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
    return QStringLiteral("%1%").arg(percent, 0, 'f', percent < 10 ? 1 : 0);
}

}  // namespace

QStringList toStringList(const std::vector<std::string>& names) {
    QStringList out;
    for (const std::string& name : names) out << QString::fromStdString(name);
    return out;
}

workbench::Result<workbench::KvPrediction> forConfig(const std::string& attention, const std::string& kvTypes,
                                                     const workbench::ModelInfo& info, int64_t nTokens, const std::string& mlaCache) {
    WB_ASSIGN_OR_RETURN(const workbench::AttentionLayout layout,
                        workbench::parse_attention_layout(attention.empty() ? std::string("full") : attention));
    return workbench::predict_kv(layout, kvTypes, workbench::kv_geometry(info, mlaCache), nTokens);
}

QString describe(const workbench::KvPrediction& p, int64_t nTokens, const workbench::ModelInfo& info) {
    auto bytes = [](uint64_t n) { return fmt::bytes(static_cast<double>(n)); };
    QString text = tr("<b>Predicted KV</b> at %1 tokens: <b>%2</b> held (full attention %3, %4)<br>"
                      "each new token reads %5 (full attention %6)")
                       .arg(nTokens)
                       .arg(bytes(p.bytes_held), bytes(p.bytes_full), percentOf(p.bytes_held, p.bytes_full),
                            bytes(p.bytes_read), bytes(p.bytes_full_read));
    const std::string pattern = workbench::native_attention_name(info.native_attention, info.n_layer);
    if (!pattern.empty())
        text += tr("<br>Trained pattern: %1; a variant applies to the global layers").arg(QString::fromStdString(pattern).toHtmlEscaped());
    if (!p.note.empty())
        text += tr("<br><small>The measured figure can differ: %1.</small>")
                    .arg(QString::fromStdString(p.note).toHtmlEscaped());
    return text;
}

}  // namespace predictedkv
