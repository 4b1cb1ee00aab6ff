// `workbench-cli serve` as a test's child process on a free loopback port, and the plain HTTP
// pieces the server tests share: raw exchanges on a socket (for requests no client library
// would send) and /metrics values.
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>

#include <httplib.h>

#include "workbench/engine.h"

namespace wbtest {

class ServeProcess {
public:
    ~ServeProcess() { stop(); }
    // Starts the server and waits for its ready line (or only its listening line); false (with
    // the output in `log`) if not.
    bool start(const QStringList& extra_args, int timeout_ms = 60000, bool wait_until_ready = true) {
        QStringList args = {"serve", "--port", "0", "-m", QStringLiteral(WB_DEFAULT_MODEL_PATH)};
        args += extra_args;
        process_.setProcessChannelMode(QProcess::SeparateChannels);
        process_.setProcessEnvironment(environment);
        process_.start(QStringLiteral(WB_CLI_PATH), args);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        while (std::chrono::steady_clock::now() < deadline) {
            process_.waitForReadyRead(100);
            log += process_.readAllStandardOutput().toStdString();
            log += process_.readAllStandardError().toStdString();
            std::smatch m;
            if (port == 0 && std::regex_search(log, m, std::regex("listening on http://127\\.0\\.0\\.1:([0-9]+)"))) port = std::stoi(m[1]);
            if (!wait_until_ready && port > 0) return true;
            if (log.find("serve: ready:") != std::string::npos) return port > 0;
            if (process_.state() == QProcess::NotRunning) return false;
        }
        return false;
    }
    // SIGTERM, then the exit code (-1: it had to be killed or crashed).
    int stop() {
        if (process_.state() == QProcess::NotRunning) return process_.exitStatus() == QProcess::NormalExit ? process_.exitCode() : -1;
        process_.terminate();
        if (!process_.waitForFinished(20000)) {
            process_.kill();
            process_.waitForFinished();
            return -1;
        }
        log += process_.readAll().toStdString();
        return process_.exitStatus() == QProcess::NormalExit ? process_.exitCode() : -1;
    }
    bool running() const { return process_.state() == QProcess::Running; }
    // The base URL a client is given: "http://127.0.0.1:PORT/v1".
    QString baseUrl() const { return QStringLiteral("http://127.0.0.1:%1/v1").arg(port); }
    httplib::Client client(int timeout_s = 120) const {
        httplib::Client c("127.0.0.1", port);
        c.set_read_timeout(timeout_s, 0);
        c.set_connection_timeout(5, 0);
        return c;
    }

    int port = 0;
    std::string log;
    // The server's environment (set before start): e.g. WORKBENCH_API_KEY, as the Server page passes a key.
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();

private:
    QProcess process_;
};

// The default model in this process, to compare the server's answers with (null if it fails to load).
inline std::unique_ptr<workbench::Engine> load_default_engine() {
    workbench::EngineConfig config;
    config.model_path = WB_DEFAULT_MODEL_PATH;
    auto engine = workbench::Engine::load(config);
    return engine.ok() ? std::move(engine).value() : nullptr;
}

// A connected loopback socket (-1 on failure), with receive/send timeouts.
inline int connect_loopback(int port, int timeout_ms = 10000) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

inline bool send_all(int fd, const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return false;
        sent += static_cast<size_t>(n);
    }
    return true;
}

// Reads until the peer closes, `stop_after` appears, or the socket's timeout passes.
inline std::string receive(int fd, const std::string& stop_after = "") {
    std::string got;
    char buf[8192];
    for (;;) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
        if (!stop_after.empty() && got.find(stop_after) != std::string::npos) break;
    }
    return got;
}

// Sends `bytes` on a fresh connection and reads the answer: its head, and its body when a
// Content-Length gives it ("" when no connection could be made).
inline std::string round_trip(int port, const std::string& bytes, int timeout_ms = 8000) {
    const int fd = connect_loopback(port, timeout_ms);
    if (fd < 0) return "";
    send_all(fd, bytes);
    std::string got = receive(fd, "\r\n\r\n");
    const size_t head_end = got.find("\r\n\r\n");
    const size_t length_at = got.find("Content-Length: ");
    if (head_end != std::string::npos && length_at != std::string::npos && length_at < head_end) {
        const size_t want = head_end + 4 + std::stoul(got.substr(length_at + 16));
        char buf[8192];
        while (got.size() < want) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            got.append(buf, static_cast<size_t>(n));
        }
    }
    ::close(fd);
    return got;
}

// The status code of a raw response ("HTTP/1.1 404 Not Found" → 404), 0 when there is none.
inline int status_of(const std::string& response) {
    std::smatch m;
    if (std::regex_search(response, m, std::regex("^HTTP/1\\.[01] ([0-9]{3})"))) return std::stoi(m[1]);
    return 0;
}

// One value from /metrics text: the first sample of `name` (labels ignored); NaN when absent.
inline double metric(const std::string& text, const std::string& name) {
    const std::regex re("(^|\n)" + std::regex_replace(name, std::regex(":"), ":") + "\\{[^}]*\\} ([^\n]+)");
    std::smatch m;
    if (!std::regex_search(text, m, re)) return std::nan("");
    return std::stod(m[2]);
}

}  // namespace wbtest
