// The line above the chat's input box while the model's tool calls wait for their results: which
// call (name and arguments) the next message answers, how many are left, and a way to answer as
// the user instead. ChatPage keeps the calls; this only shows them. GUI thread only.
#pragma once

#include <QFrame>

class QLabel;

class ToolResultBar : public QFrame {
    Q_OBJECT
public:
    explicit ToolResultBar(QWidget* parent = nullptr);
    // The call the next message answers; `remaining` counts it and those after it.
    void showCall(const QString& name, const QString& arguments, int remaining);
    QString text() const;

signals:
    // "Answer as a message instead": the calls stay unanswered, the next message is the user's.
    void dismissed();

private:
    QLabel* m_text = nullptr;
};
