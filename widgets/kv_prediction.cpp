// The closed forms mirror core_engine/attention (see docs/ARCHITECTURE.md, "Attention variants"):
// sliding keeps sinks + window, cross_layer stores one KV per group of layers in its range,
// compressed/heavy pool every `block` old tokens into one entry, latent stores `rank` values
// per layer (half in the K arena, half in the V arena), top-k keeps everything.
#include "widgets/kv_prediction.h"

#include <algorithm>
#include <cmath>

namespace kvprediction {

QStringList variantNames() {
    return {QStringLiteral("full"), QStringLiteral("sliding"), QStringLiteral("cross_layer"), QStringLiteral("topk"),
            QStringLiteral("compressed"), QStringLiteral("heavy"), QStringLiteral("latent")};
}

QStringList kvTypeNames() {
    return {QStringLiteral("f32"), QStringLiteral("f16"), QStringLiteral("bf16"), QStringLiteral("q8_0"),
            QStringLiteral("q4_0"), QStringLiteral("fp8")};
}

double bytesPerElement(const QString& kvType) {
    if (kvType == QLatin1String("f32")) return 4.0;
    if (kvType == QLatin1String("f16") || kvType == QLatin1String("bf16")) return 2.0;
    if (kvType == QLatin1String("q8_0")) return 34.0 / 32.0;   // fp16 scale + 32 int8
    if (kvType == QLatin1String("q4_0")) return 18.0 / 32.0;   // fp16 scale + 32 nibbles
    if (kvType == QLatin1String("fp8")) return 34.0 / 32.0;    // fp16 scale + 32 e4m3 bytes
    return 0.0;
}

QString specString(const AttentionParams& p) {
    const QString& kind = p.kind;
    auto n = [](int v) { return QString::number(v); };
    if (kind == QLatin1String("sliding")) return QStringLiteral("sliding:window=%1,sinks=%2").arg(p.window).arg(p.sinks);
    if (kind == QLatin1String("cross_layer")) {
        QString s = QStringLiteral("cross_layer:group=") + n(p.group);
        if (p.firstLayer != 0 || p.lastLayer >= 0)
            s += QStringLiteral(",layers=%1-%2").arg(p.firstLayer).arg(p.lastLayer);
        return s + QStringLiteral(",merge=") + p.merge;
    }
    if (kind == QLatin1String("topk")) return QStringLiteral("topk:k=%1,recent=%2").arg(p.k).arg(p.recent);
    if (kind == QLatin1String("compressed"))
        return QStringLiteral("compressed:block=%1,recent=%2,sinks=%3").arg(p.block).arg(p.recent).arg(p.sinks);
    if (kind == QLatin1String("heavy"))
        return QStringLiteral("heavy:block=%1,k=%2,recent=%3,sinks=%4").arg(p.block).arg(p.k).arg(p.recent).arg(p.sinks);
    if (kind == QLatin1String("latent")) return QStringLiteral("latent:rank=") + n(p.rank);
    return QStringLiteral("full");
}

AttentionParams parseSpec(const QString& spec) {
    AttentionParams p;
    const int colon = spec.indexOf(QLatin1Char(':'));
    p.kind = colon < 0 ? spec.trimmed() : spec.left(colon).trimmed();
    if (colon < 0) return p;
    for (const QString& part : spec.mid(colon + 1).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString key = part.section(QLatin1Char('='), 0, 0).trimmed();
        const QString value = part.section(QLatin1Char('='), 1).trimmed();
        const int n = value.toInt();
        if (key == QLatin1String("window")) p.window = n;
        else if (key == QLatin1String("sinks")) p.sinks = n;
        else if (key == QLatin1String("group")) p.group = n;
        else if (key == QLatin1String("merge")) p.merge = value;
        else if (key == QLatin1String("k")) p.k = n;
        else if (key == QLatin1String("recent")) p.recent = n;
        else if (key == QLatin1String("block")) p.block = n;
        else if (key == QLatin1String("rank")) p.rank = n;
        else if (key == QLatin1String("layers")) {
            p.firstLayer = value.section(QLatin1Char('-'), 0, 0).toInt();
            p.lastLayer = value.section(QLatin1Char('-'), 1, 1).toInt();
        }
    }
    return p;
}

QPair<QString, QString> parseKvTypes(const QString& kvTypes) {
    if (!kvTypes.contains(QLatin1Char('='))) return {kvTypes.trimmed(), kvTypes.trimmed()};
    QString k, v;
    for (const QString& part : kvTypes.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString key = part.section(QLatin1Char('='), 0, 0).trimmed();
        const QString value = part.section(QLatin1Char('='), 1).trimmed();
        if (key == QLatin1String("k")) k = value;
        else if (key == QLatin1String("v")) v = value;
    }
    return {k, v};
}

QString kvTypesString(const QString& kType, const QString& vType) {
    if (kType == vType) return kType;
    return QStringLiteral("k=%1,v=%2").arg(kType, vType);
}

KvPrediction predict(const KvShape& shape, const AttentionParams& p, const QString& kType, const QString& vType,
                     int nTokens) {
    KvPrediction out;
    const double bk = bytesPerElement(kType), bv = bytesPerElement(vType);
    const double perLayerToken = static_cast<double>(shape.nHeadKv) * shape.headDim * (bk + bv);
    const double t = std::max(0, nTokens);
    out.bytesPerTokenFull = shape.nLayer * perLayerToken;
    out.bytesFull = out.bytesPerTokenFull * t;
    out.bytesPerTokenStored = out.bytesPerTokenFull;
    out.tokensHeld = t;

    const QString& kind = p.kind;
    if (kind == QLatin1String("sliding")) {
        out.tokensHeld = std::min(t, static_cast<double>(p.window) + p.sinks);
    } else if (kind == QLatin1String("cross_layer")) {
        const int last = p.lastLayer < 0 ? shape.nLayer - 1 : std::min(p.lastLayer, shape.nLayer - 1);
        const int inRange = std::max(0, last - p.firstLayer + 1);
        const int group = std::max(1, p.group);
        const int stored = (shape.nLayer - inRange) + (inRange + group - 1) / group;
        out.bytesPerTokenStored = stored * perLayerToken;
    } else if (kind == QLatin1String("compressed") || kind == QLatin1String("heavy")) {
        // The first `sinks` and the newest `recent` tokens stay as they are; whole groups of
        // `block` older tokens become one pooled entry each, a partial group waits unpooled.
        const double kept = static_cast<double>(p.sinks) + p.recent;
        if (t > kept) {
            const double old = t - kept;
            const double block = std::max(1, p.block);
            out.tokensHeld = kept + std::floor(old / block) + std::fmod(old, block);
        }
    } else if (kind == QLatin1String("latent")) {
        out.bytesPerTokenStored = shape.nLayer * (p.rank / 2.0 * bk + p.rank / 2.0 * bv);
    }
    out.bytesVariant = out.bytesPerTokenStored * out.tokensHeld;
    return out;
}

}  // namespace kvprediction
