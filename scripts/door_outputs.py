#!/usr/bin/env python3
"""Every example payload through the CLI, the Python door and the Node door, with every
example policy at every level, in every format, whole and paged: one file per output, and a
digest of all.

    scripts/door_outputs.py OUT_DIR [--pare target/release/pare]
    diff -r BEFORE_DIR AFTER_DIR        # a refactor must leave every byte as it was

Why: a change that should not change behaviour (issue 29's moves and splits) is checked by
running this before and after and comparing the trees. The Python door is included when
`import pare` works (scripts/test's venv: target/py-venv/bin/python3), and each of its
outputs is also checked against the CLI's, byte for byte. So is the Node door when node and
its addon are there (crates/pare-node/pare.node: `npm run build` there), for JSON text and,
where the payload's numbers survive `JSON.parse` (a JS number has no lexeme), for the parsed
object (against `pare compact` of its `JSON.stringify`, which a text compare covers when the
two texts agree). The MCP and HTTP doors are held to the CLI's bytes by
crates/pare-cli/tests/pages_doors.rs.
"""
import argparse
import hashlib
import json
import pathlib
import subprocess
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
FORMATS = ["json", "toon", "auto"]
BUDGETS = [None, 300]


def policies():
    """(name, path or None, levels): the built-in lossless default, then each example."""
    yield "builtin", None, [None]
    for path in sorted((ROOT / "examples/policies").glob("*.toml")):
        doc = tomllib.loads(path.read_text())
        if "ops" not in doc:
            continue  # a door's configuration (http.toml), not a shaping policy
        yield path.stem, path, [None] + list(doc.get("levels", []))


def cli(pare, payload, policy, level, fmt, budget):
    cmd = [pare, "compact", str(payload), "--format", fmt]
    if policy:
        cmd += ["--policy", str(policy)]
    if level:
        cmd += ["--level", level]
    if budget:
        cmd += ["--budget", str(budget)]
    run = subprocess.run(cmd, capture_output=True)
    return run.returncode, run.stdout + b"--- stderr\n" + run.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--pare", default=str(ROOT / "target/release/pare"))
    args = ap.parse_args()
    try:
        import pare as py
    except ImportError:
        py = None
        print("door_outputs: `import pare` failed: the Python door is NOT checked", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    digest, outputs, mismatches = hashlib.sha256(), 0, 0
    payloads = sorted((ROOT / "examples/payloads").glob("*.json"))
    for name, policy, levels in policies():
        py_policy = None
        if py:
            py_policy = py.Policy.from_file(policy) if policy else py.Policy.builtin()
        for payload in payloads:
            text = payload.read_text()
            for level in levels:
                for fmt in FORMATS:
                    for budget in BUDGETS:
                        code, out = cli(args.pare, payload, policy, level, fmt, budget)
                        tag = f"{name}.{payload.stem}.{level or 'default'}.{fmt}.{budget or 'whole'}"
                        (args.out / tag).write_bytes(out)
                        digest.update(tag.encode() + b"\0" + out)
                        outputs += 1
                        if not py_policy or code != 0:
                            continue
                        shaped = py_policy.shape(text, level=level, format=fmt, budget=budget)
                        printed = out.split(b"--- stderr\n")[0]
                        if shaped.text.encode() + b"\n" != printed:
                            mismatches += 1
                            print(f"door_outputs: Python differs from the CLI: {tag}", file=sys.stderr)
    node_mismatches = node_door(args.pare, payloads, args.out)
    print(f"{outputs} outputs, digest {digest.hexdigest()[:16]}"
          + (f", Python door: {mismatches} differ from the CLI" if py else "")
          + (f", Node door: {node_mismatches} differ from the CLI" if node_mismatches is not None else ""))
    sys.exit(1 if mismatches or node_mismatches else 0)


def node_door(pare, payloads, out):
    """The Node door on every case the CLI answered (its outputs are in `out`): the number
    that differ, or None when node or the addon is not there."""
    addon = ROOT / "crates/pare-node/pare.node"
    if not addon.exists():
        print(f"door_outputs: {addon} is not built: the Node door is NOT checked", file=sys.stderr)
        return None
    cases = []
    for name, policy, levels in policies():
        for payload in payloads:
            for level in levels:
                for fmt in FORMATS:
                    for budget in BUDGETS:
                        tag = f"{name}.{payload.stem}.{level or 'default'}.{fmt}.{budget or 'whole'}"
                        cases.append((tag, payload, {"payload": str(payload), "policy": str(policy) if policy else None,
                                                     "level": level, "format": fmt, "budget": budget}))
    try:
        run = subprocess.run(["node", str(ROOT / "scripts/door_outputs_node.mjs")],
                             input="".join(json.dumps(c) + "\n" for _, _, c in cases).encode(), capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"door_outputs: the Node door did not run ({e}): NOT checked", file=sys.stderr)
        return None
    mismatches, compared = 0, [0, 0]
    for (tag, payload, case), line in zip(cases, run.stdout.decode().splitlines(), strict=True):
        got = json.loads(line)
        printed = (out / tag).read_bytes().split(b"--- stderr\n")[0]
        if not printed:
            continue  # the CLI refused it
        compared[0] += 1
        if got["text"] if isinstance(got["text"], dict) else (got["text"].encode() + b"\n" != printed):
            mismatches += 1
            print(f"door_outputs: Node (text) differs from the CLI: {tag}", file=sys.stderr)
        # The object: the same bytes when its JSON.stringify is the payload's own minified text.
        text = payload.read_text()
        if json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False) == _js_stringify(text):
            compared[1] += 1
            if isinstance(got["object"], dict) or got["object"].encode() + b"\n" != printed:
                mismatches += 1
                print(f"door_outputs: Node (object) differs from the CLI: {tag}", file=sys.stderr)
    print(f"door_outputs: Node door: {compared[0]} outputs from JSON text and {compared[1]} from objects compared", file=sys.stderr)
    return mismatches


def _js_stringify(text, cache={}):
    """`JSON.stringify(JSON.parse(text))`, by node (numbers as JS writes them)."""
    if text not in cache:
        cache[text] = subprocess.run(["node", "-e", "process.stdout.write(JSON.stringify(JSON.parse(require('fs').readFileSync(0,'utf8'))))"],
                                     input=text.encode(), capture_output=True, check=True).stdout.decode()
    return cache[text]


if __name__ == "__main__":
    main()
