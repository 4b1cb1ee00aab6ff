// Labelled spin-box rows for the panels' forms: one place that names, ranges and explains a
// numeric field (its object name is how settings and tests find it).
#pragma once

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSpinBox>

namespace formrows {

inline QSpinBox* addSpin(QFormLayout* form, QWidget* owner, const QString& label, const QString& name, int min, int max,
                         int value, const QString& tip) {
    auto* spin = new QSpinBox(owner);
    spin->setObjectName(name);
    spin->setRange(min, max);
    spin->setValue(value);
    spin->setToolTip(tip);
    form->addRow(label, spin);
    return spin;
}

inline QDoubleSpinBox* addDoubleSpin(QFormLayout* form, QWidget* owner, const QString& label, const QString& name,
                                     double min, double max, double step, double value, const QString& tip) {
    auto* spin = new QDoubleSpinBox(owner);
    spin->setObjectName(name);
    spin->setRange(min, max);
    spin->setSingleStep(step);
    spin->setDecimals(step < 0.01 ? 3 : 2);
    spin->setValue(value);
    spin->setToolTip(tip);
    form->addRow(label, spin);
    return spin;
}

}  // namespace formrows
