// SHA-256 for provenance (which model file, which evaluation text a stored figure came from),
// computed by OpenSSL's libcrypto. Streaming, so a multi-GB model hashes in constant memory.
// The one-shot forms (sha256_hex, file_sha256) are public in workbench/digest.h.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

struct evp_md_ctx_st;

namespace workbench {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(const void* data, size_t n);
    std::string finish_hex();   // 64 lowercase hex digits; the object is spent afterwards

private:
    evp_md_ctx_st* ctx_;
};

}  // namespace workbench
