// SHA-256 through libcrypto's EVP interface; a context that cannot be made is a bug in the
// environment (out of memory), reported by an empty digest rather than by aborting.
#include "common/digest.h"

#include <openssl/evp.h>

#include <fstream>
#include <vector>

#include "workbench/digest.h"

namespace workbench {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (ctx_ && EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
        EVP_MD_CTX_free(ctx_);
        ctx_ = nullptr;
    }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const void* data, size_t n) {
    if (ctx_ && n > 0 && EVP_DigestUpdate(ctx_, data, n) != 1) {
        EVP_MD_CTX_free(ctx_);
        ctx_ = nullptr;
    }
}

std::string Sha256::finish_hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (!ctx_ || EVP_DigestFinal_ex(ctx_, digest, &n) != 1) return {};
    static const char kHex[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(2 * n);
    for (unsigned int i = 0; i < n; ++i) {
        hex += kHex[digest[i] >> 4];
        hex += kHex[digest[i] & 15];
    }
    return hex;
}

std::string sha256_hex(std::string_view data) {
    Sha256 h;
    h.update(data.data(), data.size());
    return h.finish_hex();
}

Result<std::string> file_sha256(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(StatusCode::not_found, path + ": cannot open the file to hash it");
    Sha256 h;
    std::vector<char> buf(1 << 20);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        h.update(buf.data(), static_cast<size_t>(in.gcount()));
    }
    if (in.bad()) return error(StatusCode::io_error, path + ": read error while hashing");
    std::string hex = h.finish_hex();
    if (hex.empty()) return error(StatusCode::internal, path + ": libcrypto could not compute SHA-256");
    return hex;
}

}  // namespace workbench
