// The tools dialog (see the header): the editor, the check, the settings.
#include "ui/pages/tools_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

#include "workbench/chat_reply.h"

namespace {
const QString kToolsKey = QStringLiteral("chat/tools");
const QString kOfferKey = QStringLiteral("chat/offerTools");
const QString kRequireKey = QStringLiteral("chat/requireToolCall");

workbench::Result<workbench::Json> parsedTools(const QString& json) {
    auto j = workbench::parse_json(json.toStdString());
    if (!j.ok()) return workbench::error(workbench::StatusCode::invalid_argument, "not JSON: " + j.status().message());
    if (const workbench::Status s = workbench::check_tools(*j); !s.ok()) return s;
    return std::move(*j);
}
}  // namespace

ToolsDialog::ToolsDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Tools offered to the model"));
    setObjectName(QStringLiteral("toolsDialog"));
    resize(620, 480);
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("Functions the model may call, as OpenAI's <tt>tools</tt>: a JSON array of "
                                "<tt>{\"type\": \"function\", \"function\": {\"name\", \"description\", \"parameters\"}}</tt>. "
                                "The model's template describes them to it; a call shows in the chat as a block, and "
                                "what you paste back is sent as the tool's result."), this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    m_offer = new QCheckBox(tr("Offer these tools with every turn"), this);
    m_offer->setObjectName(QStringLiteral("offerToolsCheck"));
    layout->addWidget(m_offer);
    m_require = new QCheckBox(tr("Require a call in reply to each of your messages (tool_choice \"required\")"), this);
    m_require->setObjectName(QStringLiteral("requireToolCallCheck"));
    m_require->setToolTip(tr("The reply is constrained to a call of one of these tools with arguments that follow its "
                             "parameters; after the results, the model answers freely."));
    layout->addWidget(m_require);
    m_edit = new QPlainTextEdit(this);
    m_edit->setObjectName(QStringLiteral("toolsEdit"));
    m_edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_edit->setPlaceholderText(tr("[ { \"type\": \"function\", \"function\": { \"name\": … } } ]"));
    layout->addWidget(m_edit, 1);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("toolsError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #d62728;"));
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_error);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* example = buttons->addButton(tr("Insert example"), QDialogButtonBox::ResetRole);
    example->setObjectName(QStringLiteral("toolsExampleButton"));
    layout->addWidget(buttons);
    connect(example, &QPushButton::clicked, this, [this] {
        m_edit->setPlainText(exampleTools());
        m_offer->setChecked(true);
    });
    connect(buttons, &QDialogButtonBox::accepted, this, &ToolsDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    QSettings s;
    m_edit->setPlainText(s.value(kToolsKey).toString());
    m_offer->setChecked(s.value(kOfferKey, false).toBool());
    m_require->setChecked(s.value(kRequireKey, false).toBool());
}

QString ToolsDialog::check(const QString& json) {
    auto t = parsedTools(json);
    return t.ok() ? QString() : QString::fromStdString(t.status().message());
}

void ToolsDialog::accept() {
    const QString text = m_edit->toPlainText().trimmed();
    // Nothing offered may stay empty; anything written must check out, offered or not.
    if (!text.isEmpty() || m_offer->isChecked()) {
        if (const QString e = check(text.isEmpty() ? QStringLiteral("[]") : text); !e.isEmpty()) {
            m_error->setText(e);
            return;
        }
    }
    QSettings s;
    s.setValue(kToolsKey, text);
    s.setValue(kOfferKey, m_offer->isChecked() && !text.isEmpty());
    s.setValue(kRequireKey, m_require->isChecked());
    QDialog::accept();
}

QString ToolsDialog::offeredTools() {
    QSettings s;
    if (!s.value(kOfferKey, false).toBool()) return {};
    const QString text = s.value(kToolsKey).toString().trimmed();
    // Settings edited by hand may hold anything: offered only when it checks out.
    auto t = parsedTools(text);
    return t.ok() && !t->empty() ? QString::fromStdString(workbench::dump_json(*t)) : QString();
}

ToolOffer ToolsDialog::offer(bool answeringCalls) {
    ToolOffer out;
    out.json = offeredTools();
    out.required = !out.json.isEmpty() && !answeringCalls && QSettings().value(kRequireKey, false).toBool();
    return out;
}

int ToolsDialog::offeredCount() {
    const QString tools = offeredTools();
    if (tools.isEmpty()) return 0;
    auto t = workbench::parse_json(tools.toStdString());
    return t.ok() ? static_cast<int>(t->size()) : 0;
}

QString ToolsDialog::exampleTools() {
    return QStringLiteral(R"([
  {
    "type": "function",
    "function": {
      "name": "get_weather",
      "description": "The current weather in a city.",
      "parameters": {
        "type": "object",
        "properties": {
          "city": {"type": "string", "description": "The city, e.g. Paris"},
          "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
        },
        "required": ["city"]
      }
    }
  },
  {
    "type": "function",
    "function": {
      "name": "calculate",
      "description": "Evaluates an arithmetic expression.",
      "parameters": {
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"]
      }
    }
  }
])");
}
