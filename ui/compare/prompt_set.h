// A comparison's prompts: the prompt box holds one prompt or a set separated by lines that hold
// only "---"; a file loads as such a set: a .jsonl file (one JSON object per line with "prompt",
// as `workbench-cli batch` reads; "messages" lines take their last user message; parsed with
// QJsonDocument, since the GUI reaches the engine only through its API headers) or plain text
// (the same "---" separators). Pure functions; the file is read on the calling thread (small).
#pragma once

#include <QString>
#include <QStringList>

namespace promptset {

// The separator line between prompts in the prompt box and in .txt files.
inline constexpr char kSeparator[] = "---";

// The non-empty prompts of `text`, trimmed, in order.
QStringList split(const QString& text);
// The prompts as the prompt box shows them (split(join(p)) == p for prompts without a "---" line).
QString join(const QStringList& prompts);

struct Loaded {
    QStringList prompts;
    QString error;  // empty when ok: "prompts.jsonl line 3: 'prompt' must be a string"
};
Loaded fromJsonl(const QString& text, const QString& name);
Loaded load(const QString& path);  // .jsonl by its suffix, anything else as text

}  // namespace promptset
