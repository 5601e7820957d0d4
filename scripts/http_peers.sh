#!/usr/bin/env bash
# The real servers the `pare http` tests put pare in front of (and the Redis its replicas
# share), pinned:
#   http_peers.sh install   install what is missing (what .ci/run does); idempotent
#   http_peers.sh check     print why the peers cannot be used here (nothing when they can)
# json-server@0.17.4 and Octokit (npm, a client) into $PARE_HTTP_PEERS (default /tmp/pare-http-peers); the FastAPI
# app's packages (crates/pare-cli/tests/rest/requirements.txt) into a venv at
# $PARE_HTTP_VENV (default /tmp/pare-http-venv); nginx, redis-server and prometheus (for
# promtool, which checks pare http's metrics text), openssl (the TLS tests' CA, certificates
# and TLS upstream) and curl from Debian.
set -euo pipefail
cd "$(dirname "$0")/.."
peers="${PARE_HTTP_PEERS:-/tmp/pare-http-peers}"
venv="${PARE_HTTP_VENV:-/tmp/pare-http-venv}"
requirements=crates/pare-cli/tests/rest/requirements.txt
JSON_SERVER=json-server@0.17.4
OCTOKIT=(@octokit/core@7.0.8 @octokit/plugin-paginate-rest@16.0.0)

why_not() {
  grep -q '"version": "0.17.4"' "$peers/node_modules/json-server/package.json" 2>/dev/null \
    || { echo "$JSON_SERVER is not in $peers"; return; }
  grep -q '"version": "16.0.0"' "$peers/node_modules/@octokit/plugin-paginate-rest/package.json" 2>/dev/null \
    || { echo "Octokit (${OCTOKIT[*]}) is not in $peers"; return; }
  cmp -s "$requirements" "$venv/.requirements" 2>/dev/null \
    || { echo "$venv lacks the packages of $requirements"; return; }
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "nginx is not installed"; return; }
  command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || { echo "redis-server is not installed"; return; }
  command -v promtool >/dev/null || { echo "promtool is not installed (Debian package prometheus)"; return; }
  command -v openssl >/dev/null || { echo "openssl is not installed (it makes the TLS tests' CA and certificates, and serves as their TLS upstream)"; return; }
  command -v curl >/dev/null || { echo "curl is not installed (the TLS listener's client)"; return; }
}

case "${1:-}" in
  check) why_not ;;
  install)
    if ! grep -q '"version": "0.17.4"' "$peers/node_modules/json-server/package.json" 2>/dev/null; then
      mkdir -p "$peers"
      [ -f "$peers/package.json" ] || echo '{"name":"pare-http-peers","private":true}' > "$peers/package.json"
      (cd "$peers" && npm install --silent --no-audit --no-fund --save-exact "$JSON_SERVER" >/dev/null)
    fi
    if ! grep -q '"version": "16.0.0"' "$peers/node_modules/@octokit/plugin-paginate-rest/package.json" 2>/dev/null; then
      mkdir -p "$peers"
      [ -f "$peers/package.json" ] || echo '{"name":"pare-http-peers","private":true}' > "$peers/package.json"
      (cd "$peers" && npm install --silent --no-audit --no-fund --save-exact "${OCTOKIT[@]}" >/dev/null)
    fi
    if ! cmp -s "$requirements" "$venv/.requirements" 2>/dev/null; then
      [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
      "$venv/bin/pip" install --quiet -r "$requirements"
      cp "$requirements" "$venv/.requirements"
    fi
    need=()
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
    command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || need+=(redis-server)
    command -v promtool >/dev/null || need+=(prometheus)
    command -v openssl >/dev/null || need+=(openssl)
    command -v curl >/dev/null || need+=(curl)
    if [ ${#need[@]} -gt 0 ]; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
      # Debian starts the services it installs; the tests run their own instances.
      for s in nginx redis-server prometheus; do service "$s" stop >/dev/null 2>&1 || true; done
    fi
    why=$(why_not)
    [ -z "$why" ] || { echo "http_peers.sh: $why" >&2; exit 1; }
    echo "HTTP peers: $JSON_SERVER in $peers, $venv, nginx, redis-server, promtool, openssl, curl" ;;
  *) echo "usage: http_peers.sh install|check" >&2; exit 2 ;;
esac
