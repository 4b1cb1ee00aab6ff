#include "ui/pages/tool_result_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

ToolResultBar::ToolResultBar(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("toolResultBar"));
    setStyleSheet(QStringLiteral("#toolResultBar { background: #e8f0fe; border: 1px solid #a0b8e0; border-radius: 3px; }"
                                 "#toolResultBar QLabel { color: #1a1a1a; }"));
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(6, 3, 6, 3);
    m_text = new QLabel(this);
    m_text->setObjectName(QStringLiteral("toolResultText"));
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* dismiss = new QPushButton(tr("Answer as a message instead"), this);
    dismiss->setObjectName(QStringLiteral("toolResultDismiss"));
    dismiss->setToolTip(tr("Leave the calls unanswered: the next message is yours, not a tool's."));
    row->addWidget(m_text, 1);
    row->addWidget(dismiss);
    connect(dismiss, &QPushButton::clicked, this, &ToolResultBar::dismissed);
    setVisible(false);
}

void ToolResultBar::showCall(const QString& name, const QString& arguments, int remaining) {
    QString args = arguments;
    if (args.size() > 160) args = args.left(157) + QStringLiteral("…");
    QString text = tr("The model called <b>%1</b>(<tt>%2</tt>). Paste what the tool returned below and press Send: "
                      "it goes back to the model as the tool's result.")
                       .arg(name.toHtmlEscaped(), args.toHtmlEscaped());
    if (remaining > 1) text += QLatin1Char(' ') + tr("(%n call(s) to answer)", nullptr, remaining);
    m_text->setText(text);
    setVisible(true);
}

QString ToolResultBar::text() const { return m_text->text(); }
