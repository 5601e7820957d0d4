#!/usr/bin/env python3
"""A JSONL corpus shaped by a Dask cluster of worker processes against `pare compact --jsonl`
on the same machine: same bytes, and throughput side by side.

    python bench/dask_jsonl.py [--mb 200] [--workers 2] [--pare-bin target/release/pare]

Run with an interpreter that has the package (`pip install ./crates/pare-py`) and
`dask[distributed]`. The corpus (list_entities responses of 1–8 entities, one per line,
`bench/gen_payload.py`'s entities) is made once in $PARE_BENCH_DIR (default /tmp/pare-bench).
The cluster's time counts reading, shaping and writing the partitions, not starting the
cluster; `--jsonl` is a whole process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# bench/ holds a timeit.py of its own, which would shadow the standard library's (dask uses it).
sys.path = [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]


def corpus(path: Path, mb: int) -> None:
    if path.exists():
        return
    src = Path(os.environ.get("PARE_BENCH_DIR", "/tmp/pare-bench")) / "entities_7mb.json"
    if not src.exists():
        subprocess.run([sys.executable, str(REPO / "bench" / "gen_payload.py"), "--mb", "7", "--out", str(src)], check=True)
    entities = json.loads(src.read_text())["entities"]
    rng = random.Random(5)
    size = 0
    with open(path, "w") as f:
        while size < mb * 1_000_000:
            n = rng.randint(1, 8)
            line = json.dumps({"entities": rng.sample(entities, n), "total": n, "entity_type": "System"})
            f.write(line + "\n")
            size += len(line) + 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--blocksize", default="32MiB")
    ap.add_argument("--pare-bin", default=str(REPO / "target" / "release" / "pare"))
    ap.add_argument("--policy", default=str(REPO / "examples" / "policies" / "entities.toml"))
    args = ap.parse_args()

    import dask.bag as db
    from distributed import Client, LocalCluster

    import pare

    work = Path(os.environ.get("PARE_BENCH_DIR", "/tmp/pare-bench"))
    work.mkdir(parents=True, exist_ok=True)
    src = work / f"corpus_{args.mb}mb.jsonl"
    corpus(src, args.mb)
    size = src.stat().st_size

    t = time.perf_counter()
    want = subprocess.run([args.pare_bin, "compact", "--jsonl", str(src), "--policy", args.policy], capture_output=True, check=True).stdout
    t_cli = time.perf_counter() - t

    policy = pare.Policy.from_file(args.policy)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster):
        with tempfile.TemporaryDirectory() as out:
            t = time.perf_counter()
            lines = db.read_text(str(src), blocksize=args.blocksize)
            lines.map_partitions(policy.shape_lines).to_textfiles(os.path.join(out, "*.jsonl"), last_endline=True)
            t_dask = time.perf_counter() - t
            parts = sorted(Path(out).glob("*.jsonl"), key=lambda p: int(p.stem))
            got = b"".join(p.read_bytes() for p in parts)
            partitions = len(parts)
    same = got == want
    mb = size / 1e6
    print(f"{mb:.0f} MB JSONL, {partitions} partitions, policy {Path(args.policy).name}, output identical: {same}")
    print(f"pare compact --jsonl (rayon, {os.cpu_count()} cores): {t_cli:.2f} s  {mb / t_cli:.0f} MB/s")
    print(f"dask LocalCluster, {args.workers} worker processes:     {t_dask:.2f} s  {mb / t_dask:.0f} MB/s  ({t_dask / t_cli:.2f}x the CLI's time)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
