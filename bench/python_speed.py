#!/usr/bin/env python3
"""The Python package's speed, side by side in one run, against the peers issue 13 names.

    python bench/python_speed.py [--pare-bin target/release/pare] [--runs 7]

Run it with an interpreter that has a *release* build of the package installed
(`pip install ./crates/pare-py`; `maturin develop` builds a debug one, and the script
refuses that). It prints one table; each ratio is from this run (best of --runs):

1. **dict, ~1 MB entities** — `policy.shape(d).text` with `bench/adr010.toml` (ADR-010's
   rules exactly) against the seed's own `compact_entity(d)` + `json.dumps(...)`
   (`bench/compact_entity.py`); the two outputs are checked equal as JSON values first.
2. **1 KB payload** — the same call in-process against spawning `pare compact --policy
   bench/adr010.toml` per payload (what a Python service does without the package).
3. **count_tokens, 7 MB text** — against the reference counter, `gpt-tokenizer`'s
   `countTokens` in node (timed inside node, after loading, and as a whole process); the
   counts must be identical.
4. **memory** — RSS of a fresh interpreter after `import pare`, and after the first call that
   builds the o200k_base tables.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import compact_entity  # noqa: E402  (the seed's approach, as a module)


def best(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def payload(mb: float, out: Path) -> Path:
    if not out.exists():
        subprocess.run([sys.executable, str(REPO / "bench" / "gen_payload.py"), "--mb", str(mb), "--out", str(out)], check=True)
    return out


def rss_kib(code: str) -> int:
    """Peak RSS (KiB, VmHWM) of a fresh interpreter that runs `code` (getrusage's maxrss
    would start at the forking parent's)."""
    script = code + "\nprint([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"
    return int(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pare-bin", default=str(REPO / "target" / "release" / "pare"))
    ap.add_argument("--peers", default=os.environ.get("PEERS_DIR", "/tmp/pare-peers"))
    ap.add_argument("--dir", default=os.environ.get("PARE_BENCH_DIR", "/tmp/pare-bench"))
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()

    import pare

    if pare._pare.__build__ != "release" and not os.environ.get("PARE_ALLOW_DEBUG"):
        print(f"{pare._pare.__file__}: a {pare._pare.__build__} build (pip install ./crates/pare-py makes a release one); PARE_ALLOW_DEBUG=1 runs anyway", file=sys.stderr)
        return 2
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    policy = pare.Policy.from_file(REPO / "bench" / "adr010.toml")
    rows = []

    # 1. ~1 MB dict: in-process pare vs compact_entity + json.dumps.
    big = json.loads(payload(1, work / "entities_1mb.json").read_text())
    seed = lambda: json.dumps(compact_entity.compact(big), separators=(",", ":"), ensure_ascii=False)  # noqa: E731
    ours = lambda: policy.shape(big).text  # noqa: E731
    assert json.loads(seed()) == json.loads(ours()), "pare and compact_entity disagree"
    t_seed, t_ours = best(seed, args.runs), best(ours, args.runs)
    rows.append(("~1 MB dict: compact_entity + json.dumps", t_seed, "pare Policy.shape", t_ours))

    # 2. 1 KB payload: in-process vs a `pare compact` process per call.
    small_doc = {"entities": big["entities"][:1], "total": 1, "entity_type": "System"}
    small = json.dumps(small_doc, indent=2)
    while len(small) > 1100:
        ent = small_doc["entities"][0]
        ent.pop(next(iter(ent)))  # trim fields until it is about 1 KB
        small = json.dumps(small_doc, indent=2)
    cmd = [args.pare_bin, "compact", "--policy", str(REPO / "bench" / "adr010.toml")]
    spawn = lambda: subprocess.run(cmd, input=small.encode(), capture_output=True, check=True).stdout  # noqa: E731
    assert spawn().decode()[:-1] == policy.shape(small).text
    t_spawn = best(spawn, args.runs * 3)
    t_call = best(lambda: policy.shape(small).text, args.runs * 30)
    rows.append((f"{len(small)} B payload: spawn pare compact", t_spawn, "pare Policy.shape", t_call))

    # 3. count_tokens on 7 MB against gpt-tokenizer.
    text = payload(7, work / "entities_7mb.json").read_text()
    ours_count = pare.count_tokens(text)
    t_count = best(lambda: pare.count_tokens(text), args.runs)
    node = "const fs=require('fs');const {countTokens}=require('gpt-tokenizer');const t=fs.readFileSync(process.argv[1],'utf8');let best=1e9,n=0;for(let i=0;i<%d;i++){const s=process.hrtime.bigint();n=countTokens(t);best=Math.min(best,Number(process.hrtime.bigint()-s)/1e9)}console.log(JSON.stringify({n,best}))" % args.runs
    env = dict(os.environ, NODE_PATH=str(Path(args.peers) / "node_modules"))
    t0 = time.perf_counter()
    ref = json.loads(subprocess.run(["node", "-e", node, str(work / "entities_7mb.json")], capture_output=True, text=True, check=True, env=env).stdout)
    whole = (time.perf_counter() - t0) / args.runs
    assert ref["n"] == ours_count, f"counts differ: gpt-tokenizer {ref['n']}, pare {ours_count}"
    rows.append((f"7 MB count ({ours_count} tokens, identical): gpt-tokenizer countTokens", ref["best"], "pare.count_tokens", t_count))

    print(f"{'peer':62} {'s':>9}   {'pare':24} {'s':>9}  ratio")
    for name, t_peer, ours_name, t_p in rows:
        print(f"{name:62} {t_peer:9.5f}   {ours_name:24} {t_p:9.5f}  {t_peer / t_p:6.1f}x")
    print(f"(node whole process per count, load included: {whole:.3f} s)")

    # 4. memory.
    base = rss_kib("pass")
    imported = rss_kib("import pare")
    first = rss_kib("import pare; pare.Policy.builtin().shape({'a': [1, None]}, budget=100)")
    print(f"RSS: interpreter {base / 1024:.1f} MiB, after import pare {imported / 1024:.1f} MiB, after the first call (o200k tables) {first / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
