#!/usr/bin/env bash
# Whole-process comparison of `pare pack` with Repomix (`repomix --compress`, the tree-sitter
# code compressor issue 4 names), on the same source files read from this machine (Python's
# standard library; nothing is committed).
#
#   bench/pack_compare.sh [--files N] [--runs N] [--no-build]
#
#   --files N    how many .py files (the first N by name under 60 kB); default 80
#   --runs N     runs per command, best (min) wall time is reported; default 3
#   --no-build   don't run cargo build; use $PARE_BIN as it is
#
# Repomix has no budget: it packs everything and reports the size. So pare packs the same
# files as JSONL chunks (scores 0.5–1.0 from a fixed hash of the path) at a budget equal to
# Repomix's own output, and at a quarter of it. For each output: o200k tokens (by the
# reference counter, scripts/peers.sh), whether it is within the budget, and how many of
# the files' `def NAME` / `class NAME` signatures it names (Repomix rewrites signature lines,
# dropping the colon, so lines can't be compared verbatim).
# Environment: PARE_BENCH_DIR (default /tmp/pare-bench), PARE_BIN (default
# target/release/pare), PYTHON (default python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. bench/lib.sh

FILES=80
RUNS=3
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --files) FILES="${2:?--files needs a value}"; shift ;;
    --runs) RUNS="${2:?--runs needs a value}"; shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) bench_help "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "pack_compare.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

PY="${PYTHON:-python3}"
DIR="${PARE_BENCH_DIR:-/tmp/pare-bench}/pack"
PARE_BIN="${PARE_BIN:-target/release/pare}"
REPOMIX_DIR="${PARE_BENCH_DIR:-/tmp/pare-bench}/repomix"
mkdir -p "$DIR" "$REPOMIX_DIR"
if [ ! -x "$REPOMIX_DIR/node_modules/.bin/repomix" ]; then
  (cd "$REPOMIX_DIR" && npm install --no-audit --no-fund --silent repomix@1.18.1 >&2)
fi
REPOMIX="$REPOMIX_DIR/node_modules/.bin/repomix"
[ "$BUILD" = 1 ] && cargo build --release -p pare-llm

# The same files for both: a directory for Repomix, JSONL chunks for pare.
rm -rf "$DIR/src" && mkdir -p "$DIR/src"
"$PY" - "$FILES" "$DIR" <<'PY'
import hashlib, json, os, shutil, sys, sysconfig
n, out = int(sys.argv[1]), sys.argv[2]
lib = sysconfig.get_paths()["stdlib"]
names = sorted(f for f in os.listdir(lib) if f.endswith(".py") and os.path.getsize(os.path.join(lib, f)) < 60_000)[:n]
with open(os.path.join(out, "chunks.jsonl"), "w") as jsonl:
    for name in names:
        shutil.copy(os.path.join(lib, name), os.path.join(out, "src", name))
        text = open(os.path.join(lib, name), encoding="utf-8", errors="replace").read()
        # Every file is relevant here (Repomix has no scores): 0.5–1.0, above the threshold.
        score = 0.5 + int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF / 2
        jsonl.write(json.dumps({"id": name, "path": "src/" + name, "score": round(score, 4), "text": text}) + "\n")
print(f"{len(names)} files from {lib}", file=sys.stderr)
PY

echo "== outputs"
(cd "$DIR" && "$REPOMIX" --compress --style markdown --quiet --no-file-summary --no-directory-structure -o "$DIR/out.repomix.md" src)
REPOMIX_TOKENS=$(bash scripts/peers.sh count "$DIR/out.repomix.md" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["tokens"])')
QUARTER=$((REPOMIX_TOKENS / 4))
# Every file matters here, so pare also runs with `breadth = true` (signatures of every file
# first, then detail best first) beside its default best-first fill.
printf '[pack]\nbreadth = true\n' > "$DIR/breadth.toml"
"$PARE_BIN" pack "$DIR/chunks.jsonl" --jsonl --budget "$REPOMIX_TOKENS" > "$DIR/out.pare.md"
"$PARE_BIN" pack "$DIR/chunks.jsonl" --jsonl --budget "$REPOMIX_TOKENS" --policy "$DIR/breadth.toml" > "$DIR/out.breadth.md"
"$PARE_BIN" pack "$DIR/chunks.jsonl" --jsonl --budget "$QUARTER" --policy "$DIR/breadth.toml" > "$DIR/out.breadth.quarter.md"

"$PY" - "$DIR" "$REPOMIX_TOKENS" "$QUARTER" <<'PY'
import json, os, re, subprocess, sys
d, equal, quarter = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
SIG = re.compile(r"^\s*(?:async\s+)?(def|class)\s+(\w+)", re.M)
def names(text):
    return {f"{kind} {name}" for kind, name in SIG.findall(text)}
sigs = set()
for name in os.listdir(os.path.join(d, "src")):
    sigs |= names(open(os.path.join(d, "src", name), encoding="utf-8", errors="replace").read())
def recall(path):
    shown = names(open(path, encoding="utf-8", errors="replace").read())
    return len(sigs & shown) / len(sigs)
def tokens(path):
    out = subprocess.run(["bash", "scripts/peers.sh", "count", path], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["tokens"]
print(f"{'output':<28} {'budget':>8} {'tokens':>8} {'within':>7} {'signature recall':>17}")
for label, path, budget in [("repomix --compress", "out.repomix.md", None),
                            ("pare pack (equal budget)", "out.pare.md", equal),
                            ("pare, breadth (equal)", "out.breadth.md", equal),
                            ("pare, breadth (quarter)", "out.breadth.quarter.md", quarter)]:
    t = tokens(os.path.join(d, path))
    within = "-" if budget is None else ("yes" if t <= budget else "NO")
    print(f"{label:<28} {budget if budget else '-':>8} {t:>8} {within:>7} {recall(os.path.join(d, path)):>16.1%}")
print(f"({len(sigs)} distinct def/class names in the files)")
PY

echo "== timing, best of $RUNS"
"$PY" bench/timeit.py --runs "$RUNS" --json --label repomix -- bash -c "cd '$DIR' && '$REPOMIX' --compress --style markdown --quiet --no-file-summary --no-directory-structure -o /dev/null src" > "$DIR/t.repomix.json"
"$PY" bench/timeit.py --runs "$RUNS" --json --label pare-pack -- "$PARE_BIN" pack "$DIR/chunks.jsonl" --jsonl --budget "$REPOMIX_TOKENS" --policy "$DIR/breadth.toml" > "$DIR/t.pare.json"
"$PY" - "$DIR/t.repomix.json" "$DIR/t.pare.json" <<'PY'
import json, sys
rows = [json.load(open(p)) for p in sys.argv[1:]]
print(f"{'command':<10} {'best s':>8} {'peak RSS MiB':>13}")
for r in rows:
    print(f"{r['label']:<10} {r['min_s']:>8.3f} {r['peak_rss_kb'] / 1024:>13.0f}")
print(f"repomix/pare-pack = {rows[0]['min_s'] / rows[1]['min_s']:.1f}x wall")
PY
