#!/usr/bin/env bash
# Exact token counting: `pare count` and `pare stats --json` against the reference counter,
# gpt-tokenizer 3.4.0 (`countTokens`, o200k_base) in node, on large texts of several kinds,
# from one run. The counts are checked equal first; then each side is timed as a whole
# process (best of --runs), and gpt-tokenizer also in-process (its count alone, after node
# has started and read the file). The JSON texts are one JSON array each, so `pare stats`
# (which also attributes the tokens to paths) runs on them too.
#
#   bench/count_compare.sh [--runs N] [--mb N] [--no-build]
#
#   --runs N     runs per command, best (min) reported; default 5
#   --mb N       approximate size of each text in MB; default 5
#   --no-build   don't run cargo build; use $PARE_BIN as it is
#
# Texts (made in $PARE_BENCH_DIR/count, default /tmp/pare-bench/count, from checked-in
# files): pretty JSON and minified JSON (examples/payloads repeated), prose (docs/*.md),
# code (crates/**/*.rs), non-ASCII (examples/payloads with their strings' letters mapped to
# Greek, CJK and emoji). Environment: PARE_BIN (default target/release/pare; when set, nothing
# is built), PYTHON.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. bench/lib.sh
RUNS=5
MB=5
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="${2:?--runs needs a value}"; shift ;;
    --mb) MB="${2:?--mb needs a value}"; shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) bench_help "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "count_compare.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
PY="${PYTHON:-python3}"
bench_pare_bin "$BUILD"
DIR="${PARE_BENCH_DIR:-/tmp/pare-bench}/count"
mkdir -p "$DIR"
bash scripts/peers.sh install >/dev/null || { echo "count_compare.sh: scripts/peers.sh install failed" >&2; exit 1; }
PEERS="${PEERS_DIR:-/tmp/pare-peers}/node_modules"

"$PY" - "$DIR" "$MB" <<'PY'
import glob, json, os, sys
out, mb = sys.argv[1], float(sys.argv[2])
want = int(mb * 1e6)
def fill(parts, sep=""):
    text, i = [], 0
    size = 0
    while size < want:
        p = parts[i % len(parts)]; text.append(p); size += len(p.encode()) + len(sep); i += 1
    return sep.join(text)
payloads = [json.load(open(f)) for f in sorted(glob.glob("examples/payloads/*.json"))]
def mapped(v):
    table = str.maketrans("abcdefghijklmnopqrstuvwxyz", "αβγδεζηθικλμνξοπρστυφχψωάέ")
    if isinstance(v, str):
        return "".join(ch.translate(table) if i % 3 else ("中文" if ch.isalpha() else ch) for i, ch in enumerate(v)) + ("🙂" if len(v) % 5 == 0 else "")
    if isinstance(v, list): return [mapped(x) for x in v]
    if isinstance(v, dict): return {k: mapped(x) for k, x in v.items()}
    return v
def array(items, **dump):
    """One JSON text (an array of the items, repeated to the size), so `pare stats` takes it."""
    out, size, i = [], 0, 0
    while size < want:
        p = items[i % len(items)]; out.append(p); size += len(json.dumps(p, ensure_ascii=False, **dump).encode()); i += 1
    return json.dumps(out, ensure_ascii=False, **dump)
texts = {
    "json_pretty": array(payloads, indent=2),
    "json_minified": array(payloads, separators=(",", ":")),
    "prose": fill([open(f, encoding="utf-8").read() for f in sorted(glob.glob("docs/*.md"))], "\n"),
    "code": fill([open(f, encoding="utf-8").read() for f in sorted(glob.glob("crates/**/*.rs", recursive=True))], "\n"),
    "non_ascii": array([mapped(p) for p in payloads], indent=2),
}
for name, t in texts.items():
    with open(os.path.join(out, name + ".txt"), "w", encoding="utf-8") as f:
        f.write(t)
PY

cat > "$DIR/count.js" <<'JS'
// Whole process: read each file, count it; print the count and the in-process count time.
// `<|endoftext|>` in a text is ordinary text (as pare counts it), not a special token that
// countTokens would otherwise refuse.
const fs = require('fs');
const { countTokens } = require('gpt-tokenizer');
for (const f of process.argv.slice(2)) {
  const text = fs.readFileSync(f, 'utf8');
  const t0 = process.hrtime.bigint();
  const n = countTokens(text, { disallowedSpecial: new Set() });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  console.log(JSON.stringify({ tokens: n, count_ms: ms }));
}
JS

echo "pare $("$PARE_BIN" --version | cut -d' ' -f2) vs gpt-tokenizer $(node -p "require('$PEERS/gpt-tokenizer/package.json').version") (node $(node --version)); best of $RUNS; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %6s %9s %8s %8s %8s %7s %8s %8s %7s\n' text MB tokens "count s" "node s" "node in" ratio "MB/s/cpu" "stats s" ratio
for f in "$DIR"/json_pretty.txt "$DIR"/json_minified.txt "$DIR"/prose.txt "$DIR"/code.txt "$DIR"/non_ascii.txt; do
  name=$(basename "$f" .txt)
  mine=$("$PARE_BIN" count --json "$f" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["total"])')
  ref=$(NODE_PATH="$PEERS" node "$DIR/count.js" "$f" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["tokens"])')
  if [ "$mine" != "$ref" ]; then
    echo "count_compare.sh: $name: pare counts $mine, gpt-tokenizer $ref — not comparing speed" >&2
    exit 1
  fi
  # `pare stats --json` (the exact count and the per-path profile) on the JSON texts.
  stats_s=-
  if [ "${name#json_}" != "$name" ] || [ "$name" = non_ascii ]; then
    in_stats=$("$PARE_BIN" stats --json "$f" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["tokens"])')
    if [ "$in_stats" != "$ref" ]; then
      echo "count_compare.sh: $name: pare stats counts $in_stats, gpt-tokenizer $ref — not comparing speed" >&2
      exit 1
    fi
    stats_s=$("$PY" bench/timeit.py --runs "$RUNS" --json -- "$PARE_BIN" stats --json "$f" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["min_s"])')
  fi
  pare_json=$("$PY" bench/timeit.py --runs "$RUNS" --json -- "$PARE_BIN" count "$f")
  node_s=$(NODE_PATH="$PEERS" "$PY" bench/timeit.py --runs "$RUNS" --json -- node "$DIR/count.js" "$f" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["min_s"])')
  node_count_s=$(for _ in $(seq "$RUNS"); do NODE_PATH="$PEERS" node "$DIR/count.js" "$f"; done \
    | "$PY" -c 'import json,sys; print(min(json.loads(l)["count_ms"] for l in sys.stdin) / 1000)')
  "$PY" - "$name" "$f" "$mine" "$pare_json" "$node_s" "$node_count_s" "$stats_s" <<'PY'
import json, os, sys
name, f, tokens, pare = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
node_s, node_count_s = float(sys.argv[5]), float(sys.argv[6])
mb = os.path.getsize(f) / 1e6
pare_s, pare_cpu = pare["min_s"], pare["best_user_s"] + pare["best_sys_s"]
line = f"{name:<14} {mb:6.2f} {tokens:9d} {pare_s:8.3f} {node_s:8.3f} {node_count_s:8.3f} {node_s / pare_s:6.1f}x {mb / max(pare_cpu, 1e-3):8.0f}"
if sys.argv[7] != "-":
    stats_s = float(sys.argv[7])
    line += f" {stats_s:8.3f} {node_s / stats_s:6.1f}x"
print(line)
PY
done
echo "count s / stats s: pare count / pare stats --json, whole process (start-up and reading included);"
echo "node s: gpt-tokenizer countTokens, whole process; node in: its count alone, in-process;"
echo "ratio: node s / pare's; MB/s/cpu: MB / pare count's CPU seconds (user + sys)"
