// SHA-256 as 64 lowercase hex digits, of bytes or of a whole file: the provenance of a stored
// figure (which model file, which evaluation text it came from). OpenSSL's libcrypto computes it
// (common/digest.h streams it for callers inside the engine).
#pragma once

#include <string>
#include <string_view>

#include "workbench/status.h"

namespace workbench {

std::string sha256_hex(std::string_view data);
// Errors: not_found (cannot open), io_error (read error); both name the file.
Result<std::string> file_sha256(const std::string& path);

}  // namespace workbench
