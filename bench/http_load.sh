#!/usr/bin/env bash
# `pare http` under load, loopback only: nginx serves a ~100 KB JSON file (the checked-in
# entities payload), `pare http` (release build) shapes it by the S1 entities policy, and
# crates/pare-http/examples/http_load.rs drives 50 keep-alive clients for 60 s straight to
# nginx, then 60 s through pare. Prints the load generator's JSON (throughput, p50/p99
# added latency, errors, pare's RSS at the start and end of its phase).
#   bench/http_load.sh [CLIENTS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
clients="${1:-50}"; seconds="${2:-60}"
cargo build --release --quiet -p pare-llm
cargo build --release --quiet -p pare-http --example http_load
dir=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -p "$dir/www"
cp examples/payloads/entities_systems.json "$dir/www/data.json"
up=$(bench_free_port); via=$(bench_free_port)
sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$up|g" crates/pare-cli/tests/rest/nginx.conf.in > "$dir/nginx.conf"
nginx -p "$dir" -c "$dir/nginx.conf" &
bench_entities_route "$dir/policy.toml" /data.json
target/release/pare http --upstream "http://127.0.0.1:$up" --listen "$via" --policy "$dir/policy.toml" --quiet &
pare_pid=$!
up_now() { curl -sf "http://127.0.0.1:$via/data.json" -o /dev/null; }
for _ in $(seq 50); do up_now && break; sleep 0.1; done
up_now || { echo "pare http did not come up" >&2; exit 1; }
echo "upstream body: $(stat -c %s "$dir/www/data.json") bytes; shaped: $(curl -s "http://127.0.0.1:$via/data.json" | wc -c) bytes" >&2
target/release/examples/http_load --direct "http://127.0.0.1:$up/data.json" --via "http://127.0.0.1:$via/data.json" \
  --clients "$clients" --seconds "$seconds" --pid "$pare_pid"
