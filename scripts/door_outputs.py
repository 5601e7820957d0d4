#!/usr/bin/env python3
"""Every example payload through the CLI and the Python door, with every example policy at
every level, in every format, whole and paged: one file per output, and a digest of all.

    scripts/door_outputs.py OUT_DIR [--pare target/release/pare]
    diff -r BEFORE_DIR AFTER_DIR        # a refactor must leave every byte as it was

Why: a change that should not change behaviour (issue 29's moves and splits) is checked by
running this before and after and comparing the trees. The Python door is included when
`import pare` works (scripts/test's venv: target/py-venv/bin/python3), and each of its
outputs is also checked against the CLI's, byte for byte. The MCP and HTTP doors are held
to the CLI's bytes by crates/pare-cli/tests/pages_doors.rs.
"""
import argparse
import hashlib
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
    print(f"{outputs} outputs, digest {digest.hexdigest()[:16]}"
          + (f", Python door: {mismatches} differ from the CLI" if py else ""))
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
