#!/usr/bin/env bash
# The Python package on every CPython this machine has besides the one scripts/test uses:
# a per-version build (src/capi.rs reads CPython's structs, which differ between versions,
# and src/split.rs's helper thread) for each of 3.10, 3.12 and 3.13, and the portable abi3
# build, each installed by pip into a venv of its own and tested with pytest.
#
# Interpreters: python3.X on PATH, else pyenv's ($PYENV_ROOT/versions/3.X.*). A version not
# found is reported as not run (it is a check of what this machine can run, not a peer the
# tests need). Only the package's own test dependencies are installed (pytest, pydantic):
# the FastAPI, MCP and Dask tests skip here; scripts/test runs them on the main CPython.
#
#   scripts/py_versions.sh          # every version found, and abi3
set -uo pipefail
cd "$(dirname "$0")/.."
reqs=crates/pare-py/requirements-versions.txt
pare_bin="$PWD/target/debug/pare"
status=0
not_run=()

find_python() { # prints the interpreter for version $1, or nothing
  local root="${PYENV_ROOT:-$HOME/.pyenv}" p
  # A pyenv shim on PATH may name a version that is not installed: each is asked.
  for p in "$(command -v "python$1")" "$root"/versions/"$1".*/bin/python; do
    [ -x "$p" ] && "$p" -c 'import sys' 2>/dev/null && { echo "$p"; return; }
  done
}

# $1: label, $2: interpreter, $3: maturin arguments
check() {
  local venv="/tmp/pare-py-$1"
  echo "== $1: $("$2" --version 2>&1), pip install ./crates/pare-py ($3), pytest"
  if [ ! -x "$venv/bin/python" ]; then "$2" -m venv "$venv" || { echo "$1: venv failed"; status=1; return; }; fi
  if ! cmp -s "$reqs" "$venv/.requirements"; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$reqs" || { echo "$1: pip install -r $reqs failed"; status=1; return; }
    cp "$reqs" "$venv/.requirements"
  fi
  PATH="$venv/bin:$PATH" MATURIN_PEP517_ARGS="$3" "$venv/bin/pip" install --quiet --disable-pip-version-check \
    --no-build-isolation --no-deps --force-reinstall ./crates/pare-py || { echo "$1: building the package failed"; status=1; return; }
  # CI unset: the tests whose peers are not installed here skip (and say so) instead of failing.
  CI= PARE_BIN="$pare_bin" "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider crates/pare-py/tests || status=1
}

for v in 3.10 3.12 3.13; do
  py=$(find_python "$v")
  if [ -z "$py" ]; then not_run+=("CPython $v: no python$v on PATH and none under pyenv"); continue; fi
  check "$v" "$py" "--profile dev"
done
check abi3 "$(command -v python3)" "--profile dev --features abi3"

for n in "${not_run[@]}"; do echo "did not run: $n"; done
exit $status
