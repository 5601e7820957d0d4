#!/usr/bin/env python3
"""Added latency of `pare mcp` per tool call: the memory server's `read_graph` (about
100 KB of text) called directly and through pare, p50 and p99 over N calls each.

    bench/mcp_latency.py PARE_BINARY [N] [ENTITIES]

Needs node and @modelcontextprotocol/server-memory under $PARE_MCP_PEERS
(default /tmp/pare-mcp-peers; .ci/run installs it). Plain JSON-RPC over pipes, so the
client adds the same small cost to both sides.
"""
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


def run(cmd, env, n):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def rpc(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        p.stdin.flush()
        while True:
            msg = json.loads(p.stdout.readline())
            if msg.get("id") == i:
                return msg

    rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    rpc(1, "tools/list", {})
    times, size = [], 0
    for i in range(n + 5):
        t = time.perf_counter()
        r = rpc(10 + i, "tools/call", {"name": "read_graph", "arguments": {}})
        if i >= 5:  # warm-up calls are not counted
            times.append(time.perf_counter() - t)
        size = len(r["result"]["content"][0]["text"])
    p.stdin.close()
    p.wait()
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
        d50, d99, dsize = run(SERVER, env, n)
        policy = f"{ROOT}/examples/policies/memory.toml"
        p50, p99, psize = run([pare, "mcp", "--policy", policy, "--"] + SERVER, env, n)
        print(f"read_graph text: {dsize} bytes direct, {psize} bytes through pare; {n} calls each")
        print(f"direct:      p50 {d50:7.2f} ms   p99 {d99:7.2f} ms")
        print(f"through pare p50 {p50:7.2f} ms   p99 {p99:7.2f} ms")
        print(f"added:       p50 {p50 - d50:7.2f} ms   p99 {p99 - d99:7.2f} ms")


main()
