#include "ui/pages/welcome_panel.h"

#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace {

constexpr const char* kLongAnswer = "Tell me a long story about a lighthouse keeper and a storm.";

}  // namespace

QStringList WelcomePanel::examplePrompts() {
    return {tr("Explain what a KV cache is, in two sentences."), tr("Write a Python function that checks whether a word is a palindrome."),
            tr("Give me three ideas for a rainy afternoon."), tr(kLongAnswer)};
}

QString WelcomePanel::variantExampleAttention() { return QStringLiteral("sliding:window=64,sinks=4"); }

WelcomePanel::WelcomePanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("welcomePanel"));
    auto* col = new QVBoxLayout(this);
    col->setContentsMargins(12, 8, 12, 8);
    col->setSpacing(4);
    col->addStretch(1);
    auto* title = new QLabel(tr("<b>Ask something, then watch what it costs</b>"), this);
    auto* text = new QLabel(tr("Each reply charts its KV memory, time to first token and tokens per second below. "
                               "The panel on the right switches attention variants and KV types (F9 hides it)."),
                            this);
    text->setWordWrap(true);
    col->addWidget(title);
    col->addWidget(text);
    const QStringList prompts = examplePrompts();
    for (int i = 0; i + 1 < prompts.size(); ++i) {
        auto* b = new QPushButton(prompts[i], this);
        b->setObjectName(QStringLiteral("welcomePrompt%1").arg(i));
        b->setStyleSheet(QStringLiteral("text-align: left; padding: 6px 10px;"));
        connect(b, &QPushButton::clicked, this, [this, p = prompts[i]] { emit promptChosen(p); });
        col->addWidget(b);
    }
    auto* variant = new QPushButton(tr("Try a variant: a 64-token sliding window on a long story"), this);
    variant->setObjectName(QStringLiteral("welcomeVariantExample"));
    variant->setStyleSheet(QStringLiteral("text-align: left; padding: 6px 10px; font-weight: bold;"));
    variant->setToolTip(tr("Reloads the model with %1, then asks: %2. Watch the KV chart level off at the window.")
                            .arg(variantExampleAttention(), prompts.last()));
    connect(variant, &QPushButton::clicked, this, [this, p = prompts.last()] { emit variantExampleChosen(variantExampleAttention(), p); });
    col->addWidget(variant);
    col->addStretch(2);
}
