#!/usr/bin/env bash
# `pare pack DIR` against Repomix (`repomix --compress`) on whole source trees from this
# machine, side by side in one run: a Python tree (the standard library's asyncio) and a
# Rust tree (serde_json from the cargo registry), or the trees given.
#
#   bench/pack_tree.sh [--runs N] [--no-build] [TREE...]
#
#   --runs N     runs per command, best (min) wall time is reported; default 3
#   --no-build   don't run cargo build; use $PARE_BIN as it is
#   TREE         directories to pack (default: python3's asyncio, ~/.cargo serde_json-*)
#
# Each tree is copied to a scratch directory (without __pycache__) so both tools read the
# same files. Repomix packs everything (no budget) and we count its output; pare packs the
# same directory with `pare pack DIR` at a budget equal to Repomix's output tokens, and at a
# quarter of it. For each output: o200k tokens by the reference counter
# (/work/shared/tools/peers.sh count, gpt-tokenizer), whether it is within the budget,
# signature recall — the fraction of the tree's definition names (Python `def`/`class`;
# Rust `fn`/`struct`/`enum`/`trait`/`union`/`type`/`mod` names and `impl` target types)
# that appear in the output as a word — and best wall time of --runs runs (whole process).
# Environment: PARE_BENCH_DIR (default /tmp/pare-bench), PARE_BIN (default
# target/release/pare), PEERS (default /work/shared/tools/peers.sh, else scripts/peers.sh),
# PYTHON (default python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. bench/lib.sh

RUNS=3
BUILD=1
TREES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="${2:?--runs needs a value}"; shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) bench_help "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "pack_tree.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    *) TREES+=("$1") ;;
  esac
  shift
done

PY="${PYTHON:-python3}"
BENCH="${PARE_BENCH_DIR:-/tmp/pare-bench}"
DIR="$BENCH/pack-tree"
PARE_BIN="${PARE_BIN:-target/release/pare}"
PEERS="${PEERS:-/work/shared/tools/peers.sh}"
[ -x "$PEERS" ] || PEERS="scripts/peers.sh"
REPOMIX_DIR="$BENCH/repomix"
mkdir -p "$DIR" "$REPOMIX_DIR"
if [ ! -x "$REPOMIX_DIR/node_modules/.bin/repomix" ]; then
  (cd "$REPOMIX_DIR" && npm install --no-audit --no-fund --silent repomix@1.18.1 >&2)
fi
REPOMIX="$REPOMIX_DIR/node_modules/.bin/repomix"
[ "$BUILD" = 1 ] && cargo build --release -p pare-llm
if [ ${#TREES[@]} -eq 0 ]; then
  TREES+=("$("$PY" -c 'import asyncio, os; print(os.path.dirname(asyncio.__file__))')")
  TREES+=("$(ls -d "$HOME"/.cargo/registry/src/*/serde_json-* | sort -V | tail -1)")
fi

echo "repomix $("$REPOMIX" --version) (--compress --style markdown --no-file-summary --no-directory-structure); pare $("$PARE_BIN" --version); tokens by $PEERS (o200k_base)"
for TREE in "${TREES[@]}"; do
  NAME="$(basename "$TREE")"
  WORK="$DIR/$NAME"
  rm -rf "$WORK" && mkdir -p "$WORK"
  cp -r "$TREE" "$WORK/src"
  find "$WORK/src" -name __pycache__ -type d -prune -exec rm -rf {} +
  OUT="$WORK/out"
  mkdir -p "$OUT"
  RM_ARGS=(--compress --style markdown --quiet --no-file-summary --no-directory-structure)
  (cd "$WORK" && "$REPOMIX" "${RM_ARGS[@]}" -o "$OUT/repomix.md" src)
  RM_TOKENS=$(bash "$PEERS" count "$OUT/repomix.md" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["tokens"])')
  QUARTER=$((RM_TOKENS / 4))
  "$PARE_BIN" pack "$WORK/src" --budget "$RM_TOKENS" -o "$OUT/pare.equal.md" 2>"$OUT/pare.stderr"
  "$PARE_BIN" pack "$WORK/src" --budget "$QUARTER" -o "$OUT/pare.quarter.md" 2>>"$OUT/pare.stderr"
  "$PY" bench/timeit.py --runs "$RUNS" --json --label repomix -- bash -c "cd '$WORK' && '$REPOMIX' ${RM_ARGS[*]} -o /dev/null src" > "$OUT/t.repomix.json"
  "$PY" bench/timeit.py --runs "$RUNS" --json --label pare.equal -- "$PARE_BIN" pack "$WORK/src" --budget "$RM_TOKENS" > "$OUT/t.pare.equal.json"
  "$PY" bench/timeit.py --runs "$RUNS" --json --label pare.quarter -- "$PARE_BIN" pack "$WORK/src" --budget "$QUARTER" > "$OUT/t.pare.quarter.json"
  "$PY" - "$WORK" "$RM_TOKENS" "$QUARTER" "$PEERS" <<'PY'
import json, os, re, subprocess, sys
work, equal, quarter, peers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
src, out = os.path.join(work, "src"), os.path.join(work, "out")
PY_SIG = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", re.M)
RS_SIG = re.compile(r"\b(?:fn|struct|enum|trait|union|type|mod)\s+(\w+)")
RS_IMPL = re.compile(r"\bimpl\b(?:\s*<[^{;]*?>)?\s+(?:[\w:]+(?:<[^{;]*?>)?\s+for\s+)?(?:[\w]+::)*(\w+)")
names, files, size, lines = set(), 0, 0, 0
for d, _, fs in os.walk(src):
    for f in fs:
        p = os.path.join(d, f)
        size += os.path.getsize(p)
        files += 1
        if not f.endswith((".py", ".rs")):
            continue
        text = open(p, encoding="utf-8", errors="replace").read()
        lines += text.count("\n")
        if f.endswith(".py"):
            names |= set(PY_SIG.findall(text))
        else:
            names |= set(RS_SIG.findall(text)) | set(RS_IMPL.findall(text))
def tokens(path):
    r = subprocess.run(["bash", peers, "count", path], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["tokens"]
def recall(path):
    words = set(re.findall(r"\w+", open(path, encoding="utf-8", errors="replace").read()))
    return len(names & words) / max(1, len(names))
def best(label):
    return json.load(open(os.path.join(out, f"t.{label}.json")))["min_s"]
print(f"\n== {os.path.basename(work)}: {files} files, {size / 1024:.0f} KiB, {lines} lines of .py/.rs, {len(names)} definition names")
rows = [("repomix --compress", "repomix.md", None, "repomix"),
        ("pare pack (equal budget)", "pare.equal.md", equal, "pare.equal"),
        ("pare pack (quarter)", "pare.quarter.md", quarter, "pare.quarter")]
print(f"{'output':<26} {'budget':>8} {'tokens':>8} {'within':>7} {'sig recall':>11} {'best s':>8}")
res = {}
for label, f, budget, t in rows:
    n, r, s = tokens(os.path.join(out, f)), recall(os.path.join(out, f)), best(t)
    res[t] = (n, r, s)
    within = "-" if budget is None else ("yes" if n <= budget else "NO")
    print(f"{label:<26} {budget if budget else '-':>8} {n:>8} {within:>7} {r:>10.1%} {s:>8.3f}")
rm, eq, qu = res["repomix"], res["pare.equal"], res["pare.quarter"]
print(f"ratios: pare(equal)/repomix tokens {eq[0] / rm[0]:.2f}, recall {eq[1] / max(rm[1], 1e-9):.2f}; "
      f"pare(quarter)/repomix tokens {qu[0] / rm[0]:.2f}, recall {qu[1] / max(rm[1], 1e-9):.2f}; "
      f"repomix/pare(equal) wall {rm[2] / eq[2]:.1f}x")
PY
  if [ -s "$OUT/pare.stderr" ]; then sed 's/^/  (pare) /' "$OUT/pare.stderr" | sort -u | head -3; fi
done
