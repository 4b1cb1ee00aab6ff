// What an empty chat shows instead of a blank transcript: a line on what the workbench is for and
// example prompts to click — plain questions, a code request, and one that shows a variant's
// effect (a 64-token sliding window while a long answer streams, the KV chart levelling off).
#pragma once

#include <QWidget>

class WelcomePanel : public QWidget {
    Q_OBJECT
public:
    explicit WelcomePanel(QWidget* parent = nullptr);

    // The prompts the buttons send, in button order (tests read them).
    static QStringList examplePrompts();
    // The attention spec the variant example applies before its prompt.
    static QString variantExampleAttention();

signals:
    void promptChosen(const QString& prompt);
    // Reload with `attention`, then send `prompt` (the variant example).
    void variantExampleChosen(const QString& attention, const QString& prompt);
};
