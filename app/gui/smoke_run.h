// `workbench --smoke`: answers "does my install work?" through the real main window. It loads the
// model as the window would, sends one short greedy message through the chat page, and when the
// reply is in the transcript prints one line (model, tokens, tok/s, the Qt platform) and quits
// with 0; a load or reply failure, no model, or no reply in time prints what happened and quits
// with 1. The user's settings and history are not touched: main() points both at a temporary
// folder before the window exists (isolateUserState).
#pragma once

#include <QString>

class MainWindow;
class QTemporaryDir;

namespace smoke {

// True when argv holds --smoke (read before QApplication exists: the isolation must come first).
bool requested(int argc, char** argv);
// Points QSettings and the session database at `dir` for this process.
void isolateUserState(const QTemporaryDir& dir);
// Starts the run on `window` (already shown); the application quits with the outcome.
void start(MainWindow& window, const QString& modelPath);

}  // namespace smoke
