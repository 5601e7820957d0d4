#!/usr/bin/env python3
"""What a `pare compact --report` costs, against what its counting alone costs.

    python3 bench/report_floor.py PARE_BINARY [--rounds N] [--policy TOML] FILE...

For each FILE, whole processes alternated round by round (medians; 40 rounds unless
`--rounds`), with the policy (`bench/adr010.toml` unless `--policy`):

- `plain`: `pare compact --policy P FILE`;
- `report`: the same with `--report`;
- `count 2`: `pare count` of the two texts every savings report has to count, the input
  minified and the output (written beforehand by `pare encode --format json` and
  `pare compact`), in one process;
- `count 4`: `pare count` of the four texts `--report` counts for a two-op policy: also the
  input as given and the output of the first op alone;
- `tiny`: `pare count` of a one-line file: a process that counts next to nothing.

Printed per file: each one's median wall time, then `report / plain`, and two floors as
ratios to plain: `plain + (CPU of count 2 - CPU of tiny) / cores`, the wall time of a report
that counted only the two texts it cannot do without, its counts shared perfectly among the
machine's cores and nothing else added, and the same for `count 4`. CPU is user + system
time (`wait4`), so the floors hold the counter's cold start (the encoding's tables brought
in, pieces never seen merged) as a report meets it, and no process start.

Why: issue 33 asks for a `--report` within 1.3x of a plain run. This shows how much of
that counting alone takes, with the engine's own counter, before the report does anything
else: if `count 2` alone is over 1.3x, no report that states a saving in exact tokens can
meet it on this machine.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tomllib

from process_ab import timed

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd: list[str], devnull: int) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process ([`process_ab.timed`])."""
    wall, cpu, code = timed(cmd, os.environ, devnull)
    if code != 0:
        sys.exit(f"exited {code}: {' '.join(cmd)}")
    return wall, cpu


def texts(pare: str, policy: str, file: str, into: str) -> dict[str, str]:
    """The texts the report counts, written to `into` (each with the newline the CLI
    prints, as the report counts it)."""
    def out(name: str, args: list[str]) -> str:
        path = os.path.join(into, name)
        with open(path, "wb") as f:
            subprocess.run([pare] + args, stdout=f, check=True)
        return path

    # The policy with its first op alone, written as JSON (pare reads either).
    first_op = os.path.join(into, "first_op.json")
    with open(policy, "rb") as src:
        alone = tomllib.load(src)
    alone["ops"] = alone.get("ops", [])[:1]
    with open(first_op, "w") as dst:
        json.dump(alone, dst)
    return {
        "minified": out("minified.json", ["encode", "--format", "json", file]),
        "output": out("output.json", ["compact", "--policy", policy, file]),
        "first_op": out("first_op_output.json", ["compact", "--policy", first_op, file]),
    }


def check(pare: str, compact: list[str], file: str, t: dict[str, str], tmp: str) -> None:
    """The texts counted here are those the report counts: `pare count` of each gives the
    report's own figure for it."""
    report_path = os.path.join(tmp, "report.json")
    subprocess.run(compact + ["--report-json", report_path], stdout=subprocess.DEVNULL, check=True)
    with open(report_path) as f:
        r = json.load(f)
    want = {file: r["tokens_input"], t["minified"]: r["tokens_minified"],
            t["output"]: r["tokens_after"]}
    if len(r["ops"]) > 1:
        want[t["first_op"]] = r["tokens_before"] - r["ops"][0]["saved"]
    for path, tokens in want.items():
        line = subprocess.run([pare, "count", path], capture_output=True, text=True,
                              check=True).stdout.split()
        if int(line[0]) != tokens:
            sys.exit(f"{path}: pare count says {line[0]} tokens, the report {tokens}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pare")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--policy", default=os.path.join(HERE, "adr010.toml"))
    args = ap.parse_args()
    pare = os.path.abspath(args.pare)
    devnull = os.open(os.devnull, os.O_WRONLY)
    cores = len(os.sched_getaffinity(0))
    print(f"{'file':34} {'plain':>7} {'report':>7} {'count 2':>8} {'count 4':>8} {'tiny':>6}"
          f"   report/plain  floor 2  floor 4   (wall ms, medians of {args.rounds}; {cores} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        tiny = os.path.join(tmp, "tiny.json")
        with open(tiny, "w") as f:
            f.write('{"a":1}\n')
        for file in args.files:
            t = texts(pare, args.policy, file, tmp)
            compact = [pare, "compact", "--policy", args.policy, file]
            check(pare, compact, file, t, tmp)
            cases = {
                "plain": compact,
                "report": compact + ["--report"],
                "count 2": [pare, "count", t["minified"], t["output"]],
                "count 4": [pare, "count", file, t["minified"], t["first_op"], t["output"]],
                "tiny": [pare, "count", tiny],
            }
            wall = {k: [] for k in cases}
            cpu = {k: [] for k in cases}
            for _ in range(args.rounds):
                for name, cmd in cases.items():
                    w, c = run(cmd, devnull)
                    wall[name].append(w)
                    cpu[name].append(c)
            m = {k: statistics.median(v) * 1000 for k, v in wall.items()}
            c = {k: statistics.median(v) * 1000 for k, v in cpu.items()}
            # The counts' CPU shared perfectly among the cores, on top of the plain run.
            floor2 = (m["plain"] + (c["count 2"] - c["tiny"]) / cores) / m["plain"]
            floor4 = (m["plain"] + (c["count 4"] - c["tiny"]) / cores) / m["plain"]
            name = f"{os.path.basename(file)} ({os.path.getsize(file) // 1024} KB)"
            print(f"{name:34} {m['plain']:7.2f} {m['report']:7.2f} {m['count 2']:8.2f} "
                  f"{m['count 4']:8.2f} {m['tiny']:6.2f}   {m['report'] / m['plain']:11.2f}x "
                  f"{floor2:7.2f}x {floor4:7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
