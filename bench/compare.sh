#!/usr/bin/env bash
# Whole-process speed comparison: pare vs the seeds' Python compact_entity vs jq.
#
#   bench/compare.sh [--quick] [--mb N] [--runs N] [--no-pare] [--no-build] [--check] [--floor]
#
# Before timing, pare's output under the ADR's own rules (bench/adr010.toml) is checked equal
# to compact_entity.py's as JSON values (as --check does); then pare is timed with the
# shipped policy (which also hoists and keys relationships by type, losslessly) and with the
# ADR's (`pare-adr`: the same output as python), then python and jq.
#
#   --quick      10 MB payload instead of 70 MB (CI smoke use)
#   --mb N       payload size in MB (10**6 bytes); default 70
#   --runs N     runs per command, best (min) wall time is reported; default 3
#   --no-pare    skip the build and the pare leg (time only the python and jq peers)
#   --no-build   don't run cargo build; use $PARE_BIN as it is
#   --check      don't time anything: run pare and compact_entity.py once each and
#                verify their outputs are equal as JSON values; exit 1 if not
#   --floor      also time the floor: reading and parsing the payload with sonic-rs (the
#                fastest parser found for Rust; bench/floor, built for this CPU), nothing more
#
# Environment:
#   PARE_BENCH_DIR  where payloads and outputs go        (default /tmp/pare-bench)
#   PARE_BIN        pare executable                      (default target/release/pare;
#                   when set, the cargo build is skipped -- it is a substitute)
#   PARE_POLICY     policy for `pare compact`            (default examples/policies/entities.toml)
#   PYTHON          python interpreter                   (default python3)
#
# Relative paths are taken from the repository root.  Exits non-zero if the
# build, the generator or any timed command fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. bench/lib.sh

MB=70
RUNS=3
WANT_PARE=1
BUILD=1
CHECK=0
FLOOR=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) MB=10 ;;
    --mb) MB="${2:?--mb needs a value}"; shift ;;
    --mb=*) MB="${1#--mb=}" ;;
    --runs) RUNS="${2:?--runs needs a value}"; shift ;;
    --runs=*) RUNS="${1#--runs=}" ;;
    --no-pare) WANT_PARE=0 ;;
    --no-build) BUILD=0 ;;
    --check) CHECK=1 ;;
    --floor) FLOOR=1 ;;
    -h|--help) bench_help "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "compare.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

PY="${PYTHON:-python3}"
DIR="${PARE_BENCH_DIR:-/tmp/pare-bench}"
POLICY="${PARE_POLICY:-examples/policies/entities.toml}"
# The check compares with the ADR's own rules; the shipped policy also hoists and keys
# relationships by type (both lossless).
ADR_POLICY="bench/adr010.toml"
[ "$CHECK" = 1 ] && [ -z "${PARE_POLICY:-}" ] && POLICY="$ADR_POLICY"
if [ -n "${PARE_BIN:-}" ]; then
  BUILD=0
else
  PARE_BIN="target/release/pare"
fi
if [ "$CHECK" = 1 ] && [ "$WANT_PARE" = 0 ]; then
  echo "compare.sh: --check needs pare; drop --no-pare" >&2
  exit 2
fi

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
FILE="$DIR/entities_${MB}mb.json"

# 1. payload -----------------------------------------------------------------
if [ ! -s "$FILE" ]; then
  echo "== generating $FILE"
  "$PY" bench/gen_payload.py --mb "$MB" --out "$FILE"
fi
IN_BYTES=$(stat -c %s "$FILE")

# 2. pare (release build) -----------------------------------------------------
if [ "$WANT_PARE" = 1 ]; then
  if [ "$BUILD" = 1 ]; then
    echo "== cargo build --release -p pare-llm"
    cargo build --release -p pare-llm || {
      echo "compare.sh: cargo build --release -p pare-llm failed (--no-pare times only the peers)" >&2
      exit 1
    }
  fi
  if ! command -v "$PARE_BIN" >/dev/null 2>&1 && [ ! -x "$PARE_BIN" ]; then
    echo "compare.sh: pare binary not found or not executable: $PARE_BIN" >&2
    exit 1
  fi
  if [ ! -e "$POLICY" ]; then
    echo "compare.sh: policy file not found: $POLICY" >&2
    exit 1
  fi
fi

PARE_CMD=("$PARE_BIN" compact "$FILE" --policy "$POLICY" --format json)
PY_CMD=("$PY" bench/compact_entity.py "$FILE")
JQ_CMD=(jq -c . "$FILE")

# 3. pare output (ADR rules) == compact_entity.py output, as JSON values ---------
PARE_ADR_CMD=("$PARE_BIN" compact "$FILE" --policy "$ADR_POLICY" --format json)
[ "$CHECK" = 1 ] && PARE_ADR_CMD=("${PARE_CMD[@]}")
check_equal() {
  echo "== check on $FILE ($IN_BYTES bytes)"
  "${PARE_ADR_CMD[@]}" > "$DIR/out.pare.json" || { echo "compare.sh: pare failed: ${PARE_ADR_CMD[*]}" >&2; exit 1; }
  "${PY_CMD[@]}" > "$DIR/out.python.json" || { echo "compare.sh: python failed: ${PY_CMD[*]}" >&2; exit 1; }
  "$PY" - "$DIR/out.pare.json" "$DIR/out.python.json" <<'EOF'
import json, sys

def first_diff(a, b, path="$"):
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                       and not isinstance(a, bool) and not isinstance(b, bool)):
        return path, a, b
    if isinstance(a, dict):
        for k in a:
            if k not in b:
                return f"{path}.{k}", a[k], "<absent>"
        for k in b:
            if k not in a:
                return f"{path}.{k}", "<absent>", b[k]
        for k in a:
            d = first_diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return f"{path} (length)", len(a), len(b)
        return None
    return None if a == b else (path, a, b)

pare_path, py_path = sys.argv[1], sys.argv[2]
with open(pare_path, "rb") as f:
    try:
        pare = json.load(f)
    except ValueError as e:
        sys.exit(f"check FAILED: pare output is not one JSON document: {e}")
with open(py_path, "rb") as f:
    py = json.load(f)
d = first_diff(pare, py)
if d is None and pare == py:
    print("check OK: pare output == compact_entity.py output (as JSON values)")
    sys.exit(0)
path, a, b = d if d else ("$", "?", "?")
trim = lambda v: (json.dumps(v, ensure_ascii=False)[:300])
print(f"check FAILED: outputs differ; first difference at {path}", file=sys.stderr)
print(f"  pare:   {trim(a)}", file=sys.stderr)
print(f"  python: {trim(b)}", file=sys.stderr)
sys.exit(1)
EOF
}
if [ "$CHECK" = 1 ]; then
  check_equal
  exit $?
fi
if [ "$WANT_PARE" = 1 ]; then
  check_equal || exit 1
fi

# 4. timings -------------------------------------------------------------------
RESULTS="$DIR/results.jsonl"
: > "$RESULTS"

leg() {  # leg NAME CMD...   (untimed run to a file for the size + warm cache, then timed runs)
  local name="$1"; shift
  echo "== $name: $*"
  if ! "$@" > "$DIR/out.$name.json"; then
    echo "compare.sh: $name failed: $*" >&2
    exit 1
  fi
  local bytes
  bytes=$(stat -c %s "$DIR/out.$name.json")
  local line
  line=$("$PY" bench/timeit.py --runs "$RUNS" --label "$name" --json -- "$@") || {
    echo "compare.sh: $name failed during timing" >&2
    exit 1
  }
  printf '%s\n' "$line" | "$PY" -c 'import json,sys; d=json.loads(sys.stdin.read()); d["out_bytes"]=int(sys.argv[1]); print(json.dumps(d))' "$bytes" >> "$RESULTS"
}

echo "== payload: $FILE ($IN_BYTES bytes), best of $RUNS, $(nproc) CPUs, $(jq --version), $("$PY" --version 2>&1)"
read -r LOAD1 _ < /proc/loadavg || LOAD1=0
echo "== load average (1 min): $LOAD1"
if "$PY" -c 'import os,sys; sys.exit(0 if float(sys.argv[1]) > 0.5 * os.cpu_count() else 1)' "$LOAD1"; then
  echo "   warning: the machine is busy; wall times will be noisy (compare the cpu s column too)" >&2
fi
if [ "$WANT_PARE" = 1 ]; then
  leg pare "${PARE_CMD[@]}"
  leg pare-adr "${PARE_ADR_CMD[@]}"
fi
leg python "${PY_CMD[@]}"
leg jq "${JQ_CMD[@]}"
if [ "$FLOOR" = 1 ]; then
  RUSTFLAGS="-C target-cpu=native" cargo build --release --quiet --manifest-path bench/floor/Cargo.toml \
    || { echo "compare.sh: building bench/floor failed" >&2; exit 1; }
  leg floor bench/floor/target/release/parse-floor sonic-rs "$FILE"
fi

"$PY" - "$RESULTS" "$IN_BYTES" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
in_bytes = int(sys.argv[2])
by = {r["label"]: r for r in rows}
print()
print(f"input: {in_bytes} bytes")
hdr = (f"{'command':<9} {'best s':>8} {'median s':>9} {'cpu s':>7} {'peak RSS MiB':>13} "
       f"{'output bytes':>13} {'out/in':>7} {'x pare':>7}")
print(hdr)
print("-" * len(hdr))
pare = by.get("pare")
for r in rows:
    ratio = f"{r['min_s'] / pare['min_s']:.1f}x" if pare else "-"
    cpu = r["best_user_s"] + r["best_sys_s"]
    print(f"{r['label']:<9} {r['min_s']:>8.3f} {r['median_s']:>9.3f} {cpu:>7.2f} {r['peak_rss_kb'] / 1024:>13.0f} "
          f"{r['out_bytes']:>13} {r['out_bytes'] / in_bytes:>7.1%} {ratio:>7}")
print("best s/median s: wall time of the fastest/median run; cpu s: user+sys of the fastest run")
print()
if pare:
    cpu = lambda r: max(r["best_user_s"] + r["best_sys_s"], 1e-9)
    for peer in ("python", "jq"):
        if peer in by:
            print(f"{peer}/pare = {by[peer]['min_s'] / pare['min_s']:.2f} wall, "
                  f"{cpu(by[peer]) / cpu(pare):.2f} cpu   (>1: pare is faster)")
    if "pare-adr" in by and "python" in by:
        adr = by["pare-adr"]
        print(f"python/pare-adr = {by['python']['min_s'] / adr['min_s']:.2f} wall, "
              f"{cpu(by['python']) / cpu(adr):.2f} cpu   (the same output as python)")
    if "floor" in by:
        print(f"pare/floor = {pare['min_s'] / by['floor']['min_s']:.2f} wall   "
              f"(floor: read + parse with sonic-rs, nothing else)")
        if "pare-adr" in by:
            # Drops and a prune only: written as it is read, with no tree (below 1: faster
            # than building any tree).
            print(f"pare-adr/floor = {by['pare-adr']['min_s'] / by['floor']['min_s']:.2f} wall")
else:
    print("(pare leg skipped: no ratios)")
EOF
