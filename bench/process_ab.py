#!/usr/bin/env python3
"""Two (or more) builds of `pare`, whole processes, alternated run by run: wall and CPU medians.

    python3 bench/process_ab.py N BIN_A BIN_B [...] -- ARGS...
    python3 bench/process_ab.py 40 /tmp/pare.before target/release/pare -- \\
        compact --policy bench/adr010.toml ../shared/corpus/entities_systems.json --report

Each round runs every binary once with ARGS (stdout and stderr to /dev/null), in the order
given; the table gives each one's median wall time, its 25th percentile, its ratio to the
first binary's median, and its median CPU (user + system, from `wait4`). Why alternated: this
VM's noise comes in spells, and a spell that fell on one side's runs alone made a ratio of
it. A binary written `NAME=VALUE,...@PATH` runs with those variables set (an allocator's
switch, say, against the same build without it).

Copy each binary afresh just before comparing (`cp target/release/pare /tmp/pare.new`, and
the old one again too): on this project's VM a copy of a binary made an hour earlier ran
1.15x the time of a fresh copy of the very same file (2.98 against 2.58 ms, a plain run on
the corpus file), more than most changes measured here.
"""
import os
import statistics
import sys
import time


def timed(cmd: list[str], env, devnull: int) -> tuple[float, float, int]:
    """One process of `cmd` (stdout and stderr to `devnull`): its wall seconds, its CPU
    seconds (user + system, from `wait4`) and its exit code."""
    start = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                                         (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main() -> int:
    if "--" not in sys.argv or len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    rounds = int(sys.argv[1])
    split = sys.argv.index("--")
    bins, args = sys.argv[2:split], sys.argv[split + 1:]
    wall = {b: [] for b in bins}
    cpu = {b: [] for b in bins}
    devnull = os.open(os.devnull, os.O_WRONLY)
    for _ in range(rounds):
        for b in bins:
            env, path = dict(os.environ), b
            if "@" in b:
                assignments, path = b.split("@", 1)
                env.update(kv.split("=", 1) for kv in assignments.split(","))
            w, c, code = timed([path] + args, env, devnull)
            wall[b].append(w)
            cpu[b].append(c)
            if code != 0:
                print(f"{b}: exited {code}", file=sys.stderr)
                return 1
    first = statistics.median(wall[bins[0]])
    for b in bins:
        w = statistics.median(wall[b])
        p25 = statistics.quantiles(wall[b], n=4)[0] if len(wall[b]) > 1 else w
        print(f"{b:40} wall median {w * 1e3:7.2f} ms (p25 {p25 * 1e3:7.2f})  {w / first:5.2f}x"
              f"   cpu median {statistics.median(cpu[b]) * 1e3:7.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
