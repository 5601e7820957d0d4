#!/usr/bin/env bash
# `pare pack DIR` (the map) against Aider's repo map and `repomix --compress` at 1k/2k/4k/8k
# tokens on whole trees (default: Python's asyncio and serde_json from the cargo registry):
# tokens by the reference counter, within the budget, recall of top-level names, time.
# Installs aider-chat (a venv under $PARE_BENCH_DIR) and Repomix on first use. See
# bench/pack_map.py for what is measured and how each tool is driven.
#   bench/pack_map.sh [TREE...]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
case "${1:-}" in -h|--help) bench_help "${BASH_SOURCE[0]}"; exit 0 ;; esac
BENCH="${PARE_BENCH_DIR:-/tmp/pare-bench}"
mkdir -p "$BENCH"
bench_pare_bin 1
AIDER_VENV="$BENCH/aider-venv"
if [ ! -x "$AIDER_VENV/bin/python" ] || ! "$AIDER_VENV/bin/python" -c 'import aider.repomap' 2>/dev/null; then
  python3 -m venv "$AIDER_VENV"
  "$AIDER_VENV/bin/pip" install -q aider-chat==0.86.2 >&2
fi
REPOMIX_DIR="$BENCH/repomix"
mkdir -p "$REPOMIX_DIR"
if [ ! -x "$REPOMIX_DIR/node_modules/.bin/repomix" ]; then
  (cd "$REPOMIX_DIR" && npm install --no-audit --no-fund --silent repomix@1.18.1 >&2)
fi
PEERS="${PEERS:-/work/shared/tools/peers.sh}"
[ -x "$PEERS" ] || PEERS="scripts/peers.sh"
TREES=("$@")
if [ ${#TREES[@]} -eq 0 ]; then
  TREES+=("$(python3 -c 'import asyncio, os; print(os.path.dirname(asyncio.__file__))')")
  TREES+=("$(ls -d "$HOME"/.cargo/registry/src/*/serde_json-* | sort -V | tail -1)/src")
fi
echo "pare $("$PARE_BIN" --version); aider $("$AIDER_VENV/bin/python" -c 'import aider; print(aider.__version__)'); repomix $("$REPOMIX_DIR/node_modules/.bin/repomix" --version); tokens by $PEERS (o200k_base)"
"$AIDER_VENV/bin/python" bench/pack_map.py --pare "$PWD/$PARE_BIN" --repomix "$REPOMIX_DIR/node_modules/.bin/repomix" --peers "$PEERS" "${TREES[@]}"
