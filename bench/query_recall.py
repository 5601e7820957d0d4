#!/usr/bin/env python3
"""Recall of the answering chunk, with the question and without, at 1k/2k/4k tokens.

    python3 bench/query_recall.py [--pare target/release/pare] [--budgets 1000,2000,4000]

Reads testdata/query_recall/{python,rust}.json (scripts/gen_query_recall.py: 50-chunk
search responses from real code, the answer ranked 30th–40th by the upstream score) and
packs each response with examples/policies/search.toml, once with `--query QUESTION` and
once without. A question is answered when its chunk's text (full or preview) is on page 1.
Prints one table; exits 1 if the query ever does worse than no query.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pare", default=str(ROOT / "target/release/pare"))
    ap.add_argument("--budgets", default="1000,2000,4000")
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    policy = ROOT / "examples/policies/search.toml"
    rows = {}
    worse = False
    with tempfile.TemporaryDirectory() as tmp:
        for lang in ("python", "rust"):
            doc = json.loads((ROOT / f"testdata/query_recall/{lang}.json").read_text())
            chunks = {c["chunk_id"]: c for c in doc["chunks"]}
            for q in doc["questions"]:
                response = {"results": [{**chunks[cid], "hybrid_score": s} for cid, s in q["results"]], "total_found": 50}
                path = pathlib.Path(tmp) / "r.json"
                path.write_text(json.dumps(response))
                for budget in budgets:
                    for asked in (True, False):
                        cmd = [args.pare, "pack", str(path), "--policy", str(policy), "--budget", str(budget), "--format", "json"]
                        if asked:
                            cmd += ["--query", q["question"]]
                        out = json.loads(subprocess.run(cmd, capture_output=True, check=True).stdout)
                        tier = next((c["tier"] for c in out["chunks"] if c["id"] == q["answer"]), "not on page 1")
                        hit = tier in ("full", "preview")
                        rows.setdefault((lang, budget, asked), []).append(hit)
    print(f"{'language':8} {'budget':>6}   {'with the question':>18}   {'without':>8}")
    for lang in ("python", "rust", "both"):
        for budget in budgets:
            def rate(asked):
                hits = [h for (l, b, a), v in rows.items() if (lang == "both" or l == lang) and b == budget and a == asked for h in v]
                return sum(hits), len(hits)
            (w, n), (wo, _) = rate(True), rate(False)
            worse |= w < wo
            print(f"{lang:8} {budget:>6}   {w:>3}/{n} ({100 * w / n:5.1f}%)   {wo:>3}/{n} ({100 * wo / n:4.1f}%)")
    sys.exit(1 if worse else 0)


if __name__ == "__main__":
    main()
