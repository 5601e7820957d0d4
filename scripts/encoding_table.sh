#!/usr/bin/env bash
# The README's encodings table: o200k_base tokens (counted by the reference counter,
# scripts/peers.sh) of pretty JSON, minified JSON, TOON (reference encoder) and
# `pare encode --format auto`, per corpus file and per real.sh payload, with
# auto / min(minified, TOON) and its geometric mean.
#
#   scripts/encoding_table.sh [FILE.json ...]    (default: the corpus, checked in, and /tmp/pare-real/*.json)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PARE_BIN="${PARE_BIN:-target/release/pare}"
PEERS=scripts/peers.sh
[ -x "$PARE_BIN" ] || cargo build --release -q -p pare-llm
if [ $# -eq 0 ]; then
  [ -d /tmp/pare-real ] || bash scripts/real_payloads.sh /tmp/pare-real >/dev/null 2>&1 || true
  set -- examples/payloads/entities_systems.json examples/payloads/{narrative_day,search_memory,semantic_search_full}.json \
    examples/payloads/vendor_graph_full.json examples/payloads/website_usage.json /tmp/pare-real/*.json
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for f in "$@"; do
  "$PARE_BIN" encode "$f" --format auto | head -c -1 > "$tmp/$(basename "$f" .json).auto"
done
bash "$PEERS" tokens "$@" > "$tmp/base.jsonl"
bash "$PEERS" count "$tmp"/*.auto > "$tmp/auto.jsonl"
python3 - "$tmp/base.jsonl" "$tmp/auto.jsonl" <<'PY'
import json, math, os, sys
name = lambda p: os.path.basename(p).rsplit(".", 1)[0]
base = [json.loads(l) for l in open(sys.argv[1])]
auto = {name(j["file"]): j["tokens"] for j in map(json.loads, open(sys.argv[2]))}
print("| payload | pretty | minified | TOON | pare auto | auto / min(minified, TOON) |")
print("|---|---:|---:|---:|---:|---:|")
logs = []
for b in base:
    n = name(b["file"]); a = auto[n]; best = min(b["minified"], b["toon"])
    logs.append(math.log(a / best))
    print(f"| {n} | {b['pretty']} | {b['minified']} | {b['toon']} | {a} | {a / best:.3f} |")
print(f"\ngeometric mean of auto / min(minified, TOON): {math.exp(sum(logs) / len(logs)):.3f} over {len(logs)} payloads")
PY
