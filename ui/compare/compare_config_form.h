// The configurations a comparison runs: up to four rows, each an attention spec (the engine's
// --attention grammar, e.g. "sliding:window=32,sinks=4"), K/V types ("f16", "k=q8_0,v=q4_0") and
// a weight type, each with a checkbox to include it. The first row can copy the chat's current
// settings. The model, threads and context come from the chat's loaded model. GUI thread only.
#pragma once

#include <QWidget>

#include "workbench/config.h"

class QCheckBox;
class QComboBox;
class QLineEdit;

class CompareConfigForm : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxRows = 4;

    explicit CompareConfigForm(QWidget* parent = nullptr);

    void setRow(int row, bool enabled, const QString& attention, const QString& kvTypes, const QString& weights = {});
    // The checked rows over `base` (model, threads, context), in order.
    QList<workbench::EngineConfig> configs(const workbench::EngineConfig& base) const;
    // A column header for a configuration: "sliding:window=32,sinks=4 · KV f16".
    static QString shortName(const workbench::EngineConfig& config);

signals:
    // The first row asks for the chat's settings.
    void copyFromChatRequested();

private:
    struct Row {
        QCheckBox* use = nullptr;
        QLineEdit* attention = nullptr;
        QComboBox* kv = nullptr;
        QComboBox* weights = nullptr;
    };
    Row m_rows[kMaxRows];
};
