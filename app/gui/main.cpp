// `workbench`: the desktop GUI. Opens on the default model (or -m/--model PATH, or the model of a
// -c/--config FILE in the CLI's EngineConfig JSON); without one it says how to get it and offers
// File → Open. `--smoke` checks the install through the same window (app/gui/smoke_run.h).
// Everything else lives in ui/.
#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QTemporaryDir>
#include <cstdio>
#include <optional>

#include "smoke_run.h"
#include "ui/main_window.h"
#include "ui/pages/chat_page.h"
#include "ui/pages/config_panel.h"
#include "workbench/backends.h"
#include "workbench/config.h"
#include "workbench/engine.h"

int main(int argc, char** argv) {
    // Before QApplication: QSettings and the history must never see the user's files in a smoke run.
    QTemporaryDir smokeState;
    const bool smokeRun = smoke::requested(argc, argv);
    if (smokeRun) smoke::isolateUserState(smokeState);
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
    const QCommandLineOption config({QStringLiteral("c"), QStringLiteral("config")},
                         QStringLiteral("Load-time settings as EngineConfig JSON (the CLI's --config schema); "
                                        "-m overrides its model_path."),
                         QStringLiteral("FILE"));
    parser.addOption(config);
    const QCommandLineOption smokeOption(QStringLiteral("smoke"),
                                         QStringLiteral("Check the install: load the model, generate a few tokens "
                                                        "through the window, print one line and exit (0: it works)."));
    parser.addOption(smokeOption);
    parser.process(app);

    QString modelPath = parser.value(model);
    std::optional<workbench::EngineConfig> fromFile;
    if (parser.isSet(config)) {
        QFile file(parser.value(config));
        if (!file.open(QIODevice::ReadOnly)) {
            std::fprintf(stderr, "workbench: cannot read %s: %s\n", qPrintable(file.fileName()), qPrintable(file.errorString()));
            return 2;
        }
        auto parsed = workbench::engine_config_from_json(file.readAll().toStdString());
        if (!parsed.ok()) {
            std::fprintf(stderr, "workbench: %s: %s\n", qPrintable(file.fileName()), parsed.status().message().c_str());
            return 2;
        }
        // A configuration for a backend this machine cannot run is refused, never run on the CPU.
        if (const workbench::Status backend = workbench::check_backend_available(parsed->backend); !backend.ok()) {
            std::fprintf(stderr, "workbench: %s: %s\n", qPrintable(file.fileName()), backend.message().c_str());
            return 2;
        }
        fromFile = *parsed;
        if (modelPath.isEmpty()) modelPath = QString::fromStdString(parsed->model_path);
    }
    MainWindow window;
    // The form takes the file's settings (over the saved ones); the load below uses them.
    if (fromFile) window.chatPage()->configPanel()->setEngineConfig(*fromFile);
    window.show();
    if (smokeRun) smoke::start(window, modelPath);
    else window.startWithModel(modelPath);
    return app.exec();
}
