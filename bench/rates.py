#!/usr/bin/env python3
"""Token rates of `pare compact --format json` on payloads of the corpus's shapes with other
contents and sizes, counted by the reference counter (../shared/tools/peers.sh).

Issue 2 promises, against the reference's minified input: entities >= 55% fewer,
search_memory >= 50%, narrative >= 60% -- on the corpus files and on other payloads of the
same shapes. This makes such payloads by resampling the corpus's own records:

  entities       N entities and 1.5*N relationships drawn from entities_systems.json, with
                 fresh ids (sys-0000...) and relationship ends among them
  search_memory  N results drawn from search_memory.json, each with its meta_relations,
                 under a fresh UUID
  narrative      N segments in runs of 4-8 consecutive corpus segments (so same-app runs
                 and their gaps stay as the generator made them), re-timed from 08:00

and prints, per shape and size, the rate's min / mean / max and how many fall below the
floor. Stdlib only; deterministic for a given --seed.

    python3 bench/rates.py                    # 20 payloads per size
    python3 bench/rates.py --samples 50 --shape entities
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared")
TIME = "%Y-%m-%dT%H:%M:%S"

# shape: (corpus file, policy, floor %, sizes)
SHAPES = {
    "entities": ("entities_systems", "entities.toml", 55.0, (10, 25, 50, 100, 400)),
    "search_memory": ("search_memory", "meta_relations.toml", 50.0, (3, 10, 30)),
    "narrative": ("narrative_day", "narrative.toml", 60.0, (30, 91, 300)),
}


def corpus(name: str):
    with open(os.path.join(SHARED, "corpus", f"{name}.json"), encoding="utf-8") as f:
        return json.load(f)


def entities(base, n: int, rnd: random.Random):
    ents = [dict(rnd.choice(base["entities"])) for _ in range(n)]
    for i, e in enumerate(ents):
        e["id"] = f"sys-{i:04d}"
    rels = [dict(rnd.choice(base["relationships"])) for _ in range(n * 3 // 2)]
    for r in rels:
        r["source_id"] = f"sys-{rnd.randrange(n):04d}"
        r["target_id"] = f"sys-{rnd.randrange(n):04d}"
    return {"entities": ents, "relationships": rels, "total": n, "entity_type": base["entity_type"]}


def search_memory(base, n: int, rnd: random.Random):
    results, meta = [], {}
    for _ in range(n):
        r = dict(rnd.choice(base["results"]))
        old, new = r["id"], str(uuid.UUID(int=rnd.getrandbits(128)))
        r["id"] = new
        results.append(r)
        meta[new] = base["meta_relations"][old]
    return {"results": results, "meta_relations": meta, "relations": [], "query": base["query"]}


def narrative(base, n: int, rnd: random.Random):
    segs = base["segments"]
    at = lambda s: dt.datetime.strptime(s, TIME)  # noqa: E731
    gap = [0.0] + [(at(b["startTime"]) - at(a["endTime"])).total_seconds() for a, b in zip(segs, segs[1:])]
    span = [(at(s["endTime"]) - at(s["startTime"])).total_seconds() for s in segs]
    picks: list[int] = []
    while len(picks) < n:
        i = rnd.randrange(len(segs) - 8)
        picks += range(i, i + rnd.randint(4, 8))
    t, out = dt.datetime(2026, 2, 17, 8, 0, 0), []
    for k, j in enumerate(picks[:n]):
        s = dict(segs[j])
        s["refs"] = dict(s["refs"], timelineRef=f"timeline:2026-02-17:{k}")
        # Inside a run the corpus's own gap; between runs one drawn from the corpus's gaps.
        g = gap[j] if k and picks[k - 1] == j - 1 else (rnd.choice(gap[1:]) if k else 0.0)
        t += dt.timedelta(seconds=max(g, 0.0))
        s["startTime"] = t.strftime(TIME)
        t += dt.timedelta(seconds=span[j])
        s["endTime"] = t.strftime(TIME)
        out.append(s)
    return dict(base, segments=out)


MAKERS = {"entities": entities, "search_memory": search_memory, "narrative": narrative}


def peers(verb: str, files: list[str]) -> dict[str, dict]:
    out = subprocess.run(
        [os.path.join(SHARED, "tools", "peers.sh"), verb, *files],
        check=True, capture_output=True, text=True,
    ).stdout
    return {row["file"]: row for row in map(json.loads, out.splitlines())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=20, help="payloads per size (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shape", choices=sorted(SHAPES), action="append", help="default: all")
    ap.add_argument("--pare", default=os.path.join(ROOT, "target", "release", "pare"))
    args = ap.parse_args()
    if not os.path.exists(args.pare):
        sys.exit(f"rates.py: no pare binary at {args.pare} (cargo build --release, or --pare)")
    print("shape          size  payloads  min %  mean %  max %  below floor")
    with tempfile.TemporaryDirectory(prefix="pare-rates-") as tmp:
        for shape in args.shape or list(SHAPES):
            name, policy, floor, sizes = SHAPES[shape]
            base = corpus(name)
            for n in sizes:
                ins, outs = [], []
                for s in range(args.samples):
                    rnd = random.Random(f"{args.seed}/{shape}/{n}/{s}")
                    src = os.path.join(tmp, f"{shape}_{n}_{s}.json")
                    with open(src, "w", encoding="utf-8") as f:
                        json.dump(MAKERS[shape](base, n, rnd), f, indent=2)
                    dst = src + ".out"
                    with open(dst, "wb") as f:
                        subprocess.run(
                            [args.pare, "compact", src, "--format", "json", "--policy",
                             os.path.join(ROOT, "examples", "policies", policy)],
                            check=True, stdout=f,
                        )
                    ins.append(src)
                    outs.append(dst)
                before, after = peers("tokens", ins), peers("count", outs)
                rates = [100 * (1 - after[o]["tokens"] / before[i]["minified"]) for i, o in zip(ins, outs)]
                below = sum(r < floor for r in rates)
                print(f"{shape:<14} {n:>4}  {len(rates):>8}  {min(rates):5.1f}  {statistics.mean(rates):6.2f}"
                      f"  {max(rates):5.1f}  {below} (floor {floor:g}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
