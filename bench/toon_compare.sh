#!/usr/bin/env bash
# Whole-process TOON encoding speed: `pare encode --format toon` against the reference
# encoder (`@toon-format/toon` in node: JSON.parse + encode, as scripts/peers.sh runs it),
# on one large list_entities payload; also `pare encode --format auto` for scale.
#
#   bench/toon_compare.sh [--mb N] [--runs N] [--no-build]
#
#   --mb N       payload size in MB (10**6 bytes); default 70
#   --runs N     runs per command, best (min) wall time is reported; default 3
#   --no-build   don't run cargo build; use $PARE_BIN as it is
#
# Checks first that both encoders print the same bytes on the payload (exit 1 if not).
# Environment: PARE_BENCH_DIR (default /tmp/pare-bench), PARE_BIN (default
# target/release/pare), PEERS_DIR (default /tmp/pare-peers), PYTHON (default python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. bench/lib.sh

MB=70
RUNS=3
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) MB="${2:?--mb needs a value}"; shift ;;
    --runs) RUNS="${2:?--runs needs a value}"; shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) bench_help "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "toon_compare.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

PY="${PYTHON:-python3}"
DIR="${PARE_BENCH_DIR:-/tmp/pare-bench}"
PEERS="${PEERS_DIR:-/tmp/pare-peers}"
PARE_BIN="${PARE_BIN:-target/release/pare}"
mkdir -p "$DIR"
FILE="$DIR/entities_${MB}mb.json"
[ -s "$FILE" ] || "$PY" bench/gen_payload.py --mb "$MB" --out "$FILE"
if [ ! -d "$PEERS/node_modules/@toon-format/toon" ]; then
  bash scripts/peers.sh install >/dev/null || { echo "toon_compare.sh: cannot install the reference peers" >&2; exit 1; }
fi
[ "$BUILD" = 1 ] && cargo build --release -p pare-llm

# The reference, exactly as peers.sh runs it, from a file so node's start-up is counted.
REF_JS="$DIR/toon_ref.cjs"
cat > "$REF_JS" <<'JS'
const fs = require('fs');
const { encode } = require('@toon-format/toon');
process.stdout.write(encode(JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))));
JS

echo "== same bytes? ($FILE, $(stat -c %s "$FILE") bytes)"
NODE_PATH="$PEERS/node_modules" node --max-old-space-size=8192 "$REF_JS" "$FILE" > "$DIR/out.ref.toon"
"$PARE_BIN" encode "$FILE" --format toon | head -c -1 > "$DIR/out.pare.toon"
if cmp -s "$DIR/out.ref.toon" "$DIR/out.pare.toon"; then
  echo "identical ($(stat -c %s "$DIR/out.pare.toon") bytes)"
else
  echo "toon_compare.sh: pare's TOON differs from the reference's" >&2
  cmp "$DIR/out.ref.toon" "$DIR/out.pare.toon" >&2 || true
  exit 1
fi

echo "== timing, best of $RUNS"
export NODE_PATH="$PEERS/node_modules"
"$PY" bench/timeit.py --runs "$RUNS" --json --label reference -- node --max-old-space-size=8192 "$REF_JS" "$FILE" > "$DIR/t.ref.json"
"$PY" bench/timeit.py --runs "$RUNS" --json --label pare-toon -- "$PARE_BIN" encode "$FILE" --format toon > "$DIR/t.pare.json"
"$PY" bench/timeit.py --runs "$RUNS" --json --label pare-auto -- "$PARE_BIN" encode "$FILE" --format auto > "$DIR/t.auto.json"
"$PY" - "$DIR/t.ref.json" "$DIR/t.pare.json" "$DIR/t.auto.json" <<'PY'
import json, sys
rows = [json.load(open(p)) for p in sys.argv[1:]]
print(f"{'command':<10} {'best s':>8} {'cpu s':>8} {'peak RSS MiB':>13}")
for r in rows:
    r["cpu"] = r["best_user_s"] + r["best_sys_s"]
    print(f"{r['label']:<10} {r['min_s']:>8.3f} {r['cpu']:>8.3f} {r['peak_rss_kb'] / 1024:>13.0f}")
ref, toon = rows[0], rows[1]
print(f"reference/pare-toon = {ref['min_s'] / toon['min_s']:.1f}x wall, {ref['cpu'] / toon['cpu']:.1f}x cpu")
PY
