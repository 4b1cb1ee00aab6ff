// A fake OpenAI-compatible server for the remote tests: cpp-httplib on a free loopback port,
// listening on a thread of its own once its routes are set. Routes go on `http` before start().
#pragma once

#include <string>
#include <thread>

#include <httplib.h>

namespace wbtest {

class LoopbackHttp {
public:
    httplib::Server http;
    void start() {
        port_ = http.bind_to_any_port("127.0.0.1");
        thread_ = std::thread([this] { http.listen_after_bind(); });
    }
    ~LoopbackHttp() {
        http.stop();
        if (thread_.joinable()) thread_.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

private:
    std::thread thread_;
    int port_ = 0;
};

}  // namespace wbtest
