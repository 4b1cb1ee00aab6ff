#!/usr/bin/env python3
"""The hostile-client cases against `workbench-cli serve`, in one go, on loopback:
slow headers (more tricklers than --max-connections), a header flood, an abandoned whole
request, SIGTERM with streams running, and keep-alive request latency. Prints what each saw.

  bench/serve_attacks.py [WORKBENCH_CLI] [MODEL]

Starts its own server on a free port (standard library only; nothing leaves 127.0.0.1).
Exit status 1 when a case shows the old failure (a hang, a 200 to a flood, a cut stream).
"""
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin", "workbench-cli")
MODEL = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
failures = []


def start(*extra):
    proc = subprocess.Popen([CLI, "serve", "--port", "0", "-m", MODEL, *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = 0
    for line in proc.stdout:
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
        if "serve: ready:" in line:
            break
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    return proc, port


def connect(port, timeout=15):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_all(s):
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    return out


def status(resp):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", resp)
    return int(m.group(1)) if m else 0


def request(method, path, body=b"", extra=b""):
    head = b"%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s" % (method.encode(), path.encode(), extra)
    if body or method == "POST":
        head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    return head + b"\r\n" + body


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def slow_headers(port, n_clients):
    answers = [b""] * n_clients

    def trickle(i):
        s = connect(port)
        head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
        s.settimeout(0.3)
        for k in range(200):
            try:
                s.sendall(head[k:k + 1] if k < len(head) else b"a")
                answers[i] = s.recv(65536)
                break
            except socket.timeout:
                continue
            except OSError:
                break
        s.settimeout(15)
        answers[i] += read_all(s)
        s.close()

    threads = [threading.Thread(target=trickle, args=(i,)) for i in range(n_clients)]
    t0 = time.time()
    for t in threads:
        t.start()
    time.sleep(1)
    s = connect(port, 5)
    t1 = time.time()
    s.sendall(request("GET", "/health"))
    health = read_all(s)
    s.close()
    check(status(health) in (200, 503) and time.time() - t1 < 2, f"slow headers: /health answered {status(health)} in {time.time() - t1:.2f} s while {n_clients} clients trickle")
    for t in threads:
        t.join()
    codes = sorted(set(status(a) for a in answers))
    check(all(status(a) in (408, 503) for a in answers), f"slow headers: tricklers got {codes} within {time.time() - t0:.1f} s")


def header_flood(port):
    many = b"".join(b"X-H%d: v\r\n" % i for i in range(60000))
    s = connect(port)
    try:
        s.sendall(request("GET", "/health", extra=many))
    except OSError:
        pass
    resp = read_all(s)
    s.close()
    check(status(resp) == 431, f"header flood ({len(many) >> 10} KiB of headers): {status(resp)}")


def metrics(port):
    s = connect(port)
    s.sendall(request("GET", "/metrics", extra=b"Connection: close\r\n"))
    text = read_all(s).decode(errors="replace")
    s.close()
    m = re.search(r"workbench:num_requests_running\{[^}]*\} (\S+)", text)
    return float(m.group(1)) if m else -1


def abandoned(port):
    s = connect(port)
    s.sendall(request("POST", "/v1/completions", b'{"prompt": "Tell a long story.", "max_tokens": 8000, "ignore_eos": true}'))
    time.sleep(1)
    running_before = metrics(port)
    s.close()
    t0 = time.time()
    while metrics(port) != 0 and time.time() - t0 < 30:
        time.sleep(0.1)
    check(running_before == 1 and metrics(port) == 0, f"abandoned request: cancelled {time.time() - t0:.2f} s after its client left")


def keep_alive_latency(port):
    s = connect(port)
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        s.sendall(request("GET", "/v1/models"))
        got = b""
        while b"\r\n\r\n" not in got or not got.rstrip().endswith(b"}"):
            got += s.recv(65536)
        times.append((time.perf_counter() - t0) * 1000)
    s.close()
    check(statistics.median(times) < 10, f"keep-alive: median {statistics.median(times):.2f} ms over 20 requests on one connection")


def sigterm_streams(n_streams):
    proc, port = start("--shutdown-grace", "1")
    body = b'{"prompt": "Write a very long story.", "max_tokens": 4000, "ignore_eos": true, "stream": true}'
    socks = [connect(port, 30) for _ in range(n_streams)]
    for s in socks:
        s.sendall(request("POST", "/v1/completions", body))
    for s in socks:
        s.recv(1)
    outs = [b""] * n_streams
    threads = [threading.Thread(target=lambda i=i: outs.__setitem__(i, read_all(socks[i]))) for i in range(n_streams)]
    for t in threads:
        t.start()
    t0 = time.time()
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(30)
    for t in threads:
        t.join()
    whole = sum(1 for o in outs if b"shutting_down" in o and b"data: [DONE]" in o and o.endswith(b"0\r\n\r\n"))
    check(rc == 0 and whole == n_streams, f"SIGTERM: exit {rc} after {time.time() - t0:.2f} s; {whole}/{n_streams} streams ended with an error event, [DONE] and the last chunk")


def main():
    proc, port = start("--max-connections", "16", "--header-timeout", "3")
    try:
        slow_headers(port, 40)
        header_flood(port)
        abandoned(port)
        keep_alive_latency(port)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    sigterm_streams(16)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
