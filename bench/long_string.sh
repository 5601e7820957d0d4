#!/usr/bin/env bash
# Paging one long JSON string: time `pare compact --budget N` on strings of growing size and
# print the slope (seconds per MB) and how the time grows, so quadratic paging shows at once.
#
#   bench/long_string.sh                 # 1, 2, 4, 8, 16, 32, 64, 100 MB of words, budget 1000
#   bench/long_string.sh --mb "1 2 4"    # other sizes
#   bench/long_string.sh --budget 25000  # another budget
#   bench/long_string.sh --no-build      # use target/release/pare as it is
#
# Linear time means the time per MB stays flat and doubling the size about doubles the time.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES="1 2 4 8 16 32 64 100"
BUDGET=1000
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) SIZES="${2:?--mb needs sizes}"; shift ;;
    --budget) BUDGET="${2:?--budget needs a number}"; shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "long_string.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "$BUILD" = 1 ] && cargo build --release --locked -q -p pare-cli
PARE=target/release/pare
DIR="${PARE_BENCH_DIR:-/tmp/pare-bench}"
mkdir -p "$DIR"
RESULTS="$DIR/long_string.tsv"
: > "$RESULTS"
for mb in $SIZES; do
  file="$DIR/string_${mb}mb.json"
  if [ ! -s "$file" ]; then
    python3 - "$mb" "$file" <<'PY'
import json, random, sys
mb, out = int(sys.argv[1]), sys.argv[2]
r = random.Random(mb)
words = ["alpha", "beta", "gamma", "delta", "report", "cache", "redis", "session", "token", "\n"]
parts, size = [], 0
while size < mb * 10**6:
    w = r.choice(words)
    parts.append(w)
    size += len(w) + 1
open(out, "w").write(json.dumps(" ".join(parts)))
PY
  fi
  start=$(date +%s.%N)
  "$PARE" compact "$file" --budget "$BUDGET" > /dev/null 2>&1
  end=$(date +%s.%N)
  secs=$(python3 -c "print(round($end - $start, 3))")
  echo -e "$mb\t$secs" >> "$RESULTS"
  echo "$mb MB: $secs s"
done
python3 - "$RESULTS" <<'PY'
import sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
n = len(rows)
if n >= 2:
    mx = sum(r[0] for r in rows) / n
    my = sum(r[1] for r in rows) / n
    slope = sum((x - mx) * (y - my) for x, y in rows) / sum((x - mx) ** 2 for x, _ in rows)
    print(f"slope: {slope:.4f} s per MB (least squares over {n} sizes)")
    (x0, y0), (x1, y1) = rows[0], rows[-1]
    print(f"{x0:g} -> {x1:g} MB ({x1 / x0:.0f}x): {y0:.3f} -> {y1:.3f} s ({y1 / max(y0, 1e-3):.1f}x)")
PY
