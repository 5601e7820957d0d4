#!/usr/bin/env python3
"""The faults issue 30 names, each run against `pare http` in front of a raw-socket upstream
that misbehaves on purpose; one line per fault with what a client saw.

    bench/http_faults.py [--pare target/release/pare] [--idle 3]

Run it with the binary before and after a change to get the before/after table. The short
timeouts (`--idle`, passed as --upstream-idle-timeout and --client-body-timeout) keep the run
short; the defaults are 60 s. The regression tests are crates/pare-cli/tests/http_faults.rs.
"""
import argparse
import socket
import subprocess
import threading
import time
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Upstream:
    """A raw HTTP/1.1 upstream: each path is a fault. Notes when connections arrive."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted = []  # times connections arrived
        self.seen = []  # request heads
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            c, _ = self.sock.accept()
            self.accepted.append(time.monotonic())
            threading.Thread(target=self.one, args=(c,), daemon=True).start()

    def one(self, c):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = c.recv(65536)
            if not chunk:
                return
            data += chunk
        head = data.split(b"\r\n\r\n")[0].decode("latin-1")
        self.seen.append(head)
        path = head.split(" ")[1]
        up = f"http://127.0.0.1:{self.port}"
        if path.startswith("/stall"):
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 5000)
            time.sleep(3600)
        elif path.startswith("/clte"):
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\nb\r\nhello world\r\n0\r\n\r\n")
        elif path.startswith("/redirect"):
            c.sendall((f"HTTP/1.1 302 Found\r\nLocation: {up}/next\r\n"
                       f"Content-Location: {up}/here\r\nLink: <{up}/page2>; rel=\"next\"\r\n"
                       "Content-Length: 0\r\n\r\n").encode())
        else:
            # Echo the head back, after the body (Content-Length) is read.
            length = 0
            for line in head.split("\r\n"):
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":")[1])
            body = data.split(b"\r\n\r\n", 1)[1]
            while len(body) < length:
                chunk = c.recv(65536)
                if not chunk:
                    break
                body += chunk
            out = head.encode()
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(out) + out)
        c.close()


def wait_for(port):
    """Until something listens on `port` (5 s at most)."""
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return
        except OSError:
            time.sleep(0.05)


def raw(port, request: bytes, timeout=120, trickle=None):
    """Send `request` (then `trickle` pieces one per second); what came back and when the
    connection ended (seconds)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(timeout)
    start = time.monotonic()
    s.sendall(request)
    for piece in trickle or []:
        time.sleep(1)
        try:
            s.sendall(piece)
        except OSError:
            break
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    return got, time.monotonic() - start


def status(got: bytes) -> str:
    return got.split(b"\r\n", 1)[0].decode("latin-1") if got else "(nothing)"


def body_of(got: bytes) -> bytes:
    return got.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in got else b""


def header(got: bytes, name: str) -> str:
    for line in got.split(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        k, _, v = line.decode("latin-1").partition(":")
        if k.lower() == name:
            return v.strip()
    return "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pare", default=str(ROOT / "target/release/pare"))
    ap.add_argument("--idle", type=int, default=3)
    args = ap.parse_args()
    up = Upstream()
    port = free_port()
    policy = ROOT / "examples/policies/http.toml"
    flags = []
    help_text = subprocess.run([args.pare, "http", "--help"], capture_output=True, text=True).stdout
    for flag in ("--upstream-idle-timeout", "--client-body-timeout"):
        if flag in help_text:
            flags += [flag, str(args.idle)]
    proc = subprocess.Popen([args.pare, "http", "--upstream", f"http://127.0.0.1:{up.port}", "--policy", str(policy),
                             "--listen", str(port), "--quiet", *flags], stderr=subprocess.PIPE)
    wait_for(port)
    host = f"Host: 127.0.0.1:{port}\r\n"
    try:
        got, took = raw(port, f"GET /stall HTTP/1.1\r\n{host}\r\n".encode(), timeout=30)
        body = len(got.split(b"\r\n\r\n", 1)[1]) if b"\r\n\r\n" in got else 0
        print(f"upstream stalls after 5 KB: {status(got)}, {body} body bytes, connection ended after "
              f"{took:.1f} s{' (client gave up at 30 s)' if took >= 29.9 else ''}")

        before = len(up.accepted)
        t0 = time.monotonic()
        got, took = raw(port, f"POST /echo HTTP/1.1\r\n{host}Content-Length: 6\r\nConnection: close\r\n\r\n".encode(),
                        trickle=[b"a", b"b", b"c", b"d", b"e", b"f"])
        first = next((t - t0 for t in up.accepted[before:]), None)
        print(f"a client trickles a 6-byte body over 6 s: {status(got)} after {took:.1f} s; the upstream was "
              f"connected {'at %.1f s' % first if first is not None else 'never'}")

        got, took = raw(port, f"POST /echo HTTP/1.1\r\n{host}Content-Length: 6\r\nConnection: close\r\n\r\nab".encode(),
                        timeout=30)
        print(f"a client sends 2 of 6 body bytes and stops: {status(got)} after {took:.1f} s")

        got, _ = raw(port, f"GET /clte HTTP/1.1\r\n{host}Connection: close\r\n\r\n".encode())
        print(f"Content-Length: 3 with Transfer-Encoding: chunked from the upstream: {status(got)}, "
              f"{'chunked' if header(got, 'transfer-encoding') == 'chunked' else 'length ' + header(got, 'content-length')},"
              f" body {body_of(got)[:40]!r}")

        got, _ = raw(port, f"GET /echo HTTP/1.1\r\n{host}X-Big: {'a' * 100_000}\r\nConnection: close\r\n\r\n".encode())
        print(f"one 100,000-byte header: {status(got)}")

        got, _ = raw(port, f"OPTIONS * HTTP/1.1\r\n{host}Connection: close\r\n\r\n".encode())
        print(f"OPTIONS *: {status(got)} {body_of(got)[:80]!r}")

        got, _ = raw(port, f"GET /echo HTTP/1.1\r\n{host}X-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Proto: https\r\n"
                           "Connection: close\r\n\r\n".encode())
        seen = up.seen[-1]
        xff = [l for l in seen.split("\r\n") if l.lower().startswith(("x-forwarded-for", "x-forwarded-proto"))]
        print(f"a client's X-Forwarded-For: 6.6.6.6 and -Proto: https reach the upstream as: {'; '.join(xff)}")

        got, _ = raw(port, f"GET /redirect HTTP/1.1\r\n{host}Connection: close\r\n\r\n".encode())
        print(f"upstream (port {up.port}) Location/Content-Location/Link via pare (port {port}): "
              f"{header(got, 'location')} | "
              f"{header(got, 'content-location')} | {header(got, 'link')}")

        # The upstream gone: what does the error body say?
        dead = free_port()
        port2 = free_port()
        proc2 = subprocess.Popen([args.pare, "http", "--upstream", f"http://10.0.0.1:{dead}", "--policy", str(policy),
                                  "--listen", str(port2), "--quiet", "--connect-timeout", "1"], stderr=subprocess.PIPE)
        wait_for(port2)
        got, _ = raw(port2, f"GET /x HTTP/1.1\r\nHost: 127.0.0.1:{port2}\r\nConnection: close\r\n\r\n".encode())
        proc2.kill()
        print(f"upstream unreachable: {status(got)} {body_of(got)[:120]!r}")
    finally:
        proc.kill()


if __name__ == "__main__":
    main()
