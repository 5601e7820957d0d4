#!/usr/bin/env bash
# Real JSON payloads that nobody on this project wrote, made on this machine: package-registry
# metadata and system tools' JSON output (the project's shared/corpus/real.sh, so a clone has
# it too). Writes into DIR (default ./real); .ci/run makes them in /tmp/pare-real, where the
# tests look (PARE_REAL_DIR). Payloads a machine cannot make are left out.
#   real_payloads.sh [DIR]
set -uo pipefail
out="${1:-real}"; mkdir -p "$out"
npm view express --json   > "$out/npm_express.json"    2>/dev/null || echo "skip npm_express" >&2
npm view typescript --json > "$out/npm_typescript.json" 2>/dev/null || echo "skip npm_typescript" >&2
python3 -m pip inspect     > "$out/pip_inspect.json"    2>/dev/null || echo "skip pip_inspect" >&2
ip -j -d addr              > "$out/ip_addr.json"        2>/dev/null || echo "skip ip_addr" >&2
lsblk -J -O                > "$out/lsblk.json"          2>/dev/null || echo "skip lsblk" >&2
findmnt -J                 > "$out/findmnt.json"        2>/dev/null || echo "skip findmnt" >&2
for f in "$out"/*.json; do [ -s "$f" ] || rm -f "$f"; done
ls -1 "$out"
