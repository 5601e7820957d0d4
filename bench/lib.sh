# What the bench scripts share; each sources it after `cd "$ROOT"`:
#   . bench/lib.sh
# Not run on its own.

# `--help`: the calling script's header comment, from its second line to `set -euo`.
bench_help() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$1"
}

# Sets PARE_BIN: as the caller gave it (a substitute, so nothing is built), else
# target/release/pare, built first unless $1 is 0 (--no-build).
bench_pare_bin() {
  if [ -z "${PARE_BIN:-}" ] && [ "$1" = 1 ]; then
    cargo build --release --locked -p pare-llm >/dev/null 2>&1 || { echo "cargo build failed" >&2; exit 1; }
  fi
  PARE_BIN="${PARE_BIN:-target/release/pare}"
}

# A TCP port free on 127.0.0.1 now (the kernel's pick).
bench_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Write to FILE a `pare http` policy that shapes GET PATH by the S1 entities policy.
#   bench_entities_route FILE PATH
bench_entities_route() {
  printf '[http]\n[[http.routes]]\nmatch = ["GET %s"]\npolicy = "%s/examples/policies/entities.toml"\n' "$2" "$PWD" > "$1"
}
