#!/usr/bin/env bash
# `pare http` against nginx under wrk, loopback, one run: the same 120 KB JSON body
# (examples/payloads/entities_systems.json) four ways:
#   nginx direct        nginx serving the file
#   nginx as proxy      a second nginx proxy_pass-ing to the first (keep-alive upstream)
#   pare unshaped       pare http in front of the first, a route it does not shape
#   pare shaped         pare http, the route shaped by the S1 entities policy (the same
#                       body each time: after the first, reused, see crates/pare-http/src/reuse.rs)
#   pare shaped, no reuse   the same with --reuse-mib 0: every response parsed, shaped,
#                       rendered and counted
# Prints one table row each: requests/s, p50, p99 (wrk --latency), and errors.
#   bench/http_wrk.sh [CONNECTIONS] [SECONDS] [THREADS]      defaults 50 10 2
# Needs wrk and nginx (Debian: apt-get install wrk nginx).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
case "${1:-}" in -h|--help) bench_help "${BASH_SOURCE[0]}"; exit 0 ;; esac
conns="${1:-50}"; secs="${2:-10}"; threads="${3:-2}"
command -v wrk >/dev/null || { echo "http_wrk.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
bench_pare_bin 1
pare="$PARE_BIN"
dir=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -p "$dir/www"
cp examples/payloads/entities_systems.json "$dir/www/data.json"
cp examples/payloads/entities_systems.json "$dir/www/raw.json"
up=$(bench_free_port); proxy=$(bench_free_port); via=$(bench_free_port); fresh=$(bench_free_port)
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
master_process off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    types { application/json json; }
    keepalive_requests 1000000;
    upstream files { server 127.0.0.1:$up; keepalive 64; }
    server { listen 127.0.0.1:$up; root $dir/www; }
    server {
        listen 127.0.0.1:$proxy;
        location / { proxy_pass http://files; proxy_http_version 1.1; proxy_set_header Connection ""; }
    }
}
CONF
nginx -p "$dir" -c "$dir/nginx.conf" &
bench_entities_route "$dir/policy.toml" /data.json
"$pare" http --upstream "http://127.0.0.1:$up" --listen "$via" --policy "$dir/policy.toml" --quiet &
"$pare" http --upstream "http://127.0.0.1:$up" --listen "$fresh" --policy "$dir/policy.toml" --quiet --reuse-mib 0 &
for port in $via $fresh; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/data.json" -o /dev/null && break; sleep 0.1; done
done
echo "body: $(stat -c %s "$dir/www/data.json") bytes; shaped: $(curl -s "http://127.0.0.1:$via/data.json" | wc -c) bytes; wrk -t$threads -c$conns -d${secs}s" >&2
printf '%-24s %10s %9s %9s %7s\n' "" "req/s" "p50" "p99" "errors"
run() {
  local out
  out=$(wrk -t"$threads" -c"$conns" -d"${secs}s" --latency "$2")
  local rps p50 p99 errs
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  errs=$(awk '/Non-2xx|Socket errors/ {e = e $0 "; "} END {print (e == "" ? "0" : e)}' <<<"$out")
  printf '%-24s %10s %9s %9s %7s\n' "$1" "$rps" "$p50" "$p99" "$errs"
}
run "nginx direct" "http://127.0.0.1:$up/data.json"
run "nginx as proxy" "http://127.0.0.1:$proxy/data.json"
run "pare unshaped" "http://127.0.0.1:$via/raw.json"
run "pare shaped" "http://127.0.0.1:$via/data.json"
run "pare shaped, no reuse" "http://127.0.0.1:$fresh/data.json"
