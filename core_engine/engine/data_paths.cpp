// Where the default model and the shipped evaluation and calibration texts are looked for, and
// what to tell a user who has no model.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "workbench/calibration.h"
#include "workbench/engine.h"

namespace workbench {

std::string user_models_dir() {
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/inference-workbench/models";
    if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.local/share/inference-workbench/models";
    return {};
}

std::string find_default_model() {
    if (const char* env = std::getenv("WORKBENCH_MODEL"); env && *env) return env;
    const std::string file = std::filesystem::path(WB_DEFAULT_MODEL_PATH).filename().string();
    std::error_code ec;
    // The source tree's models/ (bootstrap.sh), then the user's data folder (the GUI's fetch),
    // then the installed package's share folder.
    for (const std::string& candidate : {std::string(WB_DEFAULT_MODEL_PATH), user_models_dir() + "/" + file,
                                         std::string("/usr/share/inference-workbench/models/") + file})
        if (!candidate.empty() && candidate.front() == '/' && std::filesystem::exists(candidate, ec)) return candidate;
    return {};
}

std::string default_model_hint() {
    return std::string("The default model (SmolLM2-135M-Instruct Q4_1) was not found in ") + WB_DEFAULT_MODEL_PATH + " or " +
           user_models_dir() + ": run installer/fetch_model.sh " + user_models_dir() +
           " (or installer/bootstrap.sh in the source tree) to fetch it, set $WORKBENCH_MODEL, or pass -m PATH.";
}

std::string default_eval_text_path() {
    std::error_code ec;
    return std::filesystem::exists(WB_EVAL_TEXT_FILE, ec) ? std::string(WB_EVAL_TEXT_FILE)
                                                           : std::string("/usr/share/inference-workbench/eval/alice_wonderland.txt");
}

std::string default_calibration_text_path() {
    std::error_code ec;
    return std::filesystem::exists(WB_CALIBRATION_TEXT, ec) ? std::string(WB_CALIBRATION_TEXT)
                                                             : std::string("/usr/share/inference-workbench/eval/paradise_lost.txt");
}

}  // namespace workbench
