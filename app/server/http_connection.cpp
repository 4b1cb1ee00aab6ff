// The guarded connection: every wait is cut into short slices so a deadline or the server's stop
// is noticed within a tenth of a second, and the bytes httplib reads are counted until the blank
// line that ends a request's headers.
#include "http_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace wbserver {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kSlice{100};
thread_local Connection* t_connection = nullptr;

// Polls `sock` for `events` at most `wait`; the revents, 0 on timeout, -1 on error.
int poll_for(int sock, short events, milliseconds wait) {
    pollfd p{sock, events, 0};
    for (;;) {
        const int r = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, wait.count())));
        if (r < 0 && errno == EINTR) continue;
        return r <= 0 ? r : p.revents;
    }
}

milliseconds until(Clock::time_point t) { return std::chrono::duration_cast<milliseconds>(t - Clock::now()); }

const char* reason_phrase(int status) {
    switch (status) {
        case 400: return "Bad Request";
        case 408: return "Request Timeout";
        case 413: return "Payload Too Large";
        case 414: return "URI Too Long";
        case 431: return "Request Header Fields Too Large";
        case 503: return "Service Unavailable";
        default: return "Error";
    }
}

// Reads and drops what the client still sends, for at most `wait` or `max_bytes`, after our
// side is shut for writing: closing a socket with unread input sends a reset, which can destroy
// the answer before the client reads it.
void drain_and_close(int sock, milliseconds wait, size_t max_bytes) {
    ::shutdown(sock, SHUT_WR);
    const auto end = Clock::now() + wait;
    char scratch[16384];
    size_t dropped = 0;
    while (dropped < max_bytes) {
        const milliseconds left = until(end);
        if (left.count() <= 0 || poll_for(sock, POLLIN, left) <= 0) break;
        const ssize_t n = ::recv(sock, scratch, sizeof scratch, MSG_DONTWAIT);
        if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) break;
        if (n > 0) dropped += static_cast<size_t>(n);
    }
    ::close(sock);
}

bool send_all(int sock, const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
        if (poll_for(sock, POLLOUT, milliseconds(1000)) <= 0) return false;
        const ssize_t n = ::send(sock, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return false;
        sent += static_cast<size_t>(n);
    }
    return true;
}

void set_no_delay(int sock) {
    // A response's head and body leave in separate writes; without this, Nagle holds the second
    // until the client's delayed ACK (tens of ms on every kept-alive request).
    int yes = 1;
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
}

void address_of(int sock, bool peer, std::string& ip, int& port) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const int r = peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len)
                       : ::getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len);
    if (r != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
        ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
        port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
        ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
        port = ntohs(a->sin6_port);
    }
    ip = text;
}

}  // namespace

GuardedStream::GuardedStream(int sock, const ConnectionLimits& limits, const std::atomic<bool>& stopping)
    : sock_(sock), limits_(limits), stopping_(stopping) {}

bool GuardedStream::wait_for_request() {
    if (has_buffered()) return true;   // pipelined: the next request already arrived
    const auto idle_end = Clock::now() + std::chrono::seconds(limits_.keep_alive_s);
    while (!stopping_) {
        const milliseconds left = until(idle_end);
        if (left.count() <= 0) return false;
        const int r = poll_for(sock_, POLLIN, std::min(left, kSlice));
        if (r != 0) return r > 0;
    }
    return false;
}

void GuardedStream::begin_request() {
    phase_ = Phase::headers;
    abort_ = ReadAbort::none;
    deadline_ = Clock::now() + std::chrono::seconds(limits_.header_timeout_s);
    header_bytes_ = line_bytes_ = written_ = 0;
    header_lines_ = 0;
    tail_ = 0;
}

void GuardedStream::body_read() { phase_ = Phase::answer; }

bool GuardedStream::wait_readable() {
    if (has_buffered()) return true;
    // While a request is being read, a silence, its deadline or the server's stop ends it with
    // a status (408 / 503); between requests and while answering, a silence only closes.
    const ReadAbort late = phase_ == Phase::headers ? ReadAbort::header_deadline : ReadAbort::body_deadline;
    const auto silent_end = Clock::now() + std::chrono::seconds(limits_.read_timeout_s);
    for (;;) {
        milliseconds left = until(silent_end);
        if (phase_ != Phase::answer) {
            if (stopping_) return (abort_ = ReadAbort::shutting_down, false);
            left = std::min(left, until(deadline_));
            if (left.count() <= 0) return (abort_ = late, false);
        } else if (left.count() <= 0) {
            return false;
        }
        const int r = poll_for(sock_, POLLIN, std::min(left, kSlice));
        if (r != 0) return r > 0;
    }
}

bool GuardedStream::account(const char* data, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const char c = data[i];
        if (++header_bytes_ > limits_.max_header_bytes) return (abort_ = ReadAbort::header_too_large, false);
        if (c == '\n') {
            // A line that is only CRLF, after the request line, ends the headers (httplib's rule).
            const bool blank = header_lines_ > 0 && line_bytes_ == 1 && (tail_ & 0xff) == '\r';
            ++header_lines_;
            line_bytes_ = 0;
            if (blank) {
                phase_ = Phase::body;
                deadline_ = Clock::now() + std::chrono::seconds(limits_.body_deadline_s);
                return true;
            }
            if (header_lines_ - 1 > limits_.max_header_lines) return (abort_ = ReadAbort::header_too_large, false);
        } else if (++line_bytes_ > limits_.max_header_line && header_lines_ > 0) {
            return (abort_ = ReadAbort::header_too_large, false);
        }
        tail_ = (tail_ << 8) | static_cast<unsigned char>(c);
    }
    return true;
}

ssize_t GuardedStream::read(char* ptr, size_t size) {
    if (abort_ != ReadAbort::none) return -1;
    if (!has_buffered()) {
        if (!wait_readable()) return -1;
        const ssize_t n = ::recv(sock_, buf_, sizeof buf_, 0);
        if (n <= 0) return n;
        off_ = 0;
        len_ = static_cast<size_t>(n);
    }
    size_t n = std::min(size, len_ - off_);
    if (phase_ == Phase::headers) {
        // Handed out one byte at a time (httplib's line reader asks for one), so the headers'
        // end is never passed with body bytes counted as headers.
        n = std::min<size_t>(n, 1);
        if (!account(buf_ + off_, n)) return -1;
    }
    std::copy_n(buf_ + off_, n, ptr);
    off_ += n;
    return static_cast<ssize_t>(n);
}

bool GuardedStream::is_readable() const {
    return has_buffered() || poll_for(sock_, POLLIN, std::chrono::seconds(limits_.read_timeout_s)) > 0;
}

bool GuardedStream::is_writable() const {
    // Writability only: a client that half-closed (shut its sending side) still reads the
    // answer; one that has gone makes the write itself fail.
    const int r = poll_for(sock_, POLLOUT, std::chrono::seconds(limits_.write_timeout_s));
    return r > 0 && !(r & (POLLERR | POLLNVAL));
}

bool GuardedStream::peer_gone() const {
    const int r = poll_for(sock_, POLLIN, milliseconds(0));
    if (r < 0) return true;
    if (r == 0) return false;
    if (r & (POLLERR | POLLNVAL)) return true;
    char byte;
    const ssize_t n = ::recv(sock_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

ssize_t GuardedStream::write(const char* ptr, size_t size) {
    if (!is_writable()) return -1;
    const ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    if (n > 0) written_ += static_cast<size_t>(n);
    return n;
}

void GuardedStream::get_remote_ip_and_port(std::string& ip, int& port) const { address_of(sock_, true, ip, port); }
void GuardedStream::get_local_ip_and_port(std::string& ip, int& port) const { address_of(sock_, false, ip, port); }

Connection* current_connection() { return t_connection; }

std::string raw_error_response(int status, const std::string& json_body, const std::string& extra_headers) {
    return "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(json_body.size()) + "\r\nConnection: close\r\n" +
           extra_headers + "\r\n" + json_body;
}

void serve_connection(int sock, const ConnectionLimits& limits, const std::atomic<bool>& stopping, const ConnectionHooks& hooks) {
    set_no_delay(sock);
    GuardedStream stream(sock, limits, stopping);
    Connection connection{stream};
    t_connection = &connection;
    bool drain = false;
    for (size_t left = limits.keep_alive_max; left > 0 && stream.wait_for_request(); --left) {
        stream.begin_request();
        connection.close_after = false;
        bool closed_by_client = false;
        const bool ok = hooks.process(stream, left == 1, closed_by_client);
        const ReadAbort abort = stream.abort();
        if (!ok && stream.written_in_request() == 0 && abort != ReadAbort::none) {
            // The request line itself broke a limit: httplib gave up without an answer.
            const int status = abort == ReadAbort::header_too_large ? 431 : abort == ReadAbort::shutting_down ? 503 : 408;
            send_all(sock, raw_error_response(status, hooks.error_body(status)));
            connection.close_after = true;
        }
        drain = connection.close_after && abort != ReadAbort::shutting_down;
        if (!ok || closed_by_client || connection.close_after || abort != ReadAbort::none) break;
    }
    t_connection = nullptr;
    if (drain) return drain_and_close(sock, milliseconds(1000), 1u << 20);
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
}

void refuse_connection(int sock, const std::string& json_body) {
    set_no_delay(sock);
    send_all(sock, raw_error_response(503, json_body, "Retry-After: 1\r\n"));
    drain_and_close(sock, milliseconds(250), 64u << 10);
}

}  // namespace wbserver
