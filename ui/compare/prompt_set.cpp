#include "ui/compare/prompt_set.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

namespace {

QString tr(const char* text) { return QCoreApplication::translate("PromptSet", text); }

// A JSONL line's prompt: "prompt", else the last user message of "messages"; empty + error otherwise.
QString promptOf(const QJsonValue& v, QString& error) {
    if (!v.isObject()) {
        error = tr("not a JSON object");
        return {};
    }
    const QJsonObject o = v.toObject();
    if (o.contains(QLatin1String("prompt"))) {
        if (!o.value(QLatin1String("prompt")).isString()) error = tr("'prompt' must be a string");
        return o.value(QLatin1String("prompt")).toString();
    }
    if (o.value(QLatin1String("messages")).isArray()) {
        QString last;
        for (const QJsonValue& m : o.value(QLatin1String("messages")).toArray()) {
            const QJsonObject message = m.toObject();
            if (message.value(QLatin1String("role")).toString() == QLatin1String("user") &&
                message.value(QLatin1String("content")).isString())
                last = message.value(QLatin1String("content")).toString();
        }
        if (last.isEmpty()) error = tr("'messages' has no user message");
        return last;
    }
    error = tr("needs 'prompt' (a string) or 'messages'");
    return {};
}

}  // namespace

namespace promptset {

QStringList split(const QString& text) {
    static const QRegularExpression separator(QStringLiteral("^[ \\t]*---[ \\t]*$"), QRegularExpression::MultilineOption);
    QStringList prompts;
    for (const QString& part : text.split(separator)) {
        const QString prompt = part.trimmed();
        if (!prompt.isEmpty()) prompts.append(prompt);
    }
    return prompts;
}

QString join(const QStringList& prompts) {
    return prompts.join(QStringLiteral("\n%1\n").arg(QLatin1String(kSeparator)));
}

Loaded fromJsonl(const QString& text, const QString& name) {
    Loaded out;
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (int i = 0; i < lines.size(); ++i) {
        const QString line = lines[i].trimmed();
        if (line.isEmpty()) continue;
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(line.toUtf8(), &parseError);
        QString error;
        QString prompt;
        if (parseError.error != QJsonParseError::NoError)
            error = tr("not valid JSON (%1 at byte %2)").arg(parseError.errorString()).arg(parseError.offset);
        else
            prompt = promptOf(doc.isObject() ? QJsonValue(doc.object()) : QJsonValue(), error).trimmed();
        if (!error.isEmpty()) {
            out.error = tr("%1 line %2: %3").arg(name).arg(i + 1).arg(error);
            out.prompts.clear();
            return out;
        }
        if (!prompt.isEmpty()) out.prompts.append(prompt);
    }
    if (out.prompts.isEmpty()) out.error = tr("%1: no prompts (one JSON object per line)").arg(name);
    return out;
}

Loaded load(const QString& path) {
    QFile file(path);
    const QString name = QFileInfo(path).fileName();
    if (!file.open(QIODevice::ReadOnly)) return {{}, tr("%1: cannot open (%2)").arg(name, file.errorString())};
    const QString text = QString::fromUtf8(file.readAll());
    if (path.endsWith(QLatin1String(".jsonl"), Qt::CaseInsensitive)) return fromJsonl(text, name);
    Loaded out{split(text), {}};
    if (out.prompts.isEmpty()) out.error = tr("%1: no prompts").arg(name);
    return out;
}

}  // namespace promptset
