#!/usr/bin/env python3
"""Two builds of the Python package's converter, in one process, called in turn.

    python bench/python_ab.py BEFORE.so AFTER.so [--payload FILE] [--rounds 30]

Each `.so` is a built `pare/_pare*.so` (copy it out of a venv before installing the next
build). Both are loaded side by side as `_pare` modules, and `orjson.dumps` is timed in the
same rounds. Why: this VM's processes come in modes (orjson's own 1 MB time is 0.42 ms in
one process and 0.6 ms in the next), so a change timed across processes can show a gain or
a loss that is the machine's; in one process both builds meet the same mode.

Printed, per case, each side's median (and the 1 KB case's 25th percentile of 2,000-call
loops), AFTER/BEFORE and each against orjson:

- `1 KB`: the ~1 KB entities dict `bench/python_speed.py` times, in loops of 2,000 calls;
- `{}`: an empty dict, the same (the cost of a call);
- `1 MB`: the payload's dict, one call at a time (two threads, as `pare.dumps` runs it);
- `1 MB, one thread`: the same dict inside a one-item list, which the converter does not
  split.

The outputs are checked equal to orjson's first. Needs orjson (`pip install orjson`).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def load(path: str):
    spec = importlib.util.spec_from_file_location("_pare", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def quantile(times: list[float], q: float) -> float:
    times = sorted(times)
    return times[min(len(times) - 1, int(len(times) * q))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--payload", default="/tmp/pare-bench/entities_1mb.json",
                    help="a ~1 MB entities payload (bench/python_speed.py makes one there)")
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    try:
        import orjson
    except ImportError:
        print("orjson is not installed (pip install orjson): nothing to compare against", file=sys.stderr)
        return 2
    if not Path(args.payload).exists():
        print(f"no payload at {args.payload}: run bench/python_speed.py once, or pass --payload", file=sys.stderr)
        return 2
    sides = {"before": load(args.before).dumps, "after": load(args.after).dumps, "orjson": orjson.dumps}

    big = json.loads(Path(args.payload).read_text())
    one_kb = {"entities": big["entities"][:1], "total": 1, "entity_type": "System"}
    while len(json.dumps(one_kb, indent=2)) > 1100:
        entity = one_kb["entities"][0]
        entity.pop(next(iter(entity)))  # as bench/python_speed.py trims it
    cases = [("1 KB", one_kb, 2000), ("{}", {}, 2000), ("1 MB", big, 1), ("1 MB, one thread", [big], 1)]

    for label, value, calls in cases:
        want = orjson.dumps(value)
        assert all(dumps(value) == want for dumps in sides.values()), f"{label}: the outputs differ"
        times: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(args.rounds):
            for name, dumps in sides.items():
                start = time.perf_counter()
                for _ in range(calls):
                    dumps(value)
                times[name].append((time.perf_counter() - start) / calls)
        q = 0.25 if calls > 1 else 0.5
        t = {name: quantile(v, q) for name, v in times.items()}
        unit, scale = ("ns", 1e9) if calls > 1 else ("ms", 1e3)
        print(f"{label:17} {'p25' if calls > 1 else 'med'}  before {t['before'] * scale:8.3f} {unit}"
              f"  after {t['after'] * scale:8.3f} {unit}  orjson {t['orjson'] * scale:8.3f} {unit}"
              f"  after/before {t['after'] / t['before']:.3f}"
              f"  before/orjson {t['before'] / t['orjson']:.3f}  after/orjson {t['after'] / t['orjson']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
