#include "ui/pages/models_page.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "ui/format.h"

namespace {

QString row(const QString& key, const QString& value) {
    return QStringLiteral("<tr><td style='color:#555; padding-right:12px'>%1</td><td>%2</td></tr>")
        .arg(key.toHtmlEscaped(), value.toHtmlEscaped());
}

QString s(const std::string& text) { return QString::fromStdString(text); }

}  // namespace

ModelsPage::ModelsPage(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout();
    m_title = new QLabel(tr("No model loaded"), this);
    QFont f = m_title->font();
    f.setPointSizeF(f.pointSizeF() * 1.3);
    f.setBold(true);
    m_title->setFont(f);
    m_open = new QPushButton(tr("Open model…"), this);
    m_open->setToolTip(tr("Load a GGUF file (Ctrl+O) with the settings of the configuration panel."));
    connect(m_open, &QPushButton::clicked, this, &ModelsPage::openModelRequested);
    m_connect = new QPushButton(tr("Connect to a server…"), this);
    m_connect->setObjectName(QStringLiteral("connectServerButton"));
    m_connect->setToolTip(tr("Chat with a remote OpenAI-compatible server (vLLM, SGLang, llama-server, workbench-cli serve)."));
    connect(m_connect, &QPushButton::clicked, this, &ModelsPage::connectServerRequested);
    top->addWidget(m_title, 1);
    top->addWidget(m_open);
    top->addWidget(m_connect);
    layout->addLayout(top);
    m_details = new QTextBrowser(this);
    m_details->setObjectName(QStringLiteral("modelDetails"));
    layout->addWidget(m_details, 3);
    auto* recentTitle = new QLabel(tr("Recent models (double-click to load; or drop a .gguf on the window)"), this);
    layout->addWidget(recentTitle);
    m_recent = new QListWidget(this);
    m_recent->setObjectName(QStringLiteral("recentList"));
    layout->addWidget(m_recent, 1);
    connect(m_recent, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        if (item->flags() & Qt::ItemIsEnabled) emit recentChosen(item->data(Qt::UserRole).toString());
    });
}

void ModelsPage::setRecent(const QStringList& paths) {
    m_recent->clear();
    for (const QString& path : paths) {
        const QFileInfo info(path);
        auto* item = new QListWidgetItem(QStringLiteral("%1 — %2").arg(info.fileName(), info.absolutePath()), m_recent);
        item->setData(Qt::UserRole, path);
        item->setToolTip(path);
        if (!info.exists()) {
            item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
            item->setToolTip(tr("%1 (no longer there)").arg(path));
        }
    }
}

void ModelsPage::showLoading(const QString& path) {
    m_title->setText(tr("Loading…"));
    m_details->setPlainText(path);
}

void ModelsPage::showModel(const workbench::ModelInfo& m) {
    m_title->setText(m.name.empty() ? s(m.path) : s(m.name));
    QString types;
    for (const auto& t : m.tensor_types)
        types += QStringLiteral("%1 × %2 (%3)  ").arg(s(t.type)).arg(t.n_tensors).arg(fmt::bytes(static_cast<double>(t.n_bytes)));
    QString html = QStringLiteral("<table>");
    html += row(tr("File"), s(m.path));
    html += row(tr("File size"), fmt::bytes(static_cast<double>(m.file_bytes)));
    html += row(tr("Architecture"), s(m.arch));
    html += row(tr("Parameters"), QStringLiteral("%1 M").arg(m.n_params / 1e6, 0, 'f', 1));
    html += row(tr("Layers / heads / KV heads / head dim"),
                QStringLiteral("%1 / %2 / %3 / %4").arg(m.n_layer).arg(m.n_head).arg(m.n_head_kv).arg(m.head_dim));
    html += row(tr("Embedding / FFN / vocabulary"), QStringLiteral("%1 / %2 / %3").arg(m.n_embd).arg(m.n_ff).arg(m.n_vocab));
    if (m.kv_lora_rank > 0 && m.mla_cache == "expanded")
        html += row(tr("Latent attention (MLA)"), tr("rank %1, cached expanded: each head's key of %2 and value of %3 values")
                                                      .arg(m.kv_lora_rank)
                                                      .arg(m.head_dim)
                                                      .arg(m.head_dim_v));
    else if (m.kv_lora_rank > 0)
        html += row(tr("Latent attention (MLA)"),
                    tr("KV rows of rank %1 + a RoPE key of %2, one per token and layer; values are the first %1%3")
                        .arg(m.kv_lora_rank)
                        .arg(m.head_dim - m.kv_lora_rank)
                        .arg(m.q_lora_rank > 0 ? tr("; queries through rank %1").arg(m.q_lora_rank) : QString()));
    if (m.n_expert > 0)
        html += row(tr("Experts"), tr("%1 per layer, %2 run per token, width %3").arg(m.n_expert).arg(m.n_expert_used).arg(m.n_ff_exp));
    html += row(tr("Context (trained / in use)"), QStringLiteral("%1 / %2").arg(m.n_ctx_train).arg(m.n_ctx));
    html += row(tr("Tokenizer"), s(m.tokenizer_model) + QStringLiteral(" (") + s(m.tokenizer_pre) + QStringLiteral(")"));
    html += row(tr("Chat template"), s(m.chat_template_family) +
                                         (m.chat_template_warning.empty() ? QString() : QStringLiteral(" — ") + s(m.chat_template_warning)));
    html += row(tr("Tensors in the file"), types);
    html += row(tr("Weights computed as"), s(m.weight_type));
    html += row(tr("Attention"), s(m.attention));
    if (const std::string pattern = workbench::native_attention_name(m.native_attention, m.n_layer); !pattern.empty()) {
        html += row(tr("Trained attention"), s(pattern));
        html += row(tr("Runs per layer"), s(m.attention_runs));
        const auto at_train = workbench::predict_kv({{}}, m.kv_types, workbench::kv_geometry(m), m.n_ctx_train);
        if (at_train.ok())
            html += row(tr("KV at the trained context"),
                        tr("%1 (every layer global: %2)").arg(fmt::bytes(static_cast<double>(at_train->bytes_held)),
                                                             fmt::bytes(static_cast<double>(at_train->bytes_full))));
    }
    html += row(tr("KV types"), s(m.kv_types));
    html += row(tr("KV per token (full attention)"), fmt::bytes(static_cast<double>(m.kv_bytes_per_token)));
    html += row(tr("KV pool"), fmt::bytes(static_cast<double>(m.kv_bytes_allocated)));
    html += row(m.n_expert > 0 ? tr("Weight bytes per decode step (active experts)") : tr("Weight bytes per decode step"),
                fmt::bytes(static_cast<double>(m.decode_weight_bytes)));
    if (m.device_weight_bytes > 0)
        html += row(tr("Device memory (%1)").arg(s(m.backend)),
                    tr("weights %1, KV %2, activations %3, workspace %4")
                        .arg(fmt::bytes(static_cast<double>(m.device_weight_bytes)), fmt::bytes(static_cast<double>(m.device_kv_bytes)),
                             fmt::bytes(static_cast<double>(m.device_activation_bytes)),
                             fmt::bytes(static_cast<double>(m.device_workspace_bytes))));
    html += row(tr("Threads"), QString::number(m.n_threads));
    html += row(tr("CPU"), s(m.cpu_features) + QStringLiteral(" — kernels: ") + s(m.cpu_kernels));
    html += row(tr("Engine"), QString::fromLatin1(workbench::engine_version()));
    html += QStringLiteral("</table>");
    m_details->setHtml(html);
}

void ModelsPage::showError(const QString& path, const QString& message) {
    m_title->setText(tr("Could not load the model"));
    m_details->setHtml(QStringLiteral("<p><b>%1</b></p><p style='color:#b02020'>%2</p>")
                           .arg(path.toHtmlEscaped(), message.toHtmlEscaped()));
}

void ModelsPage::showRemote(const QString& where, const QString& model, qint64 maxModelLen) {
    m_title->setText(tr("Remote: %1").arg(where));
    QString html = QStringLiteral("<table>");
    html += row(tr("Server"), where);
    html += row(tr("Model"), model.isEmpty() ? tr("the server's default") : model);
    html += row(tr("Context"), maxModelLen > 0 ? QString::number(maxModelLen) : tr("not reported by the server"));
    html += row(tr("Back to the local engine"), tr("File → Use local model"));
    html += QStringLiteral("</table>");
    m_details->setHtml(html);
}

QString ModelsPage::detailsText() const { return m_details->toPlainText(); }
