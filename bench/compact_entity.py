#!/usr/bin/env python3
"""The seeds' own approach (ADR-010 `compact_entity()`), as a whole-process peer.

    python3 bench/compact_entity.py FILE > out.json

json.load the file; recursively drop, from every dict at any depth,
  * values that are None, "", [] or {} (after stripping, so a dict that becomes
    empty is itself dropped: {"properties": {"x": null}} -> {}), and
  * the internal keys created_at, updated_at, valid_from, valid_until, version,
    metadata;
items inside lists are positional and are kept as they are (only stripped
inside); then write json.dumps(result, separators=(",", ":"), ensure_ascii=False)
to stdout (UTF-8, no trailing newline).
"""

import json
import sys

SKIP = frozenset(("created_at", "updated_at", "valid_from", "valid_until", "version", "metadata"))


def compact(v):
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k in SKIP or x is None:
                continue
            if isinstance(x, (dict, list)):
                x = compact(x)
                if not x:  # {} or [] (possibly empty only after stripping)
                    continue
            elif x == "" and isinstance(x, str):
                continue
            out[k] = x
        return out
    if isinstance(v, list):
        return [compact(x) if isinstance(x, (dict, list)) else x for x in v]
    return v


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: compact_entity.py FILE", file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        doc = json.load(f)
    out = json.dumps(compact(doc), separators=(",", ":"), ensure_ascii=False)
    sys.stdout.buffer.write(out.encode("utf-8"))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
