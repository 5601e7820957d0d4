#!/usr/bin/env python3
"""What `pare mcp` saves in front of real MCP servers: the reference filesystem, memory and
everything servers, and server-postgres on a throwaway PostgreSQL (scripts/pg_fixture.sh).

    /tmp/pare-mcp-venv/bin/python bench/mcp_servers.py PARE_BINARY [--servers a,b] [--keep DIR]

Two tables, every count o200k_base by the reference counter (`scripts/peers.sh count`,
gpt-tokenizer), each text written to a file and counted as its exact bytes:

1. Tool results: the text a model reads, direct vs through pare with no configuration
   (and with a shipped example policy where one exists: examples/policies/memory.toml).
   pare runs with a budget large enough for one page, so whole results are compared.
2. tools/list: the tool definitions a client hands the model (minified JSON of the
   `tools` array as the official Python SDK received it), direct vs through pare (no
   configuration) vs pare with `[mcp] tool_list = "compact"` vs mcp-compressor 0.38.2
   (stdio proxy, `-c medium`, its default, and `-c max`). mcp-compressor replaces the list
   by wrapper tools and hands out a tool's schema on request (`<name>_get_tool_schema`);
   the last column adds what fetching every tool's schema once costs.

Needs what .ci/run installs: node, the servers in $PARE_MCP_PEERS (/tmp/pare-mcp-peers),
the `mcp` SDK (run this with /tmp/pare-mcp-venv/bin/python), PostgreSQL, gpt-tokenizer in
/tmp/pare-peers, and mcp-compressor in /tmp/pare-mcpc-venv ($MCP_COMPRESSOR).
"""
import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS = os.environ.get("PARE_MCP_PEERS", "/tmp/pare-mcp-peers") + "/node_modules/@modelcontextprotocol"
COMPRESSOR = os.environ.get("MCP_COMPRESSOR", "/tmp/pare-mcpc-venv/bin/mcp-compressor")
BIG = ["--max-tokens", "100000000", "--max-chars4", "1000000000"]

PG_DIRS = []
CONFIG = open(os.path.join(ROOT, "crates/pare-cli/tests/mcp_real.rs")).read().split('const CONFIG: &str = r#"', 1)[1].split('"#;', 1)[0]


def texts(result):
    return "".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def session(cmd, env, calls, root=None, schemas_of=None):
    """Run one client session: the tools/list (minified JSON), each call's text, and for
    mcp-compressor the schema texts of `schemas_of` tools."""
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    roots = None
    if root:
        import mcp_types as types

        async def roots(context):
            return types.ListRootsResult(roots=[types.Root(uri="file://" + root, name="root")])
    async with stdio_client(params, errlog=subprocess.DEVNULL) as (read, write):
        async with ClientSession(read, write, list_roots_callback=roots) as s:
            await s.initialize()
            tools = await s.list_tools()
            listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools]
            out = {"list": json.dumps(listed, separators=(",", ":"), ensure_ascii=False), "calls": [], "schemas": []}
            for name, arguments in calls:
                out["calls"].append(texts(await s.call_tool(name, arguments)))
            if schemas_of:
                getter = next(t.name for t in tools.tools if t.name.endswith("get_tool_schema"))
                for name in schemas_of:
                    out["schemas"].append(texts(await s.call_tool(getter, {"tool_name": name})))
            return out


def run(cmd, env=None, calls=(), root=None, schemas_of=None):
    return asyncio.run(session(cmd, env, list(calls), root, schemas_of))


class Counter:
    """Texts to files, counted in one `scripts/peers.sh count` run."""

    def __init__(self, tmp):
        self.tmp, self.files = tmp, []

    def add(self, text):
        path = os.path.join(self.tmp, f"t{len(self.files)}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        self.files.append(path)
        return len(self.files) - 1

    def count(self):
        out = subprocess.run(["bash", os.path.join(ROOT, "scripts/peers.sh"), "count", *self.files],
                             check=True, capture_output=True, text=True).stdout
        self.tokens = [json.loads(line)["tokens"] for line in out.splitlines()]

    def __getitem__(self, i):
        return self.tokens[i]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def servers(tmp, which):
    """Each server: name, command, env, roots, calls (label, tool, arguments), example policy."""
    out = []
    if "filesystem" in which:
        root = os.path.join(tmp, "fs")
        shutil.copytree(os.path.join(ROOT, "examples"), os.path.join(root, "examples"))
        with open(os.path.join(root, "service.json"), "w") as f:
            f.write(CONFIG)
        out.append(("filesystem", ["node", f"{PEERS}/server-filesystem/dist/index.js", root], None, root, [
            ("read_text_file service.json", "read_text_file", {"path": os.path.join(root, "service.json")}),
            ("directory_tree examples/", "directory_tree", {"path": os.path.join(root, "examples")}),
            ("list_directory examples/payloads", "list_directory", {"path": os.path.join(root, "examples/payloads")}),
        ], None))
    if "postgres" in which:
        pg_dir = tempfile.mkdtemp(prefix="pare-pg-")  # beside tmp: the postgres user must reach it
        PG_DIRS.append(pg_dir)
        url = subprocess.run(["bash", os.path.join(ROOT, "scripts/pg_fixture.sh"), "start", pg_dir, str(free_port())],
                             check=True, capture_output=True, text=True).stdout.strip()
        out.append(("postgres", ["node", f"{PEERS}/server-postgres/dist/index.js", url], None, None, [
            ("query 200 rows", "query", {"sql": "SELECT * FROM orders ORDER BY id LIMIT 200"}),
            ("query 2,000 rows", "query", {"sql": "SELECT * FROM orders ORDER BY id"}),
            ("query GROUP BY", "query", {"sql": "SELECT status, count(*), sum(quantity * unit_price) AS revenue FROM orders GROUP BY status ORDER BY status"}),
        ], None))
    if "memory" in which:
        graph = os.path.join(tmp, "graph.jsonl")
        subprocess.run([sys.executable, os.path.join(ROOT, "crates/pare-cli/tests/mcp/memory_graph.py"), graph, "400", "7"], check=True)
        out.append(("memory", ["node", f"{PEERS}/server-memory/dist/index.js"], {"MEMORY_FILE_PATH": graph}, None, [
            ("read_graph (400 entities)", "read_graph", {}),
            ("search_nodes", "search_nodes", {"query": "a"}),
        ], os.path.join(ROOT, "examples/policies/memory.toml")))
    if "everything" in which:
        out.append(("everything", ["node", f"{PEERS}/server-everything/dist/index.js"], None, None, [
            ("get-env", "get-env", {}),
            ("get-structured-content", "get-structured-content", {"location": "Chicago"}),
        ], None))
    return out


def pct(before, after):
    """The share of tokens saved (negative: that much more)."""
    return f"{100 * (before - after) / before:.1f}%" if before else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pare")
    ap.add_argument("--servers", default="filesystem,postgres,memory,everything")
    ap.add_argument("--keep", help="write every counted text under this directory")
    a = ap.parse_args()
    pare = os.path.abspath(a.pare)
    which = a.servers.split(",")
    tmp = a.keep or tempfile.mkdtemp(prefix="pare-mcp-servers-")
    os.makedirs(tmp, exist_ok=True)
    compact = os.path.join(tmp, "compact.toml")
    with open(compact, "w") as f:
        f.write('[mcp]\ntool_list = "compact"\n')
    c = Counter(tmp)
    rows, lists = [], []
    try:
        for name, cmd, env, root, calls, policy in servers(tmp, which):
            call_list = [(tool, args) for _, tool, args in calls]
            direct = run(cmd, env, call_list, root)
            zero = run([pare, "mcp", *BIG, "--", *cmd], env, call_list, root)
            pol = run([pare, "mcp", *BIG, "--policy", policy, "--", *cmd], env, call_list, root) if policy else None
            comp = run([pare, "mcp", "--policy", compact, "--", *cmd], env, [], root)
            tool_names = [t["name"] for t in json.loads(direct["list"])]
            mcpc = run([COMPRESSOR, "-c", "medium", "--", *cmd], env, [], root, schemas_of=tool_names)
            mcpc_max = run([COMPRESSOR, "-c", "max", "--", *cmd], env, [], root)
            for i, (label, _, _) in enumerate(calls):
                rows.append((name, label, c.add(direct["calls"][i]), c.add(zero["calls"][i]),
                             c.add(pol["calls"][i]) if pol else None))
            lists.append((name, len(tool_names), c.add(direct["list"]), c.add(zero["list"]), c.add(comp["list"]),
                          c.add(mcpc["list"]), c.add(mcpc_max["list"]), c.add("".join(mcpc["schemas"]))))
    finally:
        for pg_dir in PG_DIRS:
            subprocess.run(["bash", os.path.join(ROOT, "scripts/pg_fixture.sh"), "stop", pg_dir])
            shutil.rmtree(pg_dir, ignore_errors=True)
    c.count()

    print("Tool results (o200k tokens, scripts/peers.sh count; pare with no config, one page)\n")
    print("| server | call | direct | pare | saved | pare + example policy | saved |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, label, d, z, p in rows:
        pol = f"{c[p]} | {pct(c[d], c[p])}" if p is not None else "- | -"
        print(f"| {name} | {label} | {c[d]} | {c[z]} | {pct(c[d], c[z])} | {pol} |")
    print("\ntools/list (o200k tokens of the tools array, minified JSON as the client got it)\n")
    print("| server | tools | direct | pare | pare compact | mcp-compressor medium | mcp-compressor max | + every schema (medium) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, n, d, z, k, m, mx, sch in lists:
        print(f"| {name} | {n} | {c[d]} | {c[z]} | {c[k]} ({pct(c[d], c[k])}) | {c[m]} | {c[mx]} | {c[m] + c[sch]} |")
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
