// Where the tests find the real models the installer fetches (models/ in the source tree, else
// the user's models folder, as the engine looks), and a file's sha256 to tell it is the very
// file a golden was made from.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/digest.h"
#include "workbench/engine.h"

namespace wbtest {

inline std::string find_model(const std::string& file_name) {
    std::error_code ec;
    for (const std::filesystem::path& dir : {std::filesystem::path(WB_DEFAULT_MODEL_PATH).parent_path(),
                                            std::filesystem::path(workbench::user_models_dir())})
        if (std::filesystem::exists(dir / file_name, ec)) return (dir / file_name).string();
    return {};
}

inline std::string sha256_file(const std::string& path) {
    workbench::Sha256 sha;
    std::ifstream in(path, std::ios::binary);
    std::vector<char> buf(1 << 20);
    while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0)
        sha.update(reinterpret_cast<const uint8_t*>(buf.data()), static_cast<size_t>(in.gcount()));
    return sha.finish_hex();
}

}  // namespace wbtest
