#!/usr/bin/env python3
"""The Python package's speed, side by side in one run, against the peers issue 13 names.

    python bench/python_speed.py [--pare-bin target/release/pare] [--runs 7]

Run it with an interpreter that has a *release* build of the package installed
(`pip install ./crates/pare-py`; `maturin develop` builds a debug one, and the script
refuses that). It prints one table; each ratio is from this run (the best time of each side,
the two timed in turn call by call, --runs or a multiple of it each):

1. **dicts of ~1 KB, ~1 MB and ~8 MB entities** — `policy.shape(d).text` with
   `bench/adr010.toml` (ADR-010's rules exactly) against the seed's own `compact_entity(d)` +
   `json.dumps(...)` (`bench/compact_entity.py`); the two outputs are checked equal as JSON
   values first. Issue 33's goals: ≥ 5× at 1 MB and 8 MB, ≥ 1× at 1 KB.
2. **conversion alone** — `pare.dumps(d)` (the JSON text the engine reads) against
   `orjson.dumps(d)` on the same dicts (both give bytes; checked equal to `json.dumps`'s).
   Goal: ≤ 1× orjson's time. Skipped, and said, without orjson installed. Both the best
   and the median call of each side are printed: at 1 KB the two disagree (orjson's best
   call is its luckiest, and its calls spread wider than pare's).
3. **1,000 pydantic models** with UUIDs and datetimes: `policy.shape(models)` directly
   against `[m.model_dump(mode="json") for m in models]` then shape (outputs equal).
4. **`pare compact --report` against a plain run** (whole processes, alternated, medians of
   at least 15 each) on the corpus's entities file and the 1 MB and 8 MB payloads. Goal: ≤ 1.3×.
5. **1 KB payload** — the same call in-process against spawning `pare compact --policy
   bench/adr010.toml` per payload (what a Python service does without the package).
6. **count_tokens, 7 MB text** — against the reference counter, `gpt-tokenizer`'s
   `countTokens` in node (timed inside node, after loading, and as a whole process); the
   counts must be identical.
7. **memory** — RSS of a fresh interpreter after `import pare`, and after the first call that
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


def timed_in_turn(a, b, runs: int) -> tuple[list[float], list[float]]:
    """Each call's time, the two timed in turn call by call: this VM's noise comes in
    spells, and N of one side then N of the other can put a spell on one side."""
    ta, tb = [], []
    for _ in range(runs):
        for fn, times in ((a, ta), (b, tb)):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return ta, tb


def best_of_both(a, b, runs: int) -> tuple[float, float]:
    """The best time of each of two calls ([`timed_in_turn`])."""
    ta, tb = timed_in_turn(a, b, runs)
    return min(ta), min(tb)


def payload(mb: float, out: Path) -> Path:
    if not out.exists():
        subprocess.run([sys.executable, str(REPO / "bench" / "gen_payload.py"), "--mb", str(mb), "--out", str(out)], check=True)
    return out


def rss_kib(code: str) -> int:
    """Peak RSS (KiB, VmHWM) of a fresh interpreter that runs `code` (getrusage's maxrss
    would start at the forking parent's)."""
    script = code + "\nprint([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"
    return int(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()[-1])


def pydantic_models(n: int):
    """`n` pydantic v2 models with a UUID, datetimes, an enum and a nested model; `None`
    (and said) without pydantic."""
    try:
        import pydantic
    except ImportError:
        print("pydantic is not installed: the models row is skipped", file=sys.stderr)
        return None
    import datetime as dt
    import enum
    import uuid

    class Status(enum.Enum):
        ACTIVE = "active"
        RETIRED = "retired"

    class Owner(pydantic.BaseModel):
        id: uuid.UUID
        name: str

    class System(pydantic.BaseModel):
        id: uuid.UUID
        name: str
        status: Status
        created_at: dt.datetime
        review_on: dt.date
        owner: Owner
        tags: list[str]
        score: float
        notes: str | None = None

    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    return [
        System(
            id=uuid.UUID(int=i), name=f"system {i}", status=Status.ACTIVE if i % 3 else Status.RETIRED,
            created_at=start + dt.timedelta(minutes=i), review_on=(start + dt.timedelta(days=i)).date(),
            owner=Owner(id=uuid.UUID(int=10**6 + i % 17), name=f"team {i % 17}"), tags=["a", "b"][: i % 3],
            score=i / 7, notes=None if i % 2 else "checked",
        )
        for i in range(n)
    ]


def count_row(args, work: Path, rows: list) -> float:
    """Row 6: `pare.count_tokens` of 7 MB against gpt-tokenizer's `countTokens` (counts equal);
    returns node's whole-process time per count."""
    import pare

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
    return whole


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

    # 1. dicts: in-process pare vs compact_entity + json.dumps; 2. conversion vs orjson.
    try:
        import orjson
    except ImportError:
        orjson = None
        print("orjson is not installed: the conversion rows are skipped (pip install orjson)", file=sys.stderr)
    big = json.loads(payload(1, work / "entities_1mb.json").read_text())
    one_kb = {"entities": big["entities"][:1], "total": 1, "entity_type": "System"}
    while len(json.dumps(one_kb, indent=2)) > 1100:
        ent = one_kb["entities"][0]
        ent.pop(next(iter(ent)))  # trim fields until it is about 1 KB
    dicts = [("~1 KB", one_kb, args.runs * 300), ("~1 MB", big, args.runs * 5)]
    dicts.append(("~8 MB", json.loads(payload(8, work / "entities_8mb.json").read_text()), args.runs))
    conversions = []
    for label, d, runs in dicts:
        seed = lambda: json.dumps(compact_entity.compact(d), separators=(",", ":"), ensure_ascii=False)  # noqa: E731
        ours = lambda: policy.shape(d).text  # noqa: E731
        assert json.loads(seed()) == json.loads(ours()), "pare and compact_entity disagree"
        t_seed, t_ours = best_of_both(seed, ours, runs)
        rows.append((f"{label} dict: compact_entity + json.dumps", t_seed, "pare Policy.shape", t_ours))
        if orjson is not None:
            assert pare.dumps(d) == orjson.dumps(d) == json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode()
            t_or, t_p = timed_in_turn(lambda: orjson.dumps(d), lambda: pare.dumps(d), runs * 4)
            conversions.append((label, min(t_or), min(t_p), statistics.median(t_or), statistics.median(t_p)))

    # 3. pydantic models shaped directly vs model_dump(mode="json") then shape.
    models = pydantic_models(1000)
    if models is not None:
        direct = lambda: policy.shape(models).text  # noqa: E731
        dumped = lambda: policy.shape([m.model_dump(mode="json") for m in models]).text  # noqa: E731
        assert direct() == dumped()
        t_dumped, t_direct = best_of_both(dumped, direct, args.runs * 3)
        rows.append(("1,000 pydantic models: model_dump(mode=json) + shape", t_dumped, "pare Policy.shape", t_direct))

    # 5. 1 KB payload: in-process vs a `pare compact` process per call.
    small = json.dumps(one_kb, indent=2)
    cmd = [args.pare_bin, "compact", "--policy", str(REPO / "bench" / "adr010.toml")]
    spawn = lambda: subprocess.run(cmd, input=small.encode(), capture_output=True, check=True).stdout  # noqa: E731
    assert spawn().decode()[:-1] == policy.shape(small).text
    t_spawn = best(spawn, args.runs * 3)
    t_call = best(lambda: policy.shape(small).text, args.runs * 30)
    rows.append((f"{len(small)} B payload: spawn pare compact", t_spawn, "pare Policy.shape", t_call))

    # 6. count_tokens on 7 MB against gpt-tokenizer.
    peer = Path(args.peers) / "node_modules" / "gpt-tokenizer"
    whole = None
    if peer.is_dir():
        whole = count_row(args, work, rows)
    else:
        print(f"{peer}: not here, so the count row is skipped (`../shared/tools/peers.sh count FILE` "
              f"installs it into $PEERS_DIR, or give --peers DIR)", file=sys.stderr)

    print(f"{'peer':62} {'s':>9}   {'pare':24} {'s':>9}  ratio")
    for name, t_peer, ours_name, t_p in rows:
        print(f"{name:62} {t_peer:9.5f}   {ours_name:24} {t_p:9.5f}  {t_peer / t_p:6.1f}x")
    if whole is not None:
        print(f"(node whole process per count, load included: {whole:.3f} s)")

    if conversions:
        print(f"\n{'conversion alone (bytes out)':30} {'orjson.dumps s':>15} {'pare.dumps s':>13}  pare/orjson"
              f"  {'median: orjson s':>16} {'pare s':>10}  pare/orjson")
        for label, t_or, t_p, m_or, m_p in conversions:
            print(f"{label + ' dict':30} {t_or:15.6f} {t_p:13.6f}  {t_p / t_or:6.2f}x"
                  f"  {m_or:16.7f} {m_p:10.7f}  {m_p / m_or:6.2f}x")

    # 4. --report against a plain run, whole processes.
    corpus = Path(os.environ.get("PARE_CORPUS", REPO.parent / "shared" / "corpus")) / "entities_systems.json"
    files = [f for f in (corpus, work / "entities_1mb.json", work / "entities_8mb.json") if f.exists()]
    if not corpus.exists():
        print(f"{corpus}: not here, so the corpus row of the --report table is skipped", file=sys.stderr)
    print(f"\n{'pare compact --policy bench/adr010.toml':40} {'plain s':>9} {'--report s':>11}  ratio (medians)")
    for f in files:
        plain = [args.pare_bin, "compact", "--policy", str(REPO / "bench" / "adr010.toml"), str(f)]
        # Alternated, run by run, and the medians: this VM's noise comes in spells, and a
        # spell that fell on one side's runs alone made a ratio of it.
        plains, reports = [], []
        for _ in range(max(args.runs, 15)):
            plains.append(best(lambda: subprocess.run(plain, capture_output=True, check=True), 1))
            reports.append(best(lambda: subprocess.run(plain + ["--report"], capture_output=True, check=True), 1))
        t_plain, t_report = statistics.median(plains), statistics.median(reports)
        print(f"{f.name + f' ({f.stat().st_size // 1024} KB)':40} {t_plain:9.4f} {t_report:11.4f}  {t_report / t_plain:5.2f}x")

    # 4. memory.
    base = rss_kib("pass")
    imported = rss_kib("import pare")
    first = rss_kib("import pare; pare.Policy.builtin().shape({'a': [1, None]}, budget=100)")
    print(f"RSS: interpreter {base / 1024:.1f} MiB, after import pare {imported / 1024:.1f} MiB, after the first call (o200k tables) {first / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
