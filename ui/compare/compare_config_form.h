// The configurations a comparison runs: up to four rows, each an attention spec (the engine's
// --attention grammar, e.g. "sliding:window=32,sinks=4"), K/V types ("f16", "k=q8_0,v=q4_0") and
// a weight type, each with a checkbox to include it, a preset menu (the chat's current settings,
// named presets, built-ins, stored configurations; see compare_presets.h) that fills the row, and
// a "Save…" button that asks to keep the row as a named preset. The fields stay editable: the
// menu then shows "Custom" unless the fields still equal a preset. The menu also offers "Remote
// server…" (and the chat's connected server, when there is one): the row is then that server, its
// fields disabled, until a local preset is picked again (compare_remote.h).
// The model, threads and context come from the chat's loaded model. GUI thread only.
#pragma once

#include <QWidget>
#include <optional>

#include "ui/bridge/remote_chat_client.h"
#include "ui/compare/compare_presets.h"
#include "workbench/config.h"
#include "workbench/engine.h"

class QCheckBox;
class QComboBox;
class QLineEdit;

class CompareConfigForm : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxRows = 4;

    explicit CompareConfigForm(QWidget* parent = nullptr);

    // A local row (a remote one becomes local again).
    void setRow(int row, bool enabled, const QString& attention, const QString& kvTypes, const QString& weights = {});
    // Puts a configuration in the first unticked row (the last row when all are ticked) and ticks it.
    void addRow(const QString& attention, const QString& kvTypes, const QString& weights);
    // Makes `row` the server `target` and ticks it.
    void setRemote(int row, const RemoteTarget& target);
    std::optional<RemoteTarget> rowRemote(int row) const;
    // The checked rows' servers, in configs()' order: nullopt for a local row.
    QList<std::optional<RemoteTarget>> remotes() const;
    // The server the chat is connected to: offered in every row's menu; nullopt: none.
    void setConnectedServer(const std::optional<RemoteTarget>& target);
    // The checked rows over `base` (model, threads, context), in order.
    QList<workbench::EngineConfig> configs(const workbench::EngineConfig& base) const;
    // One row over `base`, checked or not.
    workbench::EngineConfig rowConfig(int row, const workbench::EngineConfig& base) const;
    // The checked rows' speculative decoding, in configs()' order (a draft model row drafts with
    // the chat's draft model: configs() keeps its path only for those rows).
    QList<workbench::SpeculationParams> speculations() const;
    // A column header for a configuration: "sliding:window=32,sinks=4 · KV f16 · lookup".
    static QString shortName(const workbench::EngineConfig& config, const workbench::SpeculationParams& drafting = {});

    // What the "Chat's current settings" preset fills in.
    void setChatSettings(const workbench::EngineConfig& chat);
    // The loaded model each row's KV is predicted for (nullopt: none; a row's spec is then only
    // checked): the attention field's tooltip gives the prediction, or the parser's message
    // with the field marked, as the engine would refuse it.
    void setModelInfo(const std::optional<workbench::ModelInfo>& info);
    // Rebuilds every row's menu: the chat's settings, then `presets` in order. Rows keep their fields.
    void setPresets(const QList<ComparePreset>& presets);
    const QList<ComparePreset>& presets() const { return m_presets; }  // index 0: the chat's
    // Fills `row` from presets()[index] and ticks it (as picking it in the menu does).
    void applyPreset(int row, int index);
    // The preset `row`'s menu shows; -1: Custom.
    int presetOf(int row) const;
    QComboBox* presetMenu(int row) const { return m_rows[row].preset; }

signals:
    // The row's "Save…" was clicked: the page asks for a name and stores the preset.
    void savePresetRequested(int row);
    // "Remote server…" was picked: the page asks which server (setRemote follows when one answers).
    void remoteRequested(int row);

private:
    struct Row {
        QCheckBox* use = nullptr;
        QComboBox* preset = nullptr;
        QLineEdit* attention = nullptr;
        QComboBox* kv = nullptr;
        QComboBox* weights = nullptr;
        QComboBox* drafting = nullptr;   // speculative decoding: off, prompt lookup, the chat's draft model
        std::optional<RemoteTarget> remote;
    };
    void fillMenu(Row& r);
    // Points the row's menu at a preset equal to its fields (the chosen one first), else Custom.
    void syncMenu(int row);
    void checkRow(int row);

    Row m_rows[kMaxRows];
    std::optional<workbench::ModelInfo> m_info;
    QList<ComparePreset> m_presets;
    std::optional<RemoteTarget> m_connected;
};
