#!/usr/bin/env bash
# Token counts and encodings from the reference peers, for side-by-side comparison (the
# project's shared/tools/peers.sh, with the peers' versions pinned, so a clone has it too).
#   peers.sh install             install the peers (what .ci/run does) and nothing else
#   peers.sh tokens FILE...      o200k_base tokens of: pretty JSON, minified JSON, TOON (reference encoder)
#   peers.sh count  FILE...      o200k_base tokens of each file's exact bytes (any text)
#   peers.sh toon   FILE         the reference TOON encoding of a JSON file, on stdout
# Peers: @toon-format/toon (TOON reference implementation), gpt-tokenizer (o200k_base, the
# tokenizer TOON's own benchmarks use). Installed once into $PEERS_DIR (default
# /tmp/pare-peers), where the tests look for them; needs node and npm.
set -euo pipefail
dir="${PEERS_DIR:-/tmp/pare-peers}"
PINNED=("@toon-format/toon@4.4.0" "gpt-tokenizer@3.4.0")
installed() { # NAME@VERSION: is exactly that version in $dir?
  local name="${1%@*}" version="${1##*@}"
  grep -q "\"version\": \"$version\"" "$dir/node_modules/$name/package.json" 2>/dev/null
}
missing=()
for p in "${PINNED[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"pare-peers","private":true}' > "$dir/package.json"
  (cd "$dir" && npm install --silent --no-audit --no-fund "${PINNED[@]}" >/dev/null 2>&1) \
    || { echo "peers.sh: npm install ${PINNED[*]} into $dir failed" >&2; exit 2; }
fi
verb="${1:-}"; shift || true
if [ "$verb" = install ]; then
  echo "peers: ${PINNED[*]} in $dir"
  exit 0
fi
NODE_PATH="$dir/node_modules" node - "$verb" "$@" <<'JS'
const fs = require('fs');
const { encode } = require('@toon-format/toon');
const { countTokens } = require('gpt-tokenizer');
const [verb, ...files] = process.argv.slice(2);
if (verb === 'tokens') {
  for (const f of files) {
    const v = JSON.parse(fs.readFileSync(f, 'utf8'));
    const pretty = countTokens(JSON.stringify(v, null, 2)), mini = countTokens(JSON.stringify(v));
    const toon = countTokens(encode(v));
    console.log(JSON.stringify({ file: f, pretty, minified: mini, toon }));
  }
} else if (verb === 'count') {
  for (const f of files) console.log(JSON.stringify({ file: f, tokens: countTokens(fs.readFileSync(f, 'utf8')) }));
} else if (verb === 'toon') {
  process.stdout.write(encode(JSON.parse(fs.readFileSync(files[0], 'utf8'))));
} else {
  console.error('usage: peers.sh install|tokens|count|toon FILE...'); process.exit(2);
}
JS
