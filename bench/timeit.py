#!/usr/bin/env python3
"""Whole-process timer: run a command N times, report min/median wall time and peak RSS.

    python3 bench/timeit.py [--runs 3] [--label NAME] [--json] -- CMD [ARG...]

Each run is a fresh process (no shell), stdout to /dev/null (or --stdout PATH),
stdin from /dev/null.  Wall time is measured around spawn..reap with
time.perf_counter(); peak RSS and CPU times come from os.wait4() for that
child, so they are per run (the max over runs is reported).

Exit status: 0 if every run exited 0; otherwise the failing run's exit status
(or 1), after printing the tail of its stderr.  Stderr of successful runs is
discarded unless --show-stderr.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(cmd, stdout_path, stderr_file):
    stderr_file.seek(0)
    stderr_file.truncate()
    with open(stdout_path, "wb") as out, open(os.devnull, "rb") as devin:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=devin, stdout=out, stderr=stderr_file)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    p.returncode = rc  # already reaped; keep Popen from waiting again
    return {
        "wall_s": wall,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "maxrss_kb": ru.ru_maxrss,  # kilobytes on Linux
        "rc": rc,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description="time whole processes (best of N)")
    ap.add_argument("--runs", "-n", type=int, default=3)
    ap.add_argument("--label", default=None, help="name for the report (default: argv[0] of CMD)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    ap.add_argument("--stdout", default=os.devnull, help="where the command's stdout goes (default /dev/null)")
    ap.add_argument("--show-stderr", action="store_true", help="pass the command's stderr through")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no command given (put it after --)")
    if a.runs < 1:
        ap.error("--runs must be >= 1")
    label = a.label or os.path.basename(cmd[0])

    runs = []
    with tempfile.TemporaryFile() as err:
        for i in range(a.runs):
            try:
                r = run_once(cmd, a.stdout, err)
            except OSError as e:
                print(f"timeit: {label}: cannot run {cmd[0]!r}: {e}", file=sys.stderr)
                return 127
            err.seek(0)
            errtext = err.read().decode("utf-8", "replace")
            if r["rc"] != 0:
                tail = "\n".join(errtext.rstrip().splitlines()[-20:])
                print(f"timeit: {label}: run {i + 1} exited with {r['rc']}: {' '.join(cmd)}", file=sys.stderr)
                if tail:
                    print(tail, file=sys.stderr)
                return r["rc"] if 0 < r["rc"] < 256 else 1
            if a.show_stderr and errtext:
                sys.stderr.write(errtext)
            runs.append(r)

    walls = [r["wall_s"] for r in runs]
    best = min(runs, key=lambda r: r["wall_s"])
    res = {
        "label": label,
        "cmd": cmd,
        "runs": len(runs),
        "min_s": best["wall_s"],
        "median_s": statistics.median(walls),
        "max_s": max(walls),
        "best_user_s": best["user_s"],
        "best_sys_s": best["sys_s"],
        "peak_rss_kb": max(r["maxrss_kb"] for r in runs),
        "walls_s": walls,
    }
    if a.json:
        print(json.dumps(res))
    else:
        print(f"{label}: min {res['min_s']:.3f} s  median {res['median_s']:.3f} s  "
              f"(n={len(runs)}, user {best['user_s']:.2f} s, sys {best['sys_s']:.2f} s)  "
              f"peak RSS {res['peak_rss_kb'] / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
