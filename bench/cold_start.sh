#!/usr/bin/env bash
# Start-up cost: one `pare encode` of a small file per process, as a program that calls the
# CLI per response pays it. `--format auto` counts tokens (it builds nothing: the tokenizer
# tables are read in place), `--format json` does not; the ratio is what counting costs a
# one-shot call. Checks first that the auto output expands to the json output.
#
#   bench/cold_start.sh [--runs N] [--no-build] [FILE]
#
#   FILE        default examples/payloads/s1_entity.json (415 bytes)
#   --runs N    runs per command, best (min) wall time and max peak RSS; default 20
# Environment: PARE_BIN (default target/release/pare; when set, nothing is built), PYTHON.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. bench/lib.sh
RUNS=20
BUILD=1
FILE=examples/payloads/s1_entity.json
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="${2:?--runs needs a value}"; shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) bench_help "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "cold_start.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    *) FILE="$1" ;;
  esac
  shift
done
PY="${PYTHON:-python3}"
bench_pare_bin "$BUILD"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PARE_BIN" encode "$FILE" --format auto > "$tmp/auto.txt"
"$PARE_BIN" encode "$FILE" --format json > "$tmp/json.txt"
"$PARE_BIN" expand "$tmp/auto.txt" | cmp -s - "$tmp/json.txt" \
  || { echo "cold_start.sh: the auto output does not expand to the json output" >&2; exit 1; }
echo "$FILE ($(wc -c < "$FILE") bytes), best of $RUNS, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for fmt in auto json; do
  "$PY" bench/timeit.py --runs "$RUNS" --json --label "$fmt" -- "$PARE_BIN" encode "$FILE" --format "$fmt" > "$tmp/$fmt.json"
done
"$PY" - "$tmp/auto.json" "$tmp/json.json" <<'PY'
import json, sys
a, j = (json.load(open(p)) for p in sys.argv[1:])
for name, r in (("auto", a), ("json", j)):
    print(f"encode --format {name:<4}  {r['min_s'] * 1e3:7.1f} ms  {r['peak_rss_kb'] / 1024:6.1f} MiB peak")
print(f"auto / json: {a['min_s'] / j['min_s']:.1f}x time, {a['peak_rss_kb'] / j['peak_rss_kb']:.1f}x memory")
PY
