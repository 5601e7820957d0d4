#!/usr/bin/env python3
"""Pages through every door, checked by the reference counter: each corpus payload at each
budget and format, through `pare compact --budget` walking every `--cursor`, and through
`pare mcp` walking every `pare_more`.

    bench/pages_check.py PARE_BINARY [--budgets 300,500,1000,3000,8000] [--formats json,auto]
                         [--no-mcp]

For every page: its o200k_base tokens by the reference counter (`scripts/peers.sh
count`, gpt-tokenizer) plus the tokens of its note (the CLI's, and the proxy's) must be
within the budget, and so must its chars/4 estimate; it must `pare expand` alone; the pages, merged by the rule the records
describe (objects by key, arrays concatenated, a `continues` item or string joined to the
part before it), must equal the unpaged output expanded; and `pare mcp` must return the same
page texts, byte for byte. Prints one row per payload × format × budget, and exits 1 if any
check fails.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS = os.path.join(ROOT, "scripts", "peers.sh")
FAKE = os.path.join(ROOT, "crates", "pare-cli", "tests", "mcp", "fake_server.py")
PAYLOADS = os.path.join(ROOT, "examples", "payloads")
POLICIES = os.path.join(ROOT, "examples", "policies")

CORPUS = [
    ("vendor_graph_full.json", None),
    ("entities_systems.json", "entities.toml"),
    ("narrative_day.json", "narrative.toml"),
    ("search_memory.json", "meta_relations.toml"),
    ("website_usage.json", "website_usage.toml"),
]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw)


def cli_pages(pare, payload, policy, fmt, level, budget, tmp):
    """Every page and its report, following the cursors."""
    pages, cursor = [], None
    report = os.path.join(tmp, "report.json")
    while True:
        cmd = [pare, "compact", payload, "--format", fmt, "--level", level,
               "--budget", str(budget), "--report-json", report]
        if policy:
            cmd += ["--policy", policy]
        if cursor:
            cmd += ["--cursor", cursor]
        out = run(cmd).stdout
        with open(report) as f:
            rec = json.load(f)
        pages.append((out[:-1], rec))
        cursor = rec["next_cursor"]
        if not cursor:
            return pages


def reference_counts(texts, tmp):
    files = []
    for i, t in enumerate(texts):
        p = os.path.join(tmp, f"count{i}.txt")
        with open(p, "w", encoding="utf-8") as f:
            f.write(t)
        files.append(p)
    out = run(["bash", PEERS, "count", *files]).stdout
    return [json.loads(line)["tokens"] for line in out.splitlines()]


def expand(pare, text, tmp):
    p = os.path.join(tmp, "page.txt")
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)
    return json.loads(run([pare, "expand", p]).stdout)


def pointer_steps(ptr):
    if ptr == "":
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in ptr[1:].split("/")]


def merge_into(acc, page, cont):
    """The documented merge rule; `cont` is the rest of the continued pointer or None."""
    if isinstance(acc, dict) and isinstance(page, dict):
        head, rest = (cont[0], cont[1:]) if cont else (None, None)
        for k, v in page.items():
            if k in acc:
                acc[k] = merge_into(acc[k], v, rest if k == head else None)
            else:
                acc[k] = v
        return acc
    if isinstance(acc, list) and isinstance(page, list):
        items = list(page)
        if cont is not None and len(cont) > 0 and items:
            acc[-1] = merge_into(acc[-1], items.pop(0), cont[1:])
        acc.extend(items)
        return acc
    if isinstance(acc, str) and isinstance(page, str) and cont == []:
        return acc + page
    raise ValueError(f"cannot merge {type(page).__name__} into {type(acc).__name__}")


def sort_keys(v):
    if isinstance(v, dict):
        return {k: sort_keys(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [sort_keys(x) for x in v]
    return v


class Mcp:
    """`pare mcp` in front of the stand-in server's `file` tool, spoken to over pipes."""

    def __init__(self, pare, payload, policy, fmt, budget, tmp):
        # The proxy takes its format from the policy file's [mcp] section: a small file that
        # names the payload's policy for the `file` tool, in this format.
        wrapper = os.path.join(tmp, "mcp.toml")
        with open(wrapper, "w") as f:
            if policy:
                f.write(f'[mcp]\nformat = "{fmt}"\n[[mcp.tools]]\nmatch = ["file"]\n'
                        f'policy = {json.dumps(policy)}\n')
            else:
                # No policy: the CLI's built-in default (prune), as the file's own ops.
                f.write(f'[mcp]\nformat = "{fmt}"\n[[ops]]\nop = "prune"\n')
        args = [pare, "mcp", "--max-tokens", str(budget), "--max-chars4", str(budget),
                "--policy", wrapper, "--", sys.executable, FAKE, "ok"]
        env = dict(os.environ, FAKE_FILE=payload)
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, text=True)
        self.id = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "pages_check", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.rpc("tools/list", {})

    def rpc(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.id:
                return msg

    def pages(self, level):
        """(page text, note) of every page."""
        r = self.rpc("tools/call", {"name": "file", "arguments": {"detail": level}})
        pages = []
        while True:
            res = r["result"]
            content = res["content"]
            pages.append((content[0]["text"], content[1]["text"] if len(content) > 1 else ""))
            cursor = res["_meta"]["pare"].get("nextCursor")
            if not cursor:
                return pages
            r = self.rpc("tools/call", {"name": "pare_more", "arguments": {"cursor": cursor}})

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    pare = os.path.abspath(args[0])
    budgets = [300, 500, 1000, 3000, 8000]
    formats = ["json", "auto"]
    mcp = "--no-mcp" not in args
    if "--budgets" in args:
        budgets = [int(b) for b in args[args.index("--budgets") + 1].split(",")]
    if "--formats" in args:
        formats = args[args.index("--formats") + 1].split(",")
    failed = 0
    print("| payload | format | budget | pages | max page tokens (ref) | max note | max chars/4, note included "
          "| all ≤ budget | decode alone | merge = whole | MCP identical |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, pol in CORPUS:
            payload = os.path.join(PAYLOADS, name)
            policy = os.path.join(POLICIES, pol) if pol else None
            # A named level is paged, never lowered: every page is of one value.
            level = "standard" if pol else "full"
            if pol == "meta_relations.toml":
                level = "standard"
            for fmt in formats:
                whole_cmd = [pare, "compact", payload, "--format", fmt, "--level", level]
                if policy:
                    whole_cmd += ["--policy", policy]
                whole_text = run(whole_cmd).stdout[:-1]
                whole = expand(pare, whole_text, tmp)
                for budget in budgets:
                    pages = cli_pages(pare, payload, policy, fmt, level, budget, tmp)
                    texts = [t for t, _ in pages]
                    # What a door sends is the page and its note: the CLI's note (stderr),
                    # and the proxy's (a second text item), each within the budget.
                    with_notes = [(t, rec["note"] or "") for t, rec in pages]
                    same = "—"
                    if mcp:
                        m = Mcp(pare, payload, policy, fmt, budget, tmp)
                        try:
                            through = m.pages(level)
                        finally:
                            m.close()
                        same = "yes" if [t for t, _ in through] == texts else "NO"
                        with_notes += through
                    counts = reference_counts([t for t, _ in with_notes], tmp)
                    note_counts = reference_counts([n for _, n in with_notes], tmp)
                    c4 = [math.ceil(len(t) / 4) + math.ceil(len(n) / 4) for t, n in with_notes]
                    within = all(c + nc <= budget for c, nc in zip(counts, note_counts)) and max(c4) <= budget
                    merged, decoded = None, True
                    try:
                        for text, rec in pages:
                            v = expand(pare, text, tmp)
                            cont = rec.get("continues")
                            merged = v if merged is None else merge_into(
                                merged, v, None if cont is None else pointer_steps(cont))
                    except (subprocess.CalledProcessError, ValueError):
                        decoded = False
                    equal = decoded and (sort_keys(merged) == sort_keys(whole) if fmt == "toon"
                                         else merged == whole)
                    ok = within and decoded and equal and same in ("yes", "—")
                    failed += not ok
                    print(f"| {name} | {fmt} | {budget} | {len(pages)} | {max(counts)} | "
                          f"{max(note_counts)} | {max(c4)} | {'yes' if within else 'NO'} | "
                          f"{'yes' if decoded else 'NO'} | {'yes' if equal else 'NO'} | {same} |",
                          flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
