#!/usr/bin/env bash
# A throwaway PostgreSQL cluster with a fixed `orders` table, for the `pare mcp` tests and
# bench/mcp_servers.py to put @modelcontextprotocol/server-postgres in front of.
#
#   pg_fixture.sh start DIR PORT   initdb in DIR/data, listen on 127.0.0.1:PORT only (socket
#                                  in DIR), load the fixture; prints the database URL
#   pg_fixture.sh stop DIR         stop it (DIR stays; the caller removes it)
#   pg_fixture.sh check            print why a cluster cannot be made here (nothing if it can)
#
# PostgreSQL from Debian's packages (.ci/run installs `postgresql`); the binaries are
# taken from /usr/lib/postgresql/*/bin (the newest), or $PG_BIN. PostgreSQL refuses to run
# as root, so as root the cluster belongs to the `postgres` user (runuser). No password:
# trust auth, loopback only, fsync off; the data is generated from the row number alone, so
# every cluster holds the same bytes.
set -euo pipefail

pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
  local d
  d=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
  [ -n "$d" ] && echo "$d"
}

# Run a command as the cluster's owner: `postgres` when we are root, else ourselves.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

why_not() {
  local bin
  bin=$(pg_bin || true)
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
    echo "PostgreSQL's initdb and pg_ctl are not in /usr/lib/postgresql/*/bin (.ci/run installs the postgresql package)"
  elif ! command -v psql >/dev/null; then
    echo "psql is not on PATH (.ci/run installs the postgresql package)"
  elif [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    echo "running as root and there is no postgres user to own the cluster"
  fi
}

fixture_sql() {
  cat <<'SQL'
CREATE TABLE orders (
  id          integer PRIMARY KEY,
  customer    text NOT NULL,
  email       text,                 -- NULL for every 7th
  note        text,                 -- '' for every 3rd, NULL for every 5th, else a sentence
  status      text NOT NULL,
  quantity    integer NOT NULL,
  unit_price  numeric(10,2) NOT NULL,
  discount    numeric(4,2),         -- NULL for most
  paid        boolean,
  attrs       jsonb NOT NULL,       -- {} and {"a": null} among real objects
  tags        text[],
  created_at  timestamptz NOT NULL,
  shipped_at  timestamptz
);
INSERT INTO orders
SELECT i,
       (ARRAY['Acme Corp','Globex','Initech','Umbrella','Hooli','Stark Industries','Wayne Enterprises','Soylent'])[1 + i % 8]
         || ' #' || (i % 97),
       CASE WHEN i % 7 = 0 THEN NULL ELSE 'buyer' || (i % 211) || '@example.com' END,
       CASE WHEN i % 3 = 0 THEN '' WHEN i % 5 = 0 THEN NULL
            ELSE 'Deliver to the back door; call ' || (1000 + i % 9000) || ' first.' END,
       (ARRAY['pending','paid','shipped','delivered','cancelled'])[1 + i % 5],
       1 + i % 12,
       round((3.5 + (i * 37 % 10000) / 100.0)::numeric, 2),
       CASE WHEN i % 10 = 0 THEN round(((i % 30) / 100.0)::numeric, 2) END,
       CASE WHEN i % 11 = 0 THEN NULL ELSE i % 2 = 0 END,
       CASE i % 4
         WHEN 0 THEN '{}'::jsonb
         WHEN 1 THEN '{"a": null}'::jsonb
         WHEN 2 THEN jsonb_build_object('gift', i % 3 = 0, 'channel', (ARRAY['web','app','phone'])[1 + i % 3])
         ELSE jsonb_build_object('coupon', 'SAVE' || (i % 50), 'lines', jsonb_build_array(i % 5, i % 7, ''))
       END,
       CASE WHEN i % 6 = 0 THEN NULL WHEN i % 6 = 1 THEN ARRAY[]::text[]
            ELSE ARRAY['t' || (i % 4), 'priority-' || (i % 3)] END,
       timestamptz '2025-01-01 00:00:00+00' + (i * interval '37 minutes'),
       CASE WHEN i % 5 IN (2, 3) THEN timestamptz '2025-01-02 08:00:00+00' + (i * interval '41 minutes') END
FROM generate_series(1, 2000) AS i;
SQL
}

verb="${1:-}"
case "$verb" in
  check)
    why_not
    ;;
  start)
    dir="${2:?usage: pg_fixture.sh start DIR PORT}"
    port="${3:?usage: pg_fixture.sh start DIR PORT}"
    why=$(why_not)
    [ -z "$why" ] || { echo "pg_fixture.sh: $why" >&2; exit 2; }
    bin=$(pg_bin)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ "$(id -u)" -ne 0 ] || chown postgres: "$dir"
    as_owner test -w "$dir" -a -x "$dir" \
      || { echo "pg_fixture.sh: the postgres user cannot reach $dir (a parent directory is private?)" >&2; exit 1; }
    as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off -c synchronous_commit=off" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres -c 'CREATE DATABASE pare' >/dev/null
    fixture_sql | psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d pare >/dev/null
    echo "postgresql://postgres@127.0.0.1:$port/pare"
    ;;
  stop)
    dir="${2:?usage: pg_fixture.sh stop DIR}"
    bin=$(pg_bin)
    [ ! -f "$dir/data/postmaster.pid" ] || as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
  *)
    echo "usage: pg_fixture.sh start DIR PORT | stop DIR | check" >&2
    exit 2
    ;;
esac
