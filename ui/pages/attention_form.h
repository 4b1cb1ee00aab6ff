// The attention part of the configuration panel, built from the engine's variant table
// (workbench/attention.h) so that its defaults, ranges and help are the engine's own: a variant
// combo, one page of fields per variant, and a Layers field that runs the variant on some layers
// only (the others run full attention; for cross_layer it is the sharing range), and a last entry,
// "per-layer layout", whose one text field takes a whole layout of several terms (a calibrated
// cross_layer layout, a sweep's mixed rows). What it gives is the engine's canonical layout name,
// so the spec the panel emits is the one the engine runs. GUI thread only.
#pragma once

#include <QWidget>
#include <string>
#include <vector>

#include "workbench/attention.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QStackedWidget;

class AttentionForm : public QWidget {
    Q_OBJECT
public:
    explicit AttentionForm(QWidget* parent = nullptr);

    // The layout the fields name, or the parser's message when they name none (a bad Layers text).
    workbench::Result<workbench::AttentionLayout> layout() const;
    // Its canonical name (attention_layout_name); the fields as written while layout() fails.
    std::string spec() const;
    // Shows `spec` in the fields (a layout of several terms in the per-layer layout field). False,
    // the fields left as they were and the reason shown under them, when it does not parse.
    bool setSpec(const std::string& spec);

signals:
    void changed();

private:
    struct Field {
        std::string key;     // as the grammar spells it
        QWidget* widget;     // QSpinBox (integer), QDoubleSpinBox (fraction) or QComboBox (choice)
    };
    QWidget* buildPage(const workbench::AttentionVariant& variant, std::vector<Field>& fields);
    const workbench::AttentionVariant& currentVariant() const;   // not in the layout entry
    bool layoutEntry() const;   // the per-layer layout entry is chosen
    std::string fieldsText() const;  // "sliding:window=64,sinks=4,layers=0-9"
    void showVariant(int index);
    void showError();

    QComboBox* m_variant = nullptr;
    QStackedWidget* m_pages = nullptr;
    std::vector<std::vector<Field>> m_fields;  // per variant, in attention_variants() order
    QLineEdit* m_layers = nullptr;
    QLineEdit* m_layout = nullptr;   // the per-layer layout entry's whole spec
    std::string m_lastSpec = "full";  // the fields' last spec, the layout's first text when it is empty
    QLabel* m_error = nullptr;
};
