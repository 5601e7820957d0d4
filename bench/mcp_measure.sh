#!/usr/bin/env bash
# The `pare mcp` acceptance figures on the memory server:
#   read_graph tokens direct vs through pare (counted by scripts/peers.sh count),
#   first page at --max-tokens 3000, pare_more's page.
#   bench/mcp_measure.sh PARE_BINARY [ENTITIES] [SEED]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
pare="$1"; n="${2:-400}"; seed="${3:-7}"
peers="${PARE_MCP_PEERS:-/tmp/pare-mcp-peers}"
server="$peers/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
python3 "$here/crates/pare-cli/tests/mcp/memory_graph.py" "$tmp/g.jsonl" "$n" "$seed"
calls() {
  printf '%s\n' \
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"m","version":"0"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}'
  sleep 2
}
text_of() { python3 -c "
import json,sys
for l in open(sys.argv[1]):
    m=json.loads(l)
    if m.get('id')==2:
        c=m['result']['content']; open(sys.argv[2],'w').write(c[0]['text'])
        if len(c)>1: open(sys.argv[2]+'.note','w').write(c[1]['text'])
        print(json.dumps(m['result'].get('_meta',{}).get('pare')))
" "$1" "$2"; }
calls | MEMORY_FILE_PATH="$tmp/g.jsonl" node "$server" > "$tmp/direct.out" 2>/dev/null
calls | MEMORY_FILE_PATH="$tmp/g.jsonl" "$pare" mcp --policy "$here/examples/policies/memory.toml" --max-tokens 1000000 --max-chars4 100000000 -- node "$server" > "$tmp/pare.out" 2>/dev/null
calls | MEMORY_FILE_PATH="$tmp/g.jsonl" "$pare" mcp --policy "$here/examples/policies/memory.toml" --max-tokens 3000 -- node "$server" > "$tmp/page.out" 2>/dev/null
text_of "$tmp/direct.out" "$tmp/direct.txt" >/dev/null
echo "through pare: $(text_of "$tmp/pare.out" "$tmp/pare.txt")"
echo "at 3000:      $(text_of "$tmp/page.out" "$tmp/page1.txt")"
"$pare" expand "$tmp/pare.txt" > "$tmp/expanded.json"
python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print('lossless:', a==b)" "$tmp/direct.txt" "$tmp/expanded.json"
bash "$here/scripts/peers.sh" count "$tmp/direct.txt" "$tmp/pare.txt" "$tmp/page1.txt" "$tmp/page1.txt.note"
