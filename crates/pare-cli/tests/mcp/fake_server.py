#!/usr/bin/env python3
"""A tiny stand-in MCP server over stdio for the faults a real server will not produce on
demand. Plain Python, no dependencies.

    fake_server.py MODE

Modes:
  ok       answers initialize, tools/list (tools `data` and `text`), tools/call, and any
           other method with {"echo": METHOD}; before answering `foo/unknown` it sends a
           notification of an unknown method. `test/never` is never answered;
           `test/die` makes it exit with status 3.
  garbage  like ok, but writes junk lines (not JSON, JSON that is not JSON-RPC) before
           every answer.
  exit     like ok, but exits with status 3 on the first tools/call, without answering.
  big      like ok; `data` returns a JSON text of about FAKE_BYTES bytes (env), streamed, with
           the id last (JS SDK order) or, with FAKE_ID_FIRST=1, first (Python SDK order).
  Also in every mode: `test/surrogate` is answered with a lone surrogate escape
  ({"name": "a\\ud800b"}, as json.dumps writes it), `test/bad_utf8` with a byte that is not
  UTF-8; `test/junk_big` gets a 10 MB line that is JSON but not JSON-RPC before its answer;
  `test/crash_big` gets the first 18 MB of a reply, then the server exits mid-line;
  `test/twice` is answered twice (`{"echo": "first"}`, then `{"echo": "second"}`).
  orphan   like ok, but starts a child (`sleep`), writes "SERVER_PID CHILD_PID" to a file in
           the directory FAKE_PIDS (env), and does not exit when its stdin closes.
  stubborn like orphan, and it and its child ignore SIGTERM.
  escape   like ok, but starts a child in a session of its own (out of the server's process
           group) that holds the server's stderr, and writes "SERVER_PID CHILD_PID" likewise.

`data` with `"raw": true` adds a `structuredContent` with an integer beyond a double and a
`\u00e9` escape. In every mode the tools `file` and `read_text_file` (which takes a `path`, ignored) return
the text of the file FAKE_FILE (env) as it is, and `search` returns N semantic-search hits
(`results[]` with `chunk_id`, `hybrid_score`, `chunk_text`, … as examples/policies/search.toml
maps them). `test/calls` answers with every tools/call received so far: name and arguments.
"""
import json
import os
import signal
import subprocess
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
TOOLS = [
    {"name": "data", "description": "JSON rows", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    {"name": "text", "description": "plain text", "inputSchema": {"type": "object"}},
    {"name": "file", "description": "the text of FAKE_FILE", "inputSchema": {"type": "object"}},
    {"name": "read_text_file", "description": "the text of a file",
     "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                     "properties": {"path": {"type": "string"}}, "required": ["path"],
                     "additionalProperties": False}},
    {"name": "search", "description": "semantic search", "inputSchema": {"type": "object", "properties": {
        "query": {"type": "string"}, "n": {"type": "integer"}}}},
]
CALLS = []


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def rows(n):
    return {"rows": [{"id": i, "name": f"row {i}", "note": None, "tags": [], "score": i * 0.5} for i in range(n)]}


def search_hits(n):
    """Hits of falling score; every fourth chunk is long (over search.toml's 2000 characters)."""
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    results = []
    for i in range(n):
        lines = [f"def handler_{i}(request):"] + [
            f"    step_{j} = {words[(i + j) % 10]}(request, {j})  # {words[j % 10]} {words[(j * 3) % 10]}"
            for j in range(80 if i % 4 == 0 else 5)]
        results.append({"chunk_id": 1000 + i, "hybrid_score": round(0.95 - i * 0.03, 3),
                        "chunk_text": "\n".join(lines), "source_file": f"src/mod_{i % 4}/file_{i}.py",
                        "context_header": f"file_{i}.py > handler_{i}", "score_type": "hybrid",
                        "source_category": "code", "chunk_index": i % 3, "total_chunks": 3})
    return {"results": results, "total_found": n * 3}


def send_big(rid, size):
    """A `data` result whose text is about `size` bytes of JSON rows, written in pieces (the
    server never holds it whole), with the id at the end as the JS SDK writes it (or first,
    as the Python SDK does, with FAKE_ID_FIRST)."""
    out = sys.stdout
    if os.environ.get("FAKE_ID_FIRST"):
        out.write('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"{\\"rows\\":[' % json.dumps(rid))
    else:
        out.write('{"result":{"content":[{"type":"text","text":"{\\"rows\\":[')
    row = '{\\"id\\":%d,\\"name\\":\\"' + "x" * 40 + '\\",\\"kind\\":\\"record\\",\\"note\\":null}'
    n = max(1, size // 80)
    for start in range(0, n, 10000):
        out.write(",".join(row % i for i in range(start, min(n, start + 10000))))
        if start + 10000 < n:
            out.write(",")
    if os.environ.get("FAKE_ID_FIRST"):
        out.write(']}"}]}}\n')
    else:
        out.write(']}"}]},"jsonrpc":"2.0","id":%s}\n' % json.dumps(rid))
    out.flush()


def answer(msg):
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        return {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        if MODE == "exit":
            sys.exit(3)
        name, args = msg["params"]["name"], msg["params"].get("arguments") or {}
        CALLS.append({"name": name, "arguments": args})
        if name == "search":
            return {"content": [{"type": "text", "text": json.dumps(search_hits(args.get("n", 20)))}]}
        if name in ("file", "read_text_file"):
            with open(os.environ["FAKE_FILE"], encoding="utf-8") as f:
                return {"content": [{"type": "text", "text": f.read()}]}
        if name == "data":
            if MODE == "big":
                send_big(rid, int(os.environ.get("FAKE_BYTES", "100000")))
                return None
            text = json.dumps(rows(args.get("n", 3)), indent=2)
            result = {"content": [{"type": "text", "text": text}], "_meta": {"server": "kept"},
                      "arguments_seen": args}
            if args.get("raw"):
                # What a tree of the message would write otherwise: an integer beyond a
                # double, a `\u00e9` escape (json.dumps escapes non-ASCII by default).
                result["structuredContent"] = {"big": 123456789012345678901234567890, "s": "café"}
            return result
        return {"content": [{"type": "text", "text": "not JSON: {oops"}]}
    if method == "test/calls":
        return {"calls": CALLS}
    if method == "test/never":
        return None  # a request left open: pare's drain waits for it
    if method == "test/surrogate":
        return {"name": "a\ud800b"}
    if method == "test/bad_utf8":
        sys.stdout.flush()
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":%s,"result":{"name":"a\xffb"}}\n' % json.dumps(rid).encode())
        sys.stdout.buffer.flush()
        return None
    if method == "test/junk_big":
        sys.stdout.write('{"data":"' + "x" * 10_000_000 + '"}\n')
    if method == "test/crash_big":
        sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' % json.dumps(rid))
        sys.stdout.write("y" * 18_000_000)
        sys.stdout.flush()
        os._exit(3)
    if method == "test/never":
        return None  # never answered
    if method == "test/die":
        sys.exit(3)
    if method == "test/twice":
        # A faulty server: the same request answered twice.
        send({"jsonrpc": "2.0", "id": rid, "result": {"echo": "first"}})
        return {"echo": "second"}
    if method == "foo/unknown":
        send({"jsonrpc": "2.0", "method": "notifications/foo_unknown", "params": {"x": 1}})
    return {"echo": method}


def start_child():
    if MODE == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the child inherits it
    child = subprocess.Popen(["sleep", "1000"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             start_new_session=(MODE == "escape"))
    path = os.path.join(os.environ["FAKE_PIDS"], "pids-%d" % os.getpid())
    with open(path + ".tmp", "w") as f:
        f.write("%d %d" % (os.getpid(), child.pid))
    os.rename(path + ".tmp", path)


if MODE in ("orphan", "stubborn", "escape"):
    start_child()

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue  # notifications and responses
    if MODE == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.write('{"not": "json-rpc"}\n')
    result = answer(msg)
    if result is not None:
        send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

if MODE in ("orphan", "stubborn"):
    while True:  # ignores the end of its input
        time.sleep(1000)
