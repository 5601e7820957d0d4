#!/usr/bin/env python3
"""Added latency of `pare mcp` per tool call: the memory server's `read_graph` (about
100 KB of text) called directly and through pare, p50 and p99 over N calls each.

    bench/mcp_latency.py PARE_BINARY [N] [ENTITIES]

Needs node and @modelcontextprotocol/server-memory under $PARE_MCP_PEERS
(default /tmp/pare-mcp-peers; .ci/run installs it). Plain JSON-RPC over pipes, so the
client adds the same small cost to both sides; a third row calls the same server through
`pare mcp --listen` over HTTP (stdlib http.client, one kept-alive connection).
"""
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS = os.environ.get("PARE_MCP_PEERS", "/tmp/pare-mcp-peers")
SERVER = ["node", f"{PEERS}/node_modules/@modelcontextprotocol/server-memory/dist/index.js"]


def stdio_rpc(cmd, env):
    """A JSON-RPC caller over the process's stdio, and how to stop it."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def rpc(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        p.stdin.flush()
        while True:
            msg = json.loads(p.stdout.readline())
            if msg.get("id") == i:
                return msg

    def notify(line):
        p.stdin.write(line + b"\n")
        p.stdin.flush()

    def stop():
        p.stdin.close()
        p.wait()

    return rpc, notify, stop


def http_rpc(cmd, env):
    """A JSON-RPC caller over `pare mcp --listen` (streamable HTTP, one kept-alive
    connection, SSE replies), and how to stop it."""
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, env=env)
    addr = None
    while addr is None:
        line = p.stderr.readline().decode()
        if "listening on http://" in line:
            addr = line.split("http://")[1].split("/")[0]
    host, port = addr.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port))
    session = {}

    def post(body):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if "id" in session:
            headers["Mcp-Session-Id"] = session["id"]
        conn.request("POST", "/mcp", body=body, headers=headers)
        r = conn.getresponse()
        session.setdefault("id", r.getheader("Mcp-Session-Id"))
        return r.read().decode()

    def rpc(i, method, params):
        body = post(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}))
        for line in body.splitlines():
            if line.startswith("data: "):
                msg = json.loads(line[6:])
                if msg.get("id") == i:
                    return msg
        raise RuntimeError(f"no response to {method}: {body[:200]}")

    def notify(line):
        post(line.decode())

    def stop():
        conn.close()
        p.terminate()
        p.wait()

    return rpc, notify, stop


def run(caller, cmd, env, n):
    rpc, notify, stop = caller(cmd, env)
    rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
    notify(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    rpc(1, "tools/list", {})
    times, size = [], 0
    for i in range(n + 5):
        t = time.perf_counter()
        r = rpc(10 + i, "tools/call", {"name": "read_graph", "arguments": {}})
        if i >= 5:  # warm-up calls are not counted
            times.append(time.perf_counter() - t)
        size = len(r["result"]["content"][0]["text"])
    stop()
    times.sort()
    return times[len(times) // 2] * 1e3, times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3, size


def main():
    pare = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    entities = sys.argv[3] if len(sys.argv) > 3 else "250"
    with tempfile.TemporaryDirectory() as d:
        graph = os.path.join(d, "memory.jsonl")
        subprocess.run([sys.executable, f"{ROOT}/crates/pare-cli/tests/mcp/memory_graph.py", graph, entities], check=True)
        env = dict(os.environ, MEMORY_FILE_PATH=graph)
        d50, d99, dsize = run(stdio_rpc, SERVER, env, n)
        policy = f"{ROOT}/examples/policies/memory.toml"
        p50, p99, psize = run(stdio_rpc, [pare, "mcp", "--policy", policy, "--"] + SERVER, env, n)
        h50, h99, _ = run(http_rpc, [pare, "mcp", "--listen", "127.0.0.1:0", "--policy", policy, "--"] + SERVER, env, n)
        print(f"read_graph text: {dsize} bytes direct, {psize} bytes through pare; {n} calls each")
        print(f"direct (stdio):           p50 {d50:7.2f} ms   p99 {d99:7.2f} ms")
        print(f"through pare (stdio):     p50 {p50:7.2f} ms   p99 {p99:7.2f} ms")
        print(f"added:                    p50 {p50 - d50:7.2f} ms   p99 {p99 - d99:7.2f} ms")
        print(f"through pare --listen:    p50 {h50:7.2f} ms   p99 {h99:7.2f} ms   (HTTP client, SSE replies)")


main()
