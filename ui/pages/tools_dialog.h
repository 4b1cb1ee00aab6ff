// The tools the chat offers the model: OpenAI's `tools` (functions with a JSON Schema of their
// parameters), written as JSON, checked as the server checks a request's (a mistake names its
// field), with an example to start from, and kept in the settings with whether they are offered
// and whether a reply to the user must be a call (tool_choice "required": small models rarely
// call on their own).
// When the model calls one, the chat shows the call and takes what the tool returned as the next
// message (ChatPage). GUI thread only.
#pragma once

#include <QDialog>

#include "ui/bridge/engine_types.h"

class QCheckBox;
class QLabel;
class QPlainTextEdit;

class ToolsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ToolsDialog(QWidget* parent = nullptr);

    // The tools offered with a turn, from the settings: none when off. `answeringCalls`: the turn
    // returns tool results, and the model answers them freely (a required call would loop).
    static ToolOffer offer(bool answeringCalls);
    // The tools offered (a JSON array), empty when none are.
    static QString offeredTools();
    // How many tools offeredTools() holds.
    static int offeredCount();
    // A small set to start from (a weather lookup and a calculator).
    static QString exampleTools();
    // Empty when `json` is a valid `tools` array, else what is wrong, naming the field.
    static QString check(const QString& json);

    void accept() override;   // kept only when the JSON checks out; else the error shows

private:
    QPlainTextEdit* m_edit = nullptr;
    QCheckBox* m_offer = nullptr;
    QCheckBox* m_require = nullptr;
    QLabel* m_error = nullptr;
};
