#!/usr/bin/env python3
"""Added latency of `pare mcp` per tool call: the memory server's `read_graph` (about
120 KB of text) called directly and through pare, p50 and p99 over N calls each.

    bench/mcp_latency.py PARE_BINARY [N] [ENTITIES] [--before OTHER_BINARY] [--runs R] [--changing]

First it checks what it times: the text through pare expands (`pare expand`) to exactly the
server's JSON, `_meta.pare.tokensBefore` and `tokensAfter` are the reference counts of the
server's text and of the texts sent (gpt-tokenizer, `scripts/peers.sh count`, when
/tmp/pare-peers has it; else `pare count`, and it says so), and, with `--before`, the two
binaries send the client the same bytes. Then it times R runs (`--runs R`, default 3), each
calling the server directly and through pare (and, with `--before`, through the other
binary) in turn; it prints each run's p50s and ratio, and rows of the medians over the runs
(p50 and p99 each) with the median of the runs' ratios. With `--changing`, before each call (untimed) one entity
gets one more observation (`add_observations`), so every `read_graph` differs from the last
in one line, as when an agent adds a fact and reads the graph again; without it every call
returns the same text, which pare has counted before.

Needs node and @modelcontextprotocol/server-memory under $PARE_MCP_PEERS
(default /tmp/pare-mcp-peers; .ci/run installs it). Plain JSON-RPC over pipes, so the
client adds the same small cost to both sides; a further row calls the same server through
`pare mcp --listen` over HTTP (stdlib http.client, one kept-alive connection).
"""
import argparse
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
TOKEN_PEERS = os.environ.get("PEERS_DIR", "/tmp/pare-peers")
SERVER = ["node", f"{PEERS}/node_modules/@modelcontextprotocol/server-memory/dist/index.js"]
CALL = {"name": "read_graph", "arguments": {}}


def stdio_rpc(cmd, env):
    """A JSON-RPC caller over the process's stdio (returning the parsed reply and its raw
    line), and how to stop it."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def rpc(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            msg = json.loads(line)
            if msg.get("id") == i:
                return msg, line

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
                    return msg, line[6:].encode()
        raise RuntimeError(f"no response to {method}: {body[:200]}")

    def notify(line):
        post(line.decode())

    def stop():
        conn.close()
        p.terminate()
        p.wait()

    return rpc, notify, stop


def session(caller, cmd, env):
    rpc, notify, stop = caller(cmd, env)
    rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
    notify(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    rpc(1, "tools/list", {})
    return rpc, stop


def run(caller, cmd, env, n, names=None):
    """p50 and p99 in ms of `n` calls (after 5 not counted); with `names`, each call after
    one more observation (untimed) on the next of these entities."""
    rpc, stop = session(caller, cmd, env)
    times = []
    for i in range(n + 5):
        if names:
            fact = {"entityName": names[i % len(names)], "contents": [f"Bench note {time.time_ns()}."]}
            rpc(100000 + i, "tools/call", {"name": "add_observations", "arguments": {"observations": [fact]}})
        t = time.perf_counter()
        rpc(10 + i, "tools/call", CALL)
        if i >= 5:  # warm-up calls are not counted
            times.append(time.perf_counter() - t)
    stop()
    times.sort()
    return times[len(times) // 2] * 1e3, times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def one_reply(cmd, env):
    """One `read_graph` reply: the parsed message and the raw line."""
    rpc, stop = session(stdio_rpc, cmd, env)
    reply = rpc(10, "tools/call", CALL)
    stop()
    return reply


def counter(pare):
    """Reference token counts of texts, and what gave them."""
    if os.path.isdir(f"{TOKEN_PEERS}/node_modules/gpt-tokenizer"):
        def count(texts):
            return [json.loads(l)["tokens"] for l in peers_count(texts)]
        return count, "gpt-tokenizer (scripts/peers.sh count)"

    def count(texts):
        return [pare_count(pare, t) for t in texts]
    return count, "pare count (gpt-tokenizer not in $PEERS_DIR)"


def peers_count(texts):
    with tempfile.TemporaryDirectory() as d:
        files = []
        for i, t in enumerate(texts):
            files.append(os.path.join(d, f"{i}.txt"))
            with open(files[-1], "w", encoding="utf-8") as f:
                f.write(t)
        env = dict(os.environ, PEERS_DIR=TOKEN_PEERS)
        out = subprocess.run([f"{ROOT}/scripts/peers.sh", "count"] + files, env=env, check=True, capture_output=True, text=True)
        return out.stdout.splitlines()


def pare_count(pare, text):
    out = subprocess.run([pare, "count", "--json", "-"], input=text.encode(), check=True, capture_output=True)
    return json.loads(out.stdout)["total"]


def comparable(msg):
    """A reply without what builds from before 988dcc0 sent and later ones do not: the
    structuredContent that repeats the text, and the line saying so."""
    result = dict(msg["result"])
    result.pop("structuredContent", None)
    meta = dict(result["_meta"]["pare"])
    meta.pop("structuredContent", None)
    result["_meta"] = {**result["_meta"], "pare": meta}
    return {**msg, "result": result}


def check(pare, before, policy, env):
    """Exit non-zero unless pare's reply is right and exactly counted (and, with a baseline,
    the same as the baseline's but for the structuredContent it no longer repeats)."""
    direct, _ = one_reply(SERVER, env)
    server_text = direct["result"]["content"][0]["text"]
    replies = {}
    for name, binary in [("pare", pare)] + ([("before", before)] if before else []):
        replies[name] = one_reply([binary, "mcp", "--policy", policy, "--"] + SERVER, env)
    msg, line = replies["pare"]
    result = msg["result"]
    texts = [c["text"] for c in result["content"] if c.get("type") == "text"]
    expanded = subprocess.run([pare, "expand"], input=texts[0].encode(), check=True, capture_output=True).stdout
    problems = []
    if json.loads(expanded) != json.loads(server_text):
        problems.append("the text through pare does not expand to the server's JSON")
    # The graph again as structuredContent is the text's value: sent once, as the text.
    fate = result["_meta"]["pare"].get("structuredContent", "")
    if "structuredContent" in result or not fate.startswith("dropped"):
        if result.get("structuredContent") != direct["result"].get("structuredContent"):
            problems.append("structuredContent changed")
    count, by = counter(pare)
    ref = count([server_text] + texts)
    meta = result["_meta"]["pare"]
    if meta.get("tokensBefore") != ref[0]:
        problems.append(f"tokensBefore {meta.get('tokensBefore')} != {ref[0]} by {by}")
    if meta.get("tokensAfter") != sum(ref[1:]):
        problems.append(f"tokensAfter {meta.get('tokensAfter')} != {sum(ref[1:])} by {by}")
    if before and comparable(replies["before"][0]) != comparable(msg):
        problems.append("the two binaries' replies differ")
    if problems:
        sys.exit("bench/mcp_latency.py: " + "; ".join(problems))
    same = ", the same reply from both binaries (but the repeated structuredContent)" if before else ""
    print(f"checked: expands to the server's JSON, tokensBefore {ref[0]} and tokensAfter "
          f"{sum(ref[1:])} exact by {by}{same}")
    return len(server_text), len(texts[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pare")
    ap.add_argument("n", nargs="?", type=int, default=200, help="calls per row (200)")
    ap.add_argument("entities", nargs="?", default="250", help="entities in the graph (250)")
    ap.add_argument("--before", help="another pare binary to check against and time in the same run")
    ap.add_argument("--runs", type=int, default=3, help="runs; each row is the median of the runs' (3)")
    ap.add_argument("--changing", action="store_true",
                    help="one more observation on one entity before each call (untimed)")
    args = ap.parse_args()
    n, runs = args.n, args.runs
    with tempfile.TemporaryDirectory() as d:
        graph = os.path.join(d, "memory.jsonl")

        def fresh_graph():
            subprocess.run([sys.executable, f"{ROOT}/crates/pare-cli/tests/mcp/memory_graph.py", graph, args.entities], check=True)

        fresh_graph()
        env = dict(os.environ, MEMORY_FILE_PATH=graph)
        policy = f"{ROOT}/examples/policies/memory.toml"
        dsize, psize = check(args.pare, args.before, policy, env)
        names = None
        if args.changing:
            with open(graph) as f:
                names = [e["name"] for e in map(json.loads, f) if e.get("type") == "entity"]
        load = os.getloadavg()
        binaries = [("", args.pare)] + ([(" before", args.before)] if args.before else [])
        sides = [("direct (stdio):", SERVER)] + [
            (f"through pare{label} (stdio):", [binary, "mcp", "--policy", policy, "--"] + SERVER)
            for label, binary in binaries
        ]
        # The sides take turns within each run, so a slow spell of this machine falls on
        # all of them; each run's ratio is between two rows timed minutes apart at most.
        runs_rows = []
        def timed(cmd):
            # `--changing` grows the graph: each side starts from the same one.
            if names:
                fresh_graph()
            return run(stdio_rpc, cmd, env, n, names)

        for _ in range(runs):
            runs_rows.append([timed(cmd) for _, cmd in sides])
        changing = ", one observation more before each call" if names else ""
        print(f"read_graph text: {dsize} bytes direct, {psize} bytes through pare; {n} calls per run, "
              f"{runs} run(s){changing}; load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        for r, row in enumerate(runs_rows, 1):
            ratios = "   ".join(f"{p50 / row[0][0]:.2f}x" for p50, _ in row[1:])
            print(f"run {r}: p50 " + " / ".join(f"{p50:.2f}" for p50, _ in row) + f" ms   through pare / direct: {ratios}")
        rows = [(name, (median([r[i][0] for r in runs_rows]), median([r[i][1] for r in runs_rows])))
                for i, (name, _) in enumerate(sides)]
        print(f"median of the {runs} run(s):")
        (d50, d99) = rows[0][1]
        for name, (p50, p99) in rows:
            print(f"{name:32} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms")
        for (name, (p50, p99)), (label, _) in zip(rows[1:], binaries):
            print(f"{'added' + label + ':':32} p50 {p50 - d50:+7.2f} ms   p99 {p99 - d99:+7.2f} ms")
        for i, (label, _) in enumerate(binaries, 1):
            ratio = median([r[i][0] / r[0][0] for r in runs_rows])
            print(f"{'through pare' + label + ' / direct:':32} p50 {ratio:7.2f}x  (the median of the runs' ratios)")
        if args.before:
            (a50, a99), (b50, b99) = rows[1][1], rows[2][1]
            print(f"{'added, before/after:':32} p50 {(b50 - d50) / max(a50 - d50, 1e-9):7.2f}×    "
                  f"p99 {(b99 - d99) / max(a99 - d99, 1e-9):7.2f}×")
        if names:
            fresh_graph()
        h50, h99 = run(http_rpc, [args.pare, "mcp", "--listen", "127.0.0.1:0", "--policy", policy, "--"] + SERVER, env, n, names)
        print(f"{'through pare --listen:':32} p50 {h50:7.2f} ms   p99 {h99:7.2f} ms   (HTTP client, SSE replies)")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
