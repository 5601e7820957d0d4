#!/usr/bin/env bash
# Page 1 before the upstream's body is whole: nginx serves a generated top-level JSON array
# of entities (the `entities` list of bench/gen_payload.py), at full speed and slowed with
# nginx's `limit_rate`; pare shapes it with drops by key and a prune (a level the stream
# can do). For each upstream, a client that reads trailers (`TE: trailers`: the body is
# sent as it is shaped) and one that does not (shaped whole): status, bytes, time to first
# byte and in all, and pare's peak RSS. Both get the same body (checked with cmp). Then four
# streamed clients at once: peak RSS, and RSS after.
#   bench/http_stream.sh [MB] [RATE]        defaults 52 20m (nginx limit_rate syntax)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
case "${1:-}" in -h|--help) bench_help "${BASH_SOURCE[0]}"; exit 0 ;; esac
mb="${1:-52}"; rate="${2:-20m}"
bench_pare_bin 1
pare="$PARE_BIN"
dir=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -p "$dir/www"
# The entities list is about 2/3 of the payload: one twice as large, cut to MB.
python3 bench/gen_payload.py --mb $(( mb * 2 )) --out "$dir/whole.json" >/dev/null 2>&1
python3 - "$dir/whole.json" "$dir/www/array.json" "$mb" <<'PY'
import json, sys
entities = json.load(open(sys.argv[1]))["entities"]
target = int(sys.argv[3]) * 10**6
# Pretty-printed items until the array reaches the size asked.
out, size = [], 2
for e in entities:
    text = json.dumps(e, indent=2)
    if size + len(text) + 2 > target:
        break
    out.append(text)
    size += len(text) + 2
with open(sys.argv[2], "w") as f:
    f.write("[\n" + ",\n".join(out) + "\n]")
PY
rm "$dir/whole.json"
up=$(bench_free_port)
cat > "$dir/nginx.conf" <<CONF
worker_processes 1; daemon off; master_process off; pid $dir/nginx.pid; error_log $dir/error.log warn;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $dir/b; proxy_temp_path $dir/p; fastcgi_temp_path $dir/f;
  uwsgi_temp_path $dir/u; scgi_temp_path $dir/s; types { application/json json; }
  server { listen 127.0.0.1:$up; root $dir/www;
    location /slow/ { alias $dir/www/; limit_rate $rate; } } }
CONF
nginx -p "$dir" -c "$dir/nginx.conf" &
cat > "$dir/p.toml" <<'TOML'
[[ops]]
op = "drop"
paths = ["$..created_at", "$..updated_at", "$..valid_from", "$..valid_until", "$..version", "$..metadata"]
[[ops]]
op = "prune"
[http]
[[http.routes]]
match = ["GET /array.json", "GET /slow/array.json"]
TOML
echo "body: $(stat -c %s "$dir/www/array.json") bytes, a top-level array; slow upstream: nginx limit_rate $rate"
printf '%-10s %-9s %6s %11s %14s %9s %14s\n' upstream client status bytes "first byte s" "all s" "peak RSS MiB"
for path in /array.json /slow/array.json; do
  for client in whole streamed; do
    via=$(bench_free_port)
    "$pare" http --upstream "http://127.0.0.1:$up" --listen "$via" --policy "$dir/p.toml" --quiet 2>/dev/null &
    pid=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$via/" && break; sleep 0.1; done
    te=(); [ "$client" = streamed ] && te=(-H "TE: trailers")
    out=$(curl -s "${te[@]}" -o "$dir/$client.out" -w "%{http_code} %{size_download} %{time_starttransfer} %{time_total}" "http://127.0.0.1:$via$path")
    read -r code size first total <<<"$out"
    rss=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' /proc/$pid/status)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    printf '%-10s %-9s %6s %11s %14.3f %9.3f %14s\n' "$([ "$path" = /array.json ] && echo full-speed || echo slow)" "$client" "$code" "$size" "$first" "$total" "$rss"
  done
  cmp -s "$dir/whole.out" "$dir/streamed.out" && echo "  same body: yes" || echo "  same body: NO"
done
# Four clients at once, each streamed, from the full-speed upstream: pare's peak RSS.
via=$(bench_free_port)
"$pare" http --upstream "http://127.0.0.1:$up" --listen "$via" --policy "$dir/p.toml" --quiet 2>/dev/null &
pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$via/" && break; sleep 0.1; done
curls=()
for i in 1 2 3 4; do
  curl -s -H "TE: trailers" -o "$dir/four$i.out" -w "" "http://127.0.0.1:$via/array.json" &
  curls+=($!)
done
wait "${curls[@]}"
same=yes; for i in 1 2 3 4; do cmp -s "$dir/whole.out" "$dir/four$i.out" || same=NO; done
sleep 2.5
echo "4 streamed at once: peak RSS $(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' /proc/$pid/status), RSS after $(awk '/VmRSS/ {printf "%.0f MiB", $2/1024}' /proc/$pid/status), same bodies: $same"
kill "$pid"; wait "$pid" 2>/dev/null || true
