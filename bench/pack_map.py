#!/usr/bin/env python3
"""`pare pack DIR` (its map, issue 32) against Aider's repo map and `repomix --compress` on
whole source trees, at budgets of 1k, 2k, 4k and 8k tokens, in one run.

    bench/pack_map.sh [TREE...]        (installs Aider and Repomix, then runs this)
    AIDER_PYTHON/python bench/pack_map.py --pare PARE --repomix REPOMIX --peers PEERS TREE...

For each tree (default: Python's asyncio and the cargo registry's newest serde_json) and
budget: the output's o200k tokens by the reference counter (PEERS count), whether it is
within the budget, its recall of the tree's top-level names (Python `def`/`class` at column
0; Rust `fn`/`struct`/`enum`/`trait`/`type`/`union`/`mod`/`const`/`static`/`macro_rules!`
items at column 0, `pub` or not) — the share of those names that appear in the output as a
word — and its wall time (one run, whole process for pare and Repomix; Aider's RepoMap
driven in-process with no model, its tags cache cleared first).

- Aider: `aider.repomap.RepoMap(map_tokens=BUDGET)`, `get_repo_map([], every file)`, its
  token counts by `pare count` (o200k_base; tiktoken would download its table, and this
  machine has no network). Aider fits its map to within 15% of the budget, so it may go
  over.
- Repomix: `repomix --compress` has no budget; its output is cut to its longest prefix of
  at most BUDGET tokens (by `pare count`), which is what a caller with that budget would
  get of it.
- pare: `pare pack TREE --budget BUDGET` (the map when the budget is too small for every
  chunk's signature).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BUDGETS = [1000, 2000, 4000, 8000]
PY_TOP = re.compile(r"^(?:async\s+)?(?:def|class)\s+(\w+)", re.M)
RS_TOP = re.compile(
    r"^(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+|async\s+|const\s+|extern\s+\"[^\"]*\"\s+)*"
    r"(?:fn|struct|enum|trait|type|union|mod|const|static)\s+(\w+)"
    r"|^macro_rules!\s*(\w+)",
    re.M,
)


def top_level_names(src):
    names, files = set(), []
    for d, _, fs in os.walk(src):
        for f in fs:
            p = os.path.join(d, f)
            if f.endswith(".py"):
                names |= set(PY_TOP.findall(open(p, encoding="utf-8", errors="replace").read()))
                files.append(p)
            elif f.endswith(".rs"):
                for a, b in RS_TOP.findall(open(p, encoding="utf-8", errors="replace").read()):
                    names.add(a or b)
                files.append(p)
    return names, sorted(files)


def recall(text, names):
    words = set(re.findall(r"\w+", text))
    return len(names & words) / max(1, len(names))


def ref_tokens(peers, text):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run(["bash", peers, "count", f.name], capture_output=True, text=True, check=True)
        return json.loads(r.stdout)["tokens"]
    finally:
        os.unlink(f.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--pare", required=True)
    ap.add_argument("--repomix", required=True)
    ap.add_argument("--peers", required=True)
    ap.add_argument("--work", default=os.path.join(os.environ.get("PARE_BENCH_DIR", "/tmp/pare-bench"), "pack-map"))
    args = ap.parse_args()

    from aider.io import InputOutput
    from aider.repomap import RepoMap

    def count(text):
        r = subprocess.run([args.pare, "count", "-"], input=text, capture_output=True, text=True, check=True)
        return int(r.stdout.split()[0])

    class Model:
        """What RepoMap needs of a model: a token count (o200k_base)."""

        def token_count(self, text):
            return count(text)

    def prefix(text, budget):
        """The longest prefix of `text` (cut at a line end) of at most `budget` tokens."""
        ends = [i + 1 for i, c in enumerate(text) if c == "\n"] + [len(text)]
        lo, hi = 0, len(ends) - 1
        if count(text) <= budget:
            return text
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count(text[: ends[mid]]) <= budget:
                lo = mid
            else:
                hi = mid - 1
        return text[: ends[lo]] if count(text[: ends[lo]]) <= budget else ""

    for tree in args.trees:
        parts = os.path.normpath(tree).split(os.sep)
        name = parts[-2] if parts[-1] == "src" and len(parts) > 1 else parts[-1]
        work = os.path.join(args.work, name)
        shutil.rmtree(work, ignore_errors=True)
        src = os.path.join(work, "src")
        shutil.copytree(tree, src, ignore=shutil.ignore_patterns("__pycache__"))
        names, files = top_level_names(src)
        print(f"\n== {name}: {len(files)} source files, {len(names)} top-level names")
        t0 = time.perf_counter()
        rm_path = os.path.join(work, "repomix.md")
        subprocess.run(
            [args.repomix, "--compress", "--style", "markdown", "--quiet", "--no-file-summary", "-o", rm_path, "src"],
            cwd=work, check=True,
        )
        rm_s = time.perf_counter() - t0
        rm_text = open(rm_path, encoding="utf-8").read()
        print(f"repomix --compress whole: {ref_tokens(args.peers, open(rm_path, encoding='utf-8').read())} tokens, "
              f"recall {recall(open(rm_path, encoding='utf-8').read(), names):.1%}, {rm_s:.2f} s")
        print(f"{'budget':>6}  {'tool':<22} {'tokens':>7} {'within':>6} {'recall':>7} {'s':>6}")
        for budget in BUDGETS:
            rows = []
            t0 = time.perf_counter()
            pare = subprocess.run([args.pare, "pack", src, "--budget", str(budget)], capture_output=True, text=True, check=True).stdout
            rows.append(("pare pack", pare, time.perf_counter() - t0))
            for cache in os.listdir(src):
                if cache.startswith(".aider.tags.cache"):
                    shutil.rmtree(os.path.join(src, cache), ignore_errors=True)
            t0 = time.perf_counter()
            rm = RepoMap(map_tokens=budget, root=src, main_model=Model(), io=InputOutput(yes=True, pretty=False), refresh="always")
            aider = rm.get_repo_map([], files) or ""
            rows.append(("aider repo map", aider, time.perf_counter() - t0))
            cut = prefix(rm_text, budget)
            rows.append(("repomix --compress, cut", cut, rm_s))
            for tool, text, secs in rows:
                n = ref_tokens(args.peers, text)
                print(f"{budget:>6}  {tool:<22} {n:>7} {'yes' if n <= budget else 'NO':>6} {recall(text, names):>7.1%} {secs:>6.2f}")
        for cache in os.listdir(src):
            if cache.startswith(".aider.tags.cache"):
                shutil.rmtree(os.path.join(src, cache), ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
