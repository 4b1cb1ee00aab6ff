// The Compare page's presets: the rows' menus filled from the database (named presets, stored
// configurations) beside the built-ins, and a row saved as a named preset. Part of ComparePage.
#include <QFileInfo>
#include <QInputDialog>
#include <QLineEdit>

#include "ui/bridge/engine_client.h"
#include "ui/bridge/store_client.h"
#include "ui/compare/compare_config_form.h"
#include "ui/compare/compare_page.h"
#include "ui/compare/compare_presets.h"

namespace {
// What the preset menus list from the database, read in one store task.
struct StoredPresets {
    std::vector<workbench::PresetRecord> named;
    std::vector<workbench::ConfigurationRecord> configurations;
};
}  // namespace

void ComparePage::refreshPresets() {
    const auto& info = m_chat->modelInfo();
    const int kvWidth = info ? info->n_head_kv * info->head_dim : 0;
    m_form->setModelInfo(info);
    const QString model = QFileInfo(QString::fromStdString(m_chat->config().model_path)).fileName();
    if (!m_store->isOpen()) {
        m_form->setPresets(comparepresets::builtIns(kvWidth));
        return;
    }
    m_store->call<StoredPresets>(
        [](workbench::Store& s) -> workbench::Result<StoredPresets> {
            StoredPresets out;
            auto named = s.list_presets();
            if (!named.ok()) return named.status();
            auto configurations = s.list_configurations();
            if (!configurations.ok()) return configurations.status();
            return StoredPresets{std::move(*named), std::move(*configurations)};
        },
        this, [this, kvWidth, model](const workbench::Result<StoredPresets>& result) {
            QList<ComparePreset> presets;
            QList<ComparePreset> stored;
            if (result.ok()) {
                presets = comparepresets::fromNamed(result->named);
                stored = comparepresets::fromStored(result->configurations, model);
            }
            presets += comparepresets::builtIns(kvWidth);
            presets += stored;
            m_form->setPresets(presets);
            emit presetsLoaded(static_cast<int>(stored.size()));
        });
}

void ComparePage::savePreset(int row, const QString& name) {
    const QString trimmed = name.trimmed();
    if (m_form->rowRemote(row)) {
        setStatus(tr("Row #%1 is a remote server: presets keep local settings.").arg(row + 1));
        return;
    }
    if (trimmed.isEmpty() || !m_store->isOpen()) {
        setStatus(m_store->isOpen() ? tr("A preset needs a name.") : tr("Presets are kept in the history, which is off."));
        return;
    }
    const workbench::EngineConfig config = m_form->rowConfig(row, baseConfig());
    m_store->call<workbench::RowId>(
        [config, name = trimmed.toStdString()](workbench::Store& s) -> workbench::Result<workbench::RowId> {
            auto configurationId = s.save_configuration(workbench::make_configuration(config));
            if (!configurationId.ok()) return configurationId.status();
            workbench::PresetRecord preset;
            preset.name = name;
            preset.configuration_id = *configurationId;
            return s.save_preset(preset);
        },
        this, [this, trimmed](const workbench::Result<workbench::RowId>& result) {
            setStatus(result.ok() ? tr("Saved preset \"%1\".").arg(trimmed)
                                  : tr("Preset not saved: %1").arg(QString::fromStdString(result.status().message())));
            refreshPresets();
        });
}

void ComparePage::askAndSavePreset(int row) {
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("Save as preset"), tr("Name for row #%1's settings:").arg(row + 1),
                                               QLineEdit::Normal, QString(), &ok);
    if (ok) savePreset(row, name);
}
