#include "ui/compare/compare_presets.h"

#include <QCoreApplication>
#include <QSet>
#include <map>
#include <tuple>

namespace {

QString tr(const char* text) { return QCoreApplication::translate("ComparePresets", text); }

ComparePreset builtIn(const QString& label, const QString& attention, const QString& kv, const QString& weights = {}) {
    return ComparePreset{ComparePreset::Source::BuiltIn, label, attention, kv, weights};
}

}  // namespace

bool ComparePreset::sameFields(const QString& a, const QString& kv, const QString& w) const {
    return attention == a && kvTypes == kv && weights == w;
}

namespace comparepresets {

QString summary(const QString& attention, const QString& kvTypes, const QString& weights) {
    return QStringLiteral("%1 · KV %2 · %3")
        .arg(attention.isEmpty() ? QStringLiteral("full") : attention, kvTypes.isEmpty() ? QStringLiteral("f16") : kvTypes,
             weights.isEmpty() ? tr("weights as stored") : tr("weights %1").arg(weights));
}

QList<ComparePreset> builtIns(int kvWidth) {
    const int rank = kvWidth > 1 ? kvWidth / 2 : 96;
    return {
        builtIn(tr("Full attention, f16 KV (the baseline)"), QStringLiteral("full"), QStringLiteral("f16")),
        builtIn(tr("Sliding window 1020 + 4 sinks"), QStringLiteral("sliding:window=1020,sinks=4"), QStringLiteral("f16")),
        // A window short prompts overflow, so its effect shows within a few dozen tokens.
        builtIn(tr("Sliding window 32 + 4 sinks (short prompts)"), QStringLiteral("sliding:window=32,sinks=4"), QStringLiteral("f16")),
        builtIn(tr("Latent, half rank (%1)").arg(rank), QStringLiteral("latent:rank=%1").arg(rank), QStringLiteral("f16")),
        builtIn(tr("Top-k 64 + 16 recent"), QStringLiteral("topk:k=64,recent=16"), QStringLiteral("f16")),
        builtIn(tr("q8_0 KV"), QStringLiteral("full"), QStringLiteral("q8_0")),
        builtIn(tr("K q8_0, V q4_0"), QStringLiteral("full"), QStringLiteral("k=q8_0,v=q4_0")),
    };
}

QList<ComparePreset> fromStored(const std::vector<workbench::ConfigurationRecord>& records, const QString& loadedModel) {
    using Key = std::tuple<std::string, std::string, std::string>;
    // Per distinct setting: the models it was stored for, in first-seen order.
    std::map<Key, QStringList> models;
    std::vector<Key> order;
    for (const workbench::ConfigurationRecord& r : records) {
        if (r.backend == "remote") continue;  // a server's variant is its kind, not an attention spec
        const Key key{r.variant, r.kv_dtype, r.weight_type};
        auto [it, added] = models.try_emplace(key);
        if (added) order.push_back(key);
        const QString model = QString::fromStdString(r.model);
        if (!it->second.contains(model)) it->second.append(model);
    }
    QList<ComparePreset> forLoaded, forOthers;
    for (const Key& key : order) {
        ComparePreset p;
        p.source = ComparePreset::Source::Stored;
        p.attention = QString::fromStdString(std::get<0>(key));
        p.kvTypes = QString::fromStdString(std::get<1>(key));
        p.weights = QString::fromStdString(std::get<2>(key));
        p.label = summary(p.attention, p.kvTypes, p.weights);
        const QStringList& used = models[key];
        if (loadedModel.isEmpty() || used.contains(loadedModel)) {
            forLoaded.append(p);
        } else {
            p.label += tr(" (stored for %1)").arg(used.join(QStringLiteral(", ")));
            forOthers.append(p);
        }
    }
    return forLoaded + forOthers;
}

QList<ComparePreset> fromNamed(const std::vector<workbench::PresetRecord>& records) {
    QList<ComparePreset> out;
    for (const workbench::PresetRecord& r : records)
        out.append(ComparePreset{ComparePreset::Source::Named, QString::fromStdString(r.name),
                                 QString::fromStdString(r.configuration.variant),
                                 QString::fromStdString(r.configuration.kv_dtype),
                                 QString::fromStdString(r.configuration.weight_type)});
    return out;
}

}  // namespace comparepresets
