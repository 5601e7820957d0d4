#!/usr/bin/env bash
# One long JSON string through every path a single large value can take: time each on
# strings of growing size and print its slope (seconds per MB) and how the time grows, so a
# quadratic path shows at once.
#
#   bench/long_string.sh                      # words, 1 to 100 MB, every path
#   bench/long_string.sh --text run --mb "1 2 4 8 16"   # one character repeated
#   bench/long_string.sh --path page --budget 25000
#   bench/long_string.sh --no-build           # use target/release/pare as it is
#
# Texts: `words` (words and newlines, as prose), `run` (`a` repeated: one pre-token piece
# of the whole string, BPE's worst case), `newlines` (`\n` repeated: every character
# escaped on the page), `accents` (`é` repeated: two bytes a character).
# Paths: `page` (compact --budget, JSON), `page-toon` (the same in TOON), `truncate` (a
# truncate op on the string, with its note), `toon` (encode --format toon: quoting),
# `auto` (encode --format auto: every candidate counted), `count`.
# Linear time means the time per MB stays flat and doubling the size about doubles the time.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES="1 2 4 8 16 32 64 100"
BUDGET=1000
BUILD=1
TEXT=words
PATHS="page page-toon truncate toon auto count"
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) SIZES="${2:?--mb needs sizes}"; shift ;;
    --budget) BUDGET="${2:?--budget needs a number}"; shift ;;
    --text) TEXT="${2:?--text needs words, run, newlines or accents}"; shift ;;
    --path) PATHS="${2:?--path needs one or more paths}"; shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "long_string.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$TEXT" in words | run | newlines | accents) ;; *) echo "long_string.sh: no text $TEXT" >&2; exit 2 ;; esac
[ "$BUILD" = 1 ] && cargo build --release --locked -q -p pare-llm
PARE=target/release/pare
DIR="${PARE_BENCH_DIR:-/tmp/pare-bench}"
mkdir -p "$DIR"
TRUNCATE="$DIR/truncate_root.toml"
printf '[[ops]]\nop = "truncate"\nat = ["$"]\nmax_tokens = 200\n' > "$TRUNCATE"
for mb in $SIZES; do
  file="$DIR/string_${TEXT}_${mb}mb.json"
  [ "$TEXT" = words ] && file="$DIR/string_${mb}mb.json"
  [ -s "$file" ] && continue
  python3 - "$mb" "$file" "$TEXT" <<'PY'
import json, random, sys
mb, out, text = int(sys.argv[1]), sys.argv[2], sys.argv[3]
n = mb * 10**6
if text == "words":
    r = random.Random(mb)
    words = ["alpha", "beta", "gamma", "delta", "report", "cache", "redis", "session", "token", "\n"]
    parts, size = [], 0
    while size < n:
        w = r.choice(words)
        parts.append(w)
        size += len(w) + 1
    s = " ".join(parts)
else:
    s = {"run": "a" * n, "newlines": "\n" * (n // 2), "accents": "é" * (n // 2)}[text]
open(out, "w").write(json.dumps(s, ensure_ascii=False))
PY
done
run() { # run PATH FILE
  case "$1" in
    page) "$PARE" compact "$2" --budget "$BUDGET" ;;
    page-toon) "$PARE" compact "$2" --budget "$BUDGET" --format toon ;;
    truncate) "$PARE" compact "$2" --policy "$TRUNCATE" ;;
    toon) "$PARE" encode "$2" --format toon ;;
    auto) "$PARE" encode "$2" --format auto ;;
    count) "$PARE" count "$2" ;;
    *) echo "long_string.sh: no path $1" >&2; exit 2 ;;
  esac
}
for path in $PATHS; do
  RESULTS="$DIR/long_string_${TEXT}_${path}.tsv"
  : > "$RESULTS"
  echo "== $path, $TEXT, budget $BUDGET"
  for mb in $SIZES; do
    file="$DIR/string_${TEXT}_${mb}mb.json"
    [ "$TEXT" = words ] && file="$DIR/string_${mb}mb.json"
    start=$(date +%s.%N)
    run "$path" "$file" > /dev/null 2>"$DIR/long_string.err" || { echo "  $mb MB: failed: $(tail -1 "$DIR/long_string.err")"; continue; }
    end=$(date +%s.%N)
    secs=$(python3 -c "print(round($end - $start, 3))")
    echo -e "$mb\t$secs" >> "$RESULTS"
    echo "  $mb MB: $secs s"
  done
  python3 - "$RESULTS" <<'PY'
import sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
n = len(rows)
if n >= 2:
    mx = sum(r[0] for r in rows) / n
    my = sum(r[1] for r in rows) / n
    slope = sum((x - mx) * (y - my) for x, y in rows) / sum((x - mx) ** 2 for x, _ in rows)
    (x0, y0), (x1, y1) = rows[0], rows[-1]
    print(f"  slope: {slope:.4f} s per MB (least squares over {n} sizes); "
          f"{x0:g} -> {x1:g} MB ({x1 / x0:.0f}x): {y0:.3f} -> {y1:.3f} s ({y1 / max(y0, 1e-3):.1f}x)")
PY
done
