// One accepted connection's life, under limits cpp-httplib 0.11 does not enforce: a deadline for
// a request's headers and body however slowly they trickle, caps on header lines and bytes,
// requests pipelined in one segment answered in order, TCP_NODELAY, a shutdown that closes idle
// and half-sent connections at once, and a drain before closing after an error so the client
// reads the status instead of a reset. httplib still parses and routes: GuardedStream is the
// Stream it reads from, and ConnectionLoop replaces its per-connection keep-alive loop.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <httplib.h>

namespace wbserver {

struct ConnectionLimits {
    int header_timeout_s = 10;          // request line + headers, from their first byte
    int body_deadline_s = 30;           // a whole body
    int read_timeout_s = 10;            // any one silence
    int write_timeout_s = 10;
    int keep_alive_s = 5;               // idle between requests
    size_t keep_alive_max = 1000;       // requests on one connection
    size_t max_header_bytes = 64 << 10; // request line and headers together
    int32_t max_header_lines = 100;     // header fields (the request line not counted)
    size_t max_header_line = 8191;      // one field's bytes before its LF (httplib's own limit: 8192 with CRLF)
};

// Why a connection stopped reading a request.
enum class ReadAbort { none, header_deadline, header_too_large, body_deadline, shutting_down };

class GuardedStream final : public httplib::Stream {
public:
    GuardedStream(int sock, const ConnectionLimits& limits, const std::atomic<bool>& stopping);

    bool is_readable() const override;
    bool is_writable() const override;
    ssize_t read(char* ptr, size_t size) override;
    ssize_t write(const char* ptr, size_t size) override;
    void get_remote_ip_and_port(std::string& ip, int& port) const override;
    void get_local_ip_and_port(std::string& ip, int& port) const override;
    int socket() const override { return sock_; }

    // Waits (in short slices, giving up when the server stops) for the next request's first
    // byte, buffered or on the socket; false when the connection went idle, closed or the server stops.
    bool wait_for_request();
    void begin_request();     // header limits and deadline start now
    void body_read();         // the handler has the whole body: the body deadline ends
    bool has_buffered() const { return off_ < len_; }
    ReadAbort abort() const { return abort_; }
    size_t written_in_request() const { return written_; }
    // Whether the client has closed its side (or the connection broke): a whole answer being
    // computed for it would go nowhere. (A client that only half-closed counts as gone here.)
    bool peer_gone() const;

private:
    enum class Phase { headers, body, answer };
    int sock_;
    const ConnectionLimits& limits_;
    const std::atomic<bool>& stopping_;
    Phase phase_ = Phase::headers;
    ReadAbort abort_ = ReadAbort::none;
    std::chrono::steady_clock::time_point deadline_{};
    size_t header_bytes_ = 0, line_bytes_ = 0, written_ = 0;
    int32_t header_lines_ = 0;
    uint32_t tail_ = 0;           // the last bytes of the headers read, to see their end
    char buf_[4096];
    size_t off_ = 0, len_ = 0;

    bool wait_readable();
    // Counts header bytes handed to httplib; false (abort set) past a limit.
    bool account(const char* data, size_t n);
};

// The connection this thread is serving, for handlers that need more than httplib's Request.
struct Connection {
    GuardedStream& stream;
    bool close_after = false;     // answer this request, then close (after a drain)
};
Connection* current_connection();

// Serves requests on `sock` until it closes, goes idle, hits a limit or the server stops, then
// closes it. `process` is httplib's process_request; `error_body` the JSON of an error answered
// here (a request line that broke a limit, before httplib could answer).
struct ConnectionHooks {
    std::function<bool(httplib::Stream&, bool close_connection, bool& connection_closed)> process;
    std::function<std::string(int status)> error_body;
};
void serve_connection(int sock, const ConnectionLimits& limits, const std::atomic<bool>& stopping, const ConnectionHooks& hooks);

// A connection past --max-connections: a 503 with Retry-After written at once (the request
// unread), then closed after a short drain.
void refuse_connection(int sock, const std::string& json_body);

// The plain HTTP text of an error response (status line, JSON body, Connection: close).
std::string raw_error_response(int status, const std::string& json_body, const std::string& extra_headers = "");

}  // namespace wbserver
