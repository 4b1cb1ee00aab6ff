// `workbench`: the desktop GUI. Opens on the default model (or -m/--model PATH); without one it
// says how to get it and offers File → Open. Everything else lives in ui/.
#include <QApplication>
#include <QCommandLineParser>

#include "ui/main_window.h"
#include "workbench/engine.h"

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("InferenceWorkbench"));
    QApplication::setApplicationName(QStringLiteral("workbench"));
    QApplication::setApplicationVersion(QString::fromLatin1(workbench::engine_version()));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Inference Workbench: chat with a GGUF model and measure what "
                                                    "attention variants and quantizations cost."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption model({QStringLiteral("m"), QStringLiteral("model")},
                                   QStringLiteral("The GGUF model to open (default: $WORKBENCH_MODEL, else "
                                                  "models/SmolLM2-135M-Instruct.Q4_1.gguf)."),
                                   QStringLiteral("PATH"));
    parser.addOption(model);
    parser.process(app);

    MainWindow window;
    window.show();
    window.startWithModel(parser.value(model));
    return app.exec();
}
