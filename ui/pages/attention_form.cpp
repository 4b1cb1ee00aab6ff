#include "ui/pages/attention_form.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace {

using workbench::AttentionKind;
using workbench::AttentionParameter;
using workbench::AttentionVariant;

// "cross_layer" + "group" → "crossLayerGroup": the names tests and saved settings find fields by.
QString fieldName(const std::string& kind, const std::string& key) {
    QString out;
    bool upper = false;
    for (char c : kind + "_" + key) {
        if (c == '_') {
            upper = true;
            continue;
        }
        out += upper ? QChar::fromLatin1(c).toUpper() : QChar::fromLatin1(c);
        upper = false;
    }
    return out;
}

// latent rebuilds K and V on every layer and full is every layer already: no Layers for them.
bool takesLayers(AttentionKind kind) { return kind != AttentionKind::full && kind != AttentionKind::latent; }

const AttentionParameter* layerRangeOf(const AttentionVariant& variant) {
    for (const AttentionParameter& p : variant.parameters)
        if (p.type == AttentionParameter::Type::layer_range) return &p;
    return nullptr;
}

}  // namespace

AttentionForm::AttentionForm(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* top = new QFormLayout();
    outer->addLayout(top);
    m_variant = new QComboBox(this);
    m_variant->setObjectName(QStringLiteral("attentionCombo"));
    m_variant->setToolTip(tr("The attention variant: what the KV cache keeps and what each query reads."));
    top->addRow(tr("Attention"), m_variant);

    m_pages = new QStackedWidget(this);
    outer->addWidget(m_pages);
    for (const AttentionVariant& v : workbench::attention_variants()) {
        m_variant->addItem(QString::fromStdString(v.name));
        m_variant->setItemData(m_variant->count() - 1, QString::fromStdString(v.summary), Qt::ToolTipRole);
        m_fields.emplace_back();
        m_pages->addWidget(buildPage(v, m_fields.back()));
    }
    // The last entry: a whole layout, each term with its layers, as --attention takes it.
    m_variant->addItem(tr("per-layer layout"));
    m_variant->setItemData(m_variant->count() - 1,
                           tr("Different variants on different layers, e.g. a calibrated cross_layer layout"),
                           Qt::ToolTipRole);
    m_fields.emplace_back();
    {
        auto* page = new QWidget(m_pages);
        auto* form = new QFormLayout(page);
        form->setContentsMargins(12, 0, 0, 0);
        m_layout = new QLineEdit(page);
        m_layout->setObjectName(QStringLiteral("attentionLayout"));
        m_layout->setPlaceholderText(QStringLiteral("sliding:window=512,layers=0-14;topk:k=512"));
        m_layout->setToolTip(tr("Terms joined by ';', each a variant spec with its layers=A-B (one term may leave "
                                "them out and take the rest; layers no term names run full attention)."));
        connect(m_layout, &QLineEdit::textChanged, this, &AttentionForm::changed);
        form->addRow(tr("Layout"), m_layout);
        m_pages->addWidget(page);
    }

    auto* bottom = new QFormLayout();
    bottom->setContentsMargins(12, 0, 0, 0);
    outer->addLayout(bottom);
    m_layers = new QLineEdit(this);
    m_layers->setObjectName(QStringLiteral("attentionLayers"));
    m_layers->setPlaceholderText(tr("all layers"));
    bottom->addRow(tr("Layers"), m_layers);
    connect(m_layers, &QLineEdit::textChanged, this, &AttentionForm::changed);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("attentionError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #b00020;"));
    m_error->setVisible(false);
    outer->addWidget(m_error);

    connect(this, &AttentionForm::changed, this, &AttentionForm::showError);
    connect(this, &AttentionForm::changed, this, [this] {
        if (!layoutEntry() && layout().ok()) m_lastSpec = spec();
    });
    connect(m_variant, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (layoutEntry() && m_layout->text().trimmed().isEmpty()) {
            const QSignalBlocker block(m_layout);   // the layout starts as what the fields showed
            m_layout->setText(QString::fromStdString(m_lastSpec));
        }
        showVariant(index);
        emit changed();
    });
    showVariant(0);
}

QWidget* AttentionForm::buildPage(const AttentionVariant& variant, std::vector<Field>& fields) {
    auto* page = new QWidget(m_pages);
    auto* form = new QFormLayout(page);
    form->setContentsMargins(12, 0, 0, 0);
    // What the variant does, in a line above its fields (the engine's own summary).
    auto* summary = new QLabel(QString::fromStdString(variant.summary), page);
    summary->setObjectName(QStringLiteral("variantSummary_") + QString::fromStdString(variant.name));
    summary->setWordWrap(true);  // a long summary must not widen the panel
    summary->setForegroundRole(QPalette::PlaceholderText);
    form->addRow(summary);
    for (const AttentionParameter& p : variant.parameters) {
        const QString help = QString::fromStdString(p.help);
        if (p.type == AttentionParameter::Type::integer) {
            auto* spin = new QSpinBox(page);
            spin->setRange(p.min_value, p.max_value);
            spin->setValue(p.default_value);
            connect(spin, &QSpinBox::valueChanged, this, &AttentionForm::changed);
            fields.push_back({p.key, spin});
        } else if (p.type == AttentionParameter::Type::fraction) {
            auto* spin = new QDoubleSpinBox(page);
            spin->setDecimals(3);
            spin->setSingleStep(0.05);
            spin->setRange(p.fraction_min, p.fraction_max);
            spin->setValue(p.fraction_default);
            connect(spin, &QDoubleSpinBox::valueChanged, this, &AttentionForm::changed);
            fields.push_back({p.key, spin});
        } else if (p.type == AttentionParameter::Type::choice) {
            auto* combo = new QComboBox(page);
            for (const std::string& choice : p.choices) combo->addItem(QString::fromStdString(choice));
            combo->setCurrentIndex(p.default_value);
            connect(combo, &QComboBox::currentIndexChanged, this, &AttentionForm::changed);
            fields.push_back({p.key, combo});
        } else {
            continue;  // a layer range is the Layers field below the pages
        }
        fields.back().widget->setObjectName(fieldName(variant.name, p.key));
        fields.back().widget->setToolTip(help);
        form->addRow(QString::fromStdString(p.label), fields.back().widget);
    }
    return page;
}

bool AttentionForm::layoutEntry() const { return m_variant->currentIndex() == m_variant->count() - 1; }

const AttentionVariant& AttentionForm::currentVariant() const {
    return workbench::attention_variants()[static_cast<size_t>(std::max(0, m_variant->currentIndex()))];
}

void AttentionForm::showVariant(int index) {
    // Only the shown page takes space: the stack would otherwise be as tall as its tallest.
    for (int i = 0; i < m_pages->count(); ++i)
        m_pages->widget(i)->setSizePolicy(QSizePolicy::Preferred, i == index ? QSizePolicy::Preferred : QSizePolicy::Ignored);
    m_pages->setCurrentIndex(index);
    m_pages->adjustSize();
    if (layoutEntry()) {
        m_layers->setEnabled(false);
        m_layers->setToolTip(tr("Each term of the layout names its own layers."));
        return;
    }
    const AttentionVariant& v = currentVariant();
    m_layers->setEnabled(takesLayers(v.kind));
    const AttentionParameter* range = layerRangeOf(v);
    m_layers->setToolTip(range ? QString::fromStdString(range->help) + tr(" One range, A-B.")
                         : takesLayers(v.kind)
                             ? tr("The layers this variant runs on: A-B, or ranges joined by + (0-9+20-29); the "
                                  "other layers run full attention. Empty: every layer.")
                             : tr("%1 runs on every layer.").arg(QString::fromStdString(v.name)));
}

std::string AttentionForm::fieldsText() const {
    if (layoutEntry()) return m_layout->text().trimmed().toStdString();
    const AttentionVariant& v = currentVariant();
    std::string params;
    for (const Field& f : m_fields[static_cast<size_t>(m_variant->currentIndex())]) {
        const auto* spin = qobject_cast<const QSpinBox*>(f.widget);
        const auto* share = qobject_cast<const QDoubleSpinBox*>(f.widget);
        const std::string value = spin    ? std::to_string(spin->value())
                                  : share ? workbench::fraction_text(share->value())
                                          : qobject_cast<const QComboBox*>(f.widget)->currentText().toStdString();
        if (!params.empty()) params += ',';
        params.append(f.key).append("=").append(value);
    }
    const QString layers = m_layers->text().trimmed();
    if (takesLayers(v.kind) && !layers.isEmpty()) {
        if (!params.empty()) params += ',';
        params.append("layers=").append(layers.toStdString());
    }
    return params.empty() ? v.name : v.name + ":" + params;
}

workbench::Result<workbench::AttentionLayout> AttentionForm::layout() const {
    if (layoutEntry()) {
        if (m_layout->text().trimmed().isEmpty())
            return workbench::error(workbench::StatusCode::invalid_argument,
                                    tr("Layout: write the terms, e.g. sliding:window=512,layers=0-14;topk:k=512").toStdString());
        return workbench::parse_attention_layout(fieldsText());
    }
    // Only ranges belong here: a ',' or ';' would add parameters or terms the fields do not show.
    const QString layers = m_layers->text();
    for (QChar c : layers)
        if (!c.isDigit() && c != QLatin1Char('-') && c != QLatin1Char('+') && !c.isSpace())
            return workbench::error(workbench::StatusCode::invalid_argument,
                                    tr("Layers '%1': ranges A-B or single layers joined by + (0-9+20-29)")
                                        .arg(layers)
                                        .toStdString());
    return workbench::parse_attention_layout(fieldsText());
}

std::string AttentionForm::spec() const {
    const auto parsed = layout();
    return parsed.ok() ? workbench::attention_layout_name(*parsed) : fieldsText();
}

bool AttentionForm::setSpec(const std::string& spec) {
    auto fail = [&](const QString& reason) {
        m_error->setText(reason);
        m_error->setVisible(true);
        return false;
    };
    const auto parsed = workbench::parse_attention_layout(spec.empty() ? std::string("full") : spec);
    if (!parsed.ok()) return fail(QString::fromStdString(parsed.status().message()));
    // The canonical name spells out every parameter, and the term's layers, as key=value.
    const std::string name = workbench::attention_layout_name(*parsed);
    if (parsed->size() != 1) {
        const int index = m_variant->count() - 1;
        {
            const QSignalBlocker blockVariant(m_variant), blockLayout(m_layout);
            m_variant->setCurrentIndex(index);
            m_layout->setText(QString::fromStdString(name));
        }
        showVariant(index);
        emit changed();
        return true;
    }
    const auto& variants = workbench::attention_variants();
    int index = 0;
    while (index + 1 < static_cast<int>(variants.size()) && variants[static_cast<size_t>(index)].kind != parsed->front().spec.kind)
        ++index;
    QString layers;
    {
        const QSignalBlocker blockVariant(m_variant), blockLayers(m_layers);
        m_variant->setCurrentIndex(index);
        const size_t colon = name.find(':');
        const QStringList parts = colon == std::string::npos ? QStringList()
                                                             : QString::fromStdString(name.substr(colon + 1)).split(QLatin1Char(','));
        for (const QString& part : parts) {
            const std::string key = part.section(QLatin1Char('='), 0, 0).toStdString();
            const QString value = part.section(QLatin1Char('='), 1);
            if (key == "layers") layers = value;
            for (const Field& f : m_fields[static_cast<size_t>(index)]) {
                if (f.key != key) continue;
                const QSignalBlocker blockField(f.widget);
                if (auto* spin = qobject_cast<QSpinBox*>(f.widget)) spin->setValue(value.toInt());
                else if (auto* share = qobject_cast<QDoubleSpinBox*>(f.widget)) share->setValue(value.toDouble());
                else qobject_cast<QComboBox*>(f.widget)->setCurrentText(value);
            }
        }
        m_layers->setText(layers);
    }
    showVariant(index);
    emit changed();
    return true;
}

void AttentionForm::showError() {
    const auto parsed = layout();
    m_error->setVisible(!parsed.ok());
    m_error->setText(parsed.ok() ? QString() : QString::fromStdString(parsed.status().message()));
}
