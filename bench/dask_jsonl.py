#!/usr/bin/env python3
"""A JSONL corpus shaped by a cluster of worker processes (Dask, Ray) against `pare compact
--jsonl` on the same machine: the same bytes, and the times side by side.

    python bench/dask_jsonl.py [--mb 120] [--workers 2] [--blocksize 16MiB] [--recipes dask-lines,dask-bytes,ray-bytes]

Run with an interpreter that has the package (`pip install ./crates/pare-py`),
`dask[distributed]` and `ray`. The corpus (list_entities responses of 1–8 entities, one per
line, `bench/gen_payload.py`'s entities) is made once in $PARE_BENCH_DIR (default
/tmp/pare-bench). Each recipe's time counts reading, shaping and writing the blocks, not
starting the cluster; `--jsonl` is a whole process on all the cores. The recipes:

- `dask-lines`: `dask.bag.read_text` and `Policy.shape_lines` (a list of str per partition),
  `to_textfiles`: the recipe issue 33 measured at 3–4× the CLI's time.
- `dask-bytes`: `dask.bytes.read_bytes` blocks of whole lines and `Policy.shape_jsonl`, bytes
  in and out, each block written by its task (docs/python.md's recipe).
- `ray-bytes`: the same with Ray tasks, one per range of whole lines.
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


def cli(args, src: Path) -> tuple[bytes, float]:
    t = time.perf_counter()
    out = subprocess.run([args.pare_bin, "compact", "--jsonl", str(src), "--policy", args.policy], capture_output=True, check=True).stdout
    return out, time.perf_counter() - t


def dask_lines(args, src: Path, policy, out: Path) -> int:
    """The recipe of issue 33's report: a bag of lines, a list of str per partition."""
    import dask.bag as db

    lines = db.read_text(str(src), blocksize=args.blocksize)
    lines.map_partitions(policy.shape_lines).to_textfiles(str(out / "*.jsonl"), last_endline=True)
    return lines.npartitions


def dask_bytes(args, src: Path, policy, out: Path) -> int:
    """docs/python.md's recipe: blocks of whole lines as bytes, `shape_jsonl`, written as bytes."""
    import dask
    from dask.bytes import read_bytes

    _, blocks = read_bytes(str(src), delimiter=b"\n", blocksize=args.blocksize)
    blocks = [b for per_file in blocks for b in per_file]

    @dask.delayed
    def shape_to(block, path):
        with open(path, "wb") as f:
            f.write(policy.shape_jsonl(block))

    dask.compute(*(shape_to(b, out / f"{i}.jsonl") for i, b in enumerate(blocks)))
    return len(blocks)


def ray_bytes(args, src: Path, policy, out: Path) -> int:
    """docs/python.md's Ray recipe: one task per range of whole lines, read, shaped and
    written by the task."""
    import ray

    @ray.remote
    def shape_range(path, start, end, dest, policy):
        with open(path, "rb") as f:
            f.seek(start)
            block = f.read(end - start)
        with open(dest, "wb") as f:
            f.write(policy.shape_jsonl(block))

    ref = ray.put(policy)
    tasks = [shape_range.remote(str(src), a, b, str(out / f"{i}.jsonl"), ref) for i, (a, b) in enumerate(line_ranges(src, parse_size(args.blocksize)))]
    ray.get(tasks)
    return len(tasks)


def line_ranges(path: Path, size: int) -> list[tuple[int, int]]:
    """[start, end) byte ranges of about `size`, each ending after a newline (or at the end)."""
    total = path.stat().st_size
    ranges, start = [], 0
    with open(path, "rb") as f:
        while start < total:
            f.seek(min(start + size, total))
            f.readline()
            end = min(f.tell(), total)
            ranges.append((start, end))
            start = end
    return ranges


def parse_size(text: str) -> int:
    units = {"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "kb": 10**3, "mb": 10**6, "gb": 10**9, "b": 1}
    low = text.strip().lower()
    for unit, factor in units.items():
        if low.endswith(unit):
            return int(float(low[: -len(unit)]) * factor)
    return int(low)


RECIPES = {"dask-lines": dask_lines, "dask-bytes": dask_bytes, "ray-bytes": ray_bytes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=120)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--blocksize", default="16MiB")
    ap.add_argument("--pare-bin", default=str(REPO / "target" / "release" / "pare"))
    ap.add_argument("--policy", default=str(REPO / "examples" / "policies" / "entities.toml"))
    ap.add_argument("--recipes", default="dask-lines,dask-bytes,ray-bytes", help="which to time, of " + ", ".join(RECIPES))
    args = ap.parse_args()

    import pare

    work = Path(os.environ.get("PARE_BENCH_DIR", "/tmp/pare-bench"))
    work.mkdir(parents=True, exist_ok=True)
    src = work / f"corpus_{args.mb}mb.jsonl"
    corpus(src, args.mb)
    mb = src.stat().st_size / 1e6
    want, t_cli = cli(args, src)
    policy = pare.Policy.from_file(args.policy)
    print(f"{mb:.0f} MB JSONL, policy {Path(args.policy).name}, blocks of {args.blocksize}, {args.workers} workers, {os.cpu_count()} cores")
    print(f"{'pare compact --jsonl (rayon)':34} {t_cli:6.2f} s  {mb / t_cli:5.0f} MB/s")
    ok = True
    for name in args.recipes.split(","):
        recipe = RECIPES[name]
        with cluster(name, args.workers):
            with tempfile.TemporaryDirectory() as d:
                out = Path(d)
                t = time.perf_counter()
                parts = recipe(args, src, policy, out)
                took = time.perf_counter() - t
                files = sorted(out.glob("*.jsonl"), key=lambda p: int(p.stem))
                same = b"".join(p.read_bytes() for p in files) == want
        ok &= same
        print(f"{name:34} {took:6.2f} s  {mb / took:5.0f} MB/s  {took / t_cli:.2f}x the CLI's time, {parts} blocks, output identical: {same}")
    return 0 if ok else 1


class cluster:
    """The recipe's cluster, started before and stopped after the timing: Dask's LocalCluster
    of worker processes (one thread each), or a local Ray with as many CPUs. Started means
    each worker has imported pare (a Ray worker's first task pays 0.2–0.4 s for it)."""

    def __init__(self, recipe: str, workers: int):
        self.recipe, self.workers = recipe, workers

    def __enter__(self):
        if self.recipe.startswith("ray"):
            import ray

            ray.init(num_cpus=self.workers, include_dashboard=False, logging_level="ERROR", log_to_driver=False)

            @ray.remote
            def warm():
                time.sleep(0.5)  # held, so that each task gets a worker of its own
                return __import__("pare").Policy.builtin().shape_jsonl(b"{}")

            ray.get([warm.remote() for _ in range(self.workers)])
        else:
            from distributed import Client, LocalCluster

            self.local = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None)
            self.client = Client(self.local)
            self.client.run(lambda: __import__("pare").Policy.builtin().shape_jsonl(b"{}"))
        return self

    def __exit__(self, *exc):
        if self.recipe.startswith("ray"):
            import ray

            ray.shutdown()
        else:
            self.client.close()
            self.local.close()


if __name__ == "__main__":
    sys.exit(main())
