// Status and Result<T>: how every engine call reports failure. No exception crosses the engine
// API; a failed call returns a Status whose message names the file, the item, what was found and
// what was expected, so the UI and CLI can show it as is.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace workbench {

enum class StatusCode {
    ok = 0,
    invalid_argument,   // a bad flag, value or request field
    not_found,          // a missing file, key or tensor
    invalid_file,       // a corrupt or truncated file
    unsupported,        // a well-formed input the engine cannot handle (arch, dtype, template)
    out_of_range,       // context full, token id past the vocabulary
    resource_exhausted, // memory or KV budget
    io_error,           // read/write/mmap failures
    cancelled,          // the caller asked to stop
    unavailable,        // busy now (the conversation, the loop's options): try again later
    internal,           // a broken invariant: a bug
};

class [[nodiscard]] Status {
public:
    Status() = default;
    Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status ok_status() { return {}; }

    bool ok() const { return code_ == StatusCode::ok; }
    StatusCode code() const { return code_; }
    const std::string& message() const { return message_; }

    // Prefixes context ("model.gguf: ") to an error; ok stays ok.
    Status with_context(const std::string& prefix) const {
        if (ok()) return *this;
        return {code_, prefix + message_};
    }

private:
    StatusCode code_ = StatusCode::ok;
    std::string message_;
};

inline Status error(StatusCode code, std::string message) { return {code, std::move(message)}; }

// Holds either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : data_(std::move(value)) {}
    Result(Status status) : data_(std::move(status)) { assert(!std::get<Status>(data_).ok()); }

    bool ok() const { return std::holds_alternative<T>(data_); }
    const Status& status() const {
        static const Status ok_value;
        return ok() ? ok_value : std::get<Status>(data_);
    }
    T& value() & { return std::get<T>(data_); }
    const T& value() const& { return std::get<T>(data_); }
    T&& value() && { return std::get<T>(std::move(data_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

private:
    std::variant<T, Status> data_;
};

}  // namespace workbench

// Early-return helpers for code that returns Status or Result<T>.
#define WB_RETURN_IF_ERROR(expr)                           \
    do {                                                   \
        ::workbench::Status wb_status_ = (expr);           \
        if (!wb_status_.ok()) return wb_status_;           \
    } while (0)

#define WB_CONCAT_INNER(a, b) a##b
#define WB_CONCAT(a, b) WB_CONCAT_INNER(a, b)
#define WB_ASSIGN_OR_RETURN(lhs, expr) WB_ASSIGN_OR_RETURN_IMPL(WB_CONCAT(wb_result_, __LINE__), lhs, expr)
#define WB_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
    auto tmp = (expr);                           \
    if (!tmp.ok()) return tmp.status();          \
    lhs = std::move(tmp).value()
