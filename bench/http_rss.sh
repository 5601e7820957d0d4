#!/usr/bin/env bash
# Peak memory of `pare http` shaping large bodies: nginx serves a generated `list_entities`
# payload (bench/gen_payload.py), pare shapes it by the S1 entities policy, N clients ask at
# once. Prints each client's status, size and time to first byte, then pare's peak RSS
# (VmHWM) and its RSS once they are done.
#   bench/http_rss.sh [CLIENTS] [MB] [-- PARE HTTP FLAGS...]     defaults 4 52
# e.g. bench/http_rss.sh 4 52 -- --max-held-bytes 110000000
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
case "${1:-}" in -h|--help) bench_help "${BASH_SOURCE[0]}"; exit 0 ;; esac
clients="${1:-4}"; mb="${2:-52}"; shift $(( $# < 2 ? $# : 2 )); [ "${1:-}" = -- ] && shift
bench_pare_bin 1
pare="$PARE_BIN"
dir=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -p "$dir/www"
python3 bench/gen_payload.py --mb "$mb" --out "$dir/www/big.json" >/dev/null 2>&1
up=$(bench_free_port); via=$(bench_free_port)
cat > "$dir/nginx.conf" <<CONF
worker_processes 1; daemon off; master_process off; pid $dir/nginx.pid; error_log $dir/error.log warn;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $dir/b; proxy_temp_path $dir/p; fastcgi_temp_path $dir/f;
  uwsgi_temp_path $dir/u; scgi_temp_path $dir/s; types { application/json json; }
  server { listen 127.0.0.1:$up; root $dir/www; } }
CONF
nginx -p "$dir" -c "$dir/nginx.conf" &
bench_entities_route "$dir/p.toml" /big.json
"$pare" http --upstream "http://127.0.0.1:$up" --listen "$via" --policy "$dir/p.toml" --quiet "$@" &
pid=$!
# Any HTTP answer means pare listens (curl exits 7 while the port is closed).
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$via/" && break; sleep 0.1; done
echo "body: $(stat -c %s "$dir/www/big.json") bytes; $clients at once; status, bytes, first byte (s):"
curls=()
for _ in $(seq "$clients"); do
  curl -s -o /dev/null -w "  %{http_code} %{size_download} %{time_starttransfer}\n" "http://127.0.0.1:$via/big.json" &
  curls+=($!)
done
wait "${curls[@]}"
sleep 2.5
echo "peak RSS $(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' /proc/$pid/status); RSS after $(awk '/VmRSS/ {printf "%.0f MiB", $2/1024}' /proc/$pid/status)"
