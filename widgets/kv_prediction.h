// What a KV cache configuration will hold, worked out before the model is (re)loaded: the
// attention variant's parameters, the spec string the engine parses, and each variant's closed
// form for bytes at T tokens. Plain arithmetic on plain numbers; the engine reports the measured
// bytes after the load, and the two should agree up to block granularity (16 tokens a block).
#pragma once

#include <QPair>
#include <QString>
#include <QStringList>
#include <cstdint>

// The shape a model's KV cache has: per layer, n_head_kv heads of head_dim values for K and V.
struct KvShape {
    int nLayer = 0;
    int nHeadKv = 0;
    int headDim = 0;
};

// One attention variant and its parameters (the unused ones are ignored).
struct AttentionParams {
    QString kind = QStringLiteral("full");  // full, sliding, cross_layer, topk, compressed, heavy, latent
    int window = 1020;                      // sliding: newest tokens kept
    int sinks = 4;                          // sliding, compressed, heavy: first tokens always kept
    int group = 2;                          // cross_layer: layers sharing one KV
    int firstLayer = 0, lastLayer = -1;     // cross_layer range, inclusive; -1: the last layer
    QString merge = QStringLiteral("none"); // cross_layer: none, mean, slerp
    int k = 1024;                           // topk: tokens read; heavy: pooled entries read
    int recent = 64;                        // topk, compressed, heavy: newest tokens read as they are
    int block = 4;                          // compressed, heavy: tokens pooled into one entry
    int rank = 96;                          // latent: values stored per layer and token
};

struct KvPrediction {
    double bytesPerTokenFull = 0;     // full attention: 2 · n_layer · n_head_kv · head_dim · bytes/element
    double bytesPerTokenStored = 0;   // the variant, per token it stores
    double bytesFull = 0;             // full attention at nTokens
    double bytesVariant = 0;          // the variant at nTokens
    double tokensHeld = 0;            // token entries the variant keeps at nTokens
};

namespace kvprediction {

// The seven variant names, in the order the engine lists them.
QStringList variantNames();
// The KV element types the engine stores: f32 f16 bf16 q8_0 q4_0 fp8.
QStringList kvTypeNames();
// Bytes per stored value including block scales (q8_0: 34 bytes per 32 values); 0 if unknown.
double bytesPerElement(const QString& kvType);
// "sliding:window=64,sinks=4": the engine's --attention grammar, every parameter spelled out.
QString specString(const AttentionParams& params);
// The reverse of specString: "sliding:window=64,sinks=4" → kind and parameters (parameters not
// named keep their defaults; an unknown kind is returned as it is).
AttentionParams parseSpec(const QString& spec);
// "f16" → {f16, f16}; "k=q8_0,v=q4_0" → {q8_0, q4_0}.
QPair<QString, QString> parseKvTypes(const QString& kvTypes);
// "f16", or "k=q8_0,v=q4_0" when K and V differ.
QString kvTypesString(const QString& kType, const QString& vType);
// The closed form of the variant's bytes at nTokens.
KvPrediction predict(const KvShape& shape, const AttentionParams& params, const QString& kType, const QString& vType,
                     int nTokens);

}  // namespace kvprediction
