// The presets a Compare row can start from: the chat's current settings, the user's named presets
// ("Save as preset", kept in the session database), built-in ones that show the variants'
// trade-offs on a fresh install, and every distinct configuration stored in the session database. A preset is three fields (attention spec, KV types, weights); picking one fills
// the row, which stays editable. Plain values, no widgets, no store access (the page reads the
// stored configurations on the store thread and hands them in).
#pragma once

#include <QList>
#include <QString>
#include <vector>

#include "workbench/store.h"

struct ComparePreset {
    enum class Source { Chat, Named, BuiltIn, Stored };
    Source source = Source::BuiltIn;
    QString label;       // what the preset menu shows
    QString attention;   // the --attention spec
    QString kvTypes;     // the --kv-type spec
    QString weights;     // "" = as stored in the file

    bool sameFields(const QString& attention, const QString& kvTypes, const QString& weights) const;
};

namespace comparepresets {

// "sliding:window=1020,sinks=4 · KV f16 · weights as stored"
QString summary(const QString& attention, const QString& kvTypes, const QString& weights);

// The built-ins. `kvWidth` is the loaded model's n_head_kv · head_dim (the latent rank that keeps
// everything); the latent preset keeps half of it. 0: the engine's default rank.
QList<ComparePreset> builtIns(int kvWidth);

// The stored configurations, one per distinct (attention, KV, weights): the comparison always runs
// on the chat's model, so a setting stored for another model is offered too (it applies to any
// model), said in its label; the loaded model's come first. Remote servers' records are left out
// (the menu's "Remote server…" picks a server).
QList<ComparePreset> fromStored(const std::vector<workbench::ConfigurationRecord>& records, const QString& loadedModel);

// The named presets, in the store's order (by name), each labelled with its name.
QList<ComparePreset> fromNamed(const std::vector<workbench::PresetRecord>& records);

}  // namespace comparepresets
