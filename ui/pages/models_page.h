// The Models page: what the loaded model is (file, architecture, shapes, tokenizer, template,
// tensor types, the configuration it runs with) or why the last load failed, and a button to
// open another GGUF. The recent list and drag-and-drop come later.
#pragma once

#include <QWidget>

#include "ui/bridge/engine_types.h"

class QLabel;
class QPushButton;
class QTextBrowser;

class ModelsPage : public QWidget {
    Q_OBJECT
public:
    explicit ModelsPage(QWidget* parent = nullptr);

    void showLoading(const QString& path);
    void showModel(const workbench::ModelInfo& info);
    void showError(const QString& path, const QString& message);
    QString detailsText() const;

signals:
    void openModelRequested();

private:
    QLabel* m_title = nullptr;
    QTextBrowser* m_details = nullptr;
    QPushButton* m_open = nullptr;
};
