"""The package's surface: conversion rules, errors, pickling, and each function against the
`pare` command that does the same job."""

from __future__ import annotations

import json
import math
import pickle
import random
import threading

import pytest

import pare
from conftest import PAYLOADS, POLICIES, run_pare

PRUNE = '[[ops]]\nop = "prune"\n'


# --- conversion --------------------------------------------------------------------------


def test_floats_are_written_as_json_dumps_writes_them():
    rng = random.Random(3)
    samples = [0.0, -0.0, 1.0, 0.1, 1e-4, 1e-5, 1e15, 1e16, 5e-324, 1.7976931348623157e308, 123456.789]
    samples += [rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30) for _ in range(3000)]
    samples += [struct_float(rng) for _ in range(3000)]
    for x in samples:
        assert pare.encode([x], format="json") == json.dumps([x], separators=(",", ":")), x


def struct_float(rng: random.Random) -> float:
    import struct

    while True:
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(x):
            return x


def test_values_convert_as_json_dumps_converts_them():
    from enum import Enum, IntEnum
    from collections import OrderedDict

    class Color(str, Enum):
        RED = "red"

    class Level(IntEnum):
        HIGH = 3

    value = OrderedDict(
        [("b", (1, 2)), ("a", [True, False, None]), ("big", 2**80), ("neg", -(2**70)), ("s", "é\n\u2028"), ("c", Color.RED), ("l", Level.HIGH)]
    )
    assert pare.encode(value, format="json") == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_what_json_cannot_hold_is_refused_with_where_it_was():
    with pytest.raises(ValueError, match=r"\$\.a\[1\]"):
        pare.encode({"a": [1, float("nan")]}, format="json")
    with pytest.raises(TypeError, match=r"dict keys must be str, got int .* at \$\.x"):
        pare.encode({"x": {1: "a"}}, format="json")
    with pytest.raises(TypeError, match=r"cannot shape a set at \$\.items\[0\]"):
        pare.Policy.builtin().shape({"items": [{1, 2}]})
    cycle: list = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="nested deeper"):
        pare.encode(cycle, format="json")


def test_regression_a_dict_deeper_than_the_parser_reads_was_shaped():
    """A value nested one level deeper than pare's JSON parser reads was shaped from a dict
    while `pare compact` refused its `json.dumps`: both refuse it now, and both take one
    level less."""
    deep: object = 1
    for _ in range(256):
        deep = [deep]
    assert pare.Policy.builtin().shape(deep).text == json.dumps(deep, separators=(",", ":"))
    with pytest.raises(ValueError, match=r"nested deeper than 256 levels"):
        pare.Policy.builtin().shape([deep])
    with pytest.raises(ValueError, match=r"nested deeper than 256 levels"):
        pare.Policy.builtin().shape({"a": _nest_dicts(256)})
    with pytest.raises(pare.JsonError, match=r"nesting deeper than 256 levels"):
        pare.Policy.builtin().shape(json.dumps([deep]))


def _nest_dicts(n: int) -> dict:
    d: dict = {}
    for _ in range(n):
        d = {"k": d}
    return d


def test_shape_value_returns_python_objects():
    policy = pare.Policy.from_str(PRUNE)
    assert policy.shape_value({"a": 1.5, "b": None, "c": [2**70, {}]}) == {"a": 1.5, "c": [2**70, {}]}  # array items are positional: kept
    assert policy.shape_value('{"a": null, "n": 1e3}') == {"n": 1000.0}


# --- policies and errors -----------------------------------------------------------------


def test_policy_errors_carry_the_key_the_value_and_the_allowed_values(tmp_path):
    with pytest.raises(pare.PolicyError) as e:
        pare.Policy.from_str('[[ops]]\nop = "prun"\n')
    assert (e.value.key, e.value.value) == ("ops[0].op", "prun")
    assert e.value.kind == "unknown_value"
    assert "prune" in e.value.allowed and isinstance(e.value, ValueError)

    path = tmp_path / "p.toml"
    path.write_text('default_level = "huge"\n')
    with pytest.raises(pare.PolicyError) as e:
        pare.Policy.from_file(path)
    assert str(e.value).startswith(f"in policy {path}: ")
    assert (e.value.key, e.value.value, e.value.allowed) == ("default_level", "huge", ["none", "minimal", "standard", "full"])

    with pytest.raises(OSError, match="reading policy"):
        pare.Policy.from_file(tmp_path / "missing.toml")
    with pytest.raises(pare.PolicyError) as e:
        pare.Policy.from_str("levels = [")
    assert e.value.key is None and "TOML" in str(e.value)
    assert (e.value.kind, e.value.line, e.value.column) == ("syntax", 1, 11)
    with pytest.raises(pare.PolicyError) as e:
        pare.Policy.from_str('{\n  "levels": ["a",\n}')
    assert (e.value.kind, e.value.line, e.value.column) == ("syntax", 3, 1)
    with pytest.raises(pare.PolicyError) as e:
        pare.Policy.from_str('level = ["a"]\n')
    assert (e.value.kind, e.value.key, e.value.value) == ("unknown_key", "level", "level")
    assert "levels" in e.value.allowed


def test_a_bad_level_or_parameter_names_the_allowed_ones():
    policy = pare.Policy.from_file(POLICIES / "narrative.toml")
    with pytest.raises(pare.PolicyError) as e:
        policy.shape({}, level="everything")
    assert e.value.key == "level" and e.value.value == "everything"
    assert e.value.allowed == policy.levels
    with pytest.raises(pare.PolicyError, match="maxGap"):
        policy.shape({}, params={"maxGap": 3})
    with pytest.raises(ValueError, match='format: unknown value "yaml"; allowed: json, pretty, toon, auto'):
        policy.shape({}, format="yaml")
    with pytest.raises(ValueError, match="tokenizer"):
        pare.count_tokens("x", tokenizer="gpt2")


def test_json_errors_have_line_and_column():
    with pytest.raises(pare.JsonError) as e:
        pare.Policy.builtin().shape('{\n  "a": 1,\n  "b": }')
    assert (e.value.line, e.value.column) == (3, 8)
    with pytest.raises(pare.JsonError) as e:
        pare.Policy.builtin().shape(b'{"a": "\xff"}')
    assert e.value.offset == 7


def test_a_foreign_cursor_is_refused():
    policy = pare.Policy.builtin()
    rows = [{"id": i, "text": "word " * 20} for i in range(100)]
    first = policy.shape(rows, budget=300)
    assert first.next_cursor
    with pytest.raises(pare.CursorError, match="does not fit"):
        policy.shape(rows[:50], budget=300, cursor=first.next_cursor)


def test_policies_pickle_by_their_text_and_the_copies_shape_the_same():
    for policy in (
        pare.Policy.from_file(POLICIES / "entities.toml"),
        pare.Policy.from_str(PRUNE),
        pare.Policy.from_dict({"ops": [{"op": "prune"}], "levels": ["brief", "full"]}),
        pare.Policy.builtin(),
    ):
        copy = pickle.loads(pickle.dumps(policy))
        assert copy.levels == policy.levels and copy.source == policy.source and copy.path == policy.path
        payload = (PAYLOADS / "entities.json").read_text()
        assert copy.shape(payload).text == policy.shape(payload).text


def test_from_dict_is_the_json_form_of_the_file():
    d = {"levels": ["brief", "full"], "ops": [{"op": "drop", "paths": ["$..created_at"], "levels": ["brief"]}]}
    a = pare.Policy.from_dict(d)
    b = pare.Policy.from_str(json.dumps(d))
    payload = (PAYLOADS / "entities.json").read_text()
    assert a.shape(payload).text == b.shape(payload).text
    assert "created_at" not in a.shape(payload).text


def test_shaped_reports_the_record():
    out = pare.Policy.from_str(PRUNE).shape({"id": 1, "note": None})
    assert (out.text, out.level, out.page, out.pages, out.next_cursor, out.kind) == ('{"id":1}', "standard", 1, 1, None, "value")
    assert out.tokens_after == pare.count_tokens(out.text)
    assert out.tokens_before == pare.count_tokens('{"id":1,"note":null}')
    assert out.record()["tokens_after"] == out.tokens_after
    assert str(out) == out.text and "page 1 of 1" in repr(out)


# --- the functions, against the commands -------------------------------------------------


def test_count_tokens_and_stats_match_pare_stats(pare_bin):
    for payload in sorted(PAYLOADS.glob("*.json")):
        r = run_pare(pare_bin, "stats", str(payload), "--json", "--top", "5")
        want = json.loads(r.stdout)
        text = payload.read_text()
        assert pare.count_tokens(text) == want["tokens"]
        assert pare.stats(text, top=5) == want


def test_encode_and_expand_match_the_commands(pare_bin):
    for payload in sorted(PAYLOADS.glob("*.json")):
        text = payload.read_text()
        for fmt in ("json", "pretty", "toon", "auto"):
            r = run_pare(pare_bin, "encode", str(payload), "--format", fmt)
            want = r.stdout.decode()[:-1]
            assert pare.encode(text, format=fmt) == want, (payload.name, fmt)
            assert pare.encode(json.loads(text), format=fmt) == want, (payload.name, fmt)
            back = run_pare(pare_bin, "expand", input=r.stdout).stdout
            assert pare.expand(want) == json.loads(back), (payload.name, fmt)


def test_regression_broken_json_and_toon_losses_as_the_commands_say(pare_bin):
    # `[1]]` is broken JSON, not the TOON string "[1]]" (unless asked), as `pare expand` says.
    with pytest.raises(pare.PareError, match="line 1 column"):
        pare.expand("[1]]")
    assert pare.expand("[1]]", reader="toon") == "[1]]"
    assert pare.expand("[2]: a,b") == ["a", "b"]
    with pytest.raises(pare.PareError, match="allowed: detect, json, toon"):
        pare.expand("1", reader="yaml")
    # TOON's lost digits are warned about, by the same words as `pare encode`.
    with pytest.warns(UserWarning, match=r"1234567890123456789 at \$\[0\] cannot be carried exactly"):
        assert pare.encode("[1234567890123456789]", format="toon") == "[1]: 1234567890123456800"
    r = run_pare(pare_bin, "encode", "-", "--format", "toon", input=b"[1234567890123456789]")
    assert "cannot be carried exactly by toon" in r.stderr.decode()


def test_pack_matches_pare_pack(pare_bin):
    payload = PAYLOADS / "semantic_search_full.json"
    policy_path = POLICIES / "search.toml"
    policy = pare.Policy.from_file(policy_path)
    for budget in (300, 1200, 5000):
        r = run_pare(pare_bin, "pack", str(payload), "--policy", str(policy_path), "--budget", str(budget))
        packed = pare.pack(payload.read_text(), budget=budget, policy=policy)
        assert packed.text == r.stdout.decode(), budget
        assert packed.tokens <= budget
        assert packed.metrics["budget"] == budget
    with pytest.raises(pare.PareError, match=r"\[pack\]"):
        pare.pack("{}", budget=100, policy=pare.Policy.from_str(PRUNE))
    # With a question, the same text as `pare pack --query`, and which words matched.
    question = "release index embedding deploy nonexistentword"
    r = run_pare(pare_bin, "pack", str(payload), "--policy", str(policy_path), "--budget", "1500", "--query", question)
    packed = pare.pack(payload.read_text(), budget=1500, policy=policy, query=question)
    assert packed.text == r.stdout.decode()
    assert packed.metrics["queryAnalysis"]["unmatched_terms"] == ["nonexistentword"]
    assert "queryAnalysis" not in pare.pack(payload.read_text(), budget=1500, policy=policy).metrics


def test_count_tokens_matches_the_reference_counter(node_peers, tmp_path):
    """gpt-tokenizer (node), the reference o200k_base counter, on every payload and on text
    that stresses the pre-tokenizer."""
    import subprocess

    tricky = tmp_path / "tricky.txt"
    tricky.write_text("naïve café 123456789 don't  \t\n\n  🙂👍🏽 中文字符 ' s'll ‍ ẞ\r\n" * 50)
    files = sorted(PAYLOADS.glob("*.json")) + [tricky]
    script = "const fs=require('fs');const {countTokens}=require('gpt-tokenizer');for(const f of process.argv.slice(1))console.log(countTokens(fs.readFileSync(f,'utf8')))"
    out = subprocess.run(["node", "-e", script, *map(str, files)], capture_output=True, text=True, env={"NODE_PATH": str(node_peers), "PATH": "/usr/bin:/bin:/usr/local/bin"}, check=True)
    for f, want in zip(files, out.stdout.split()):
        assert pare.count_tokens(f.read_text()) == int(want), f.name


def test_the_gil_is_released_while_the_engine_works():
    """Another Python thread runs while a large call is in the engine: with the GIL held,
    the main thread could not run at all until the call returned."""
    text = (PAYLOADS / "entities_systems.json").read_text() * 40
    done = threading.Event()

    def work():
        pare.count_tokens(text)
        pare.Policy.builtin().shape(json.loads((PAYLOADS / "entities_systems.json").read_text()) | {"pad": [text[:100000]] * 20})
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    spins = 0
    while not done.is_set():
        spins += 1
    worker.join()
    assert spins > 1000, spins


def test_the_stubs_name_what_the_module_has():
    """`_pare.pyi` is written by hand: every public name of the extension is in it, and
    every method of its classes."""
    import ast
    from pathlib import Path

    stub = ast.parse((Path(pare.__file__).parent / "_pare.pyi").read_text())
    declared = {n.name: n for n in stub.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    declared.update({t.target.id: t for t in stub.body if isinstance(t, ast.AnnAssign)})
    public = {n for n in dir(pare._pare) if not n.startswith("_") or n in ("__version__", "__build__")}
    assert public - set(declared) == set(), "missing from _pare.pyi"
    for name, node in declared.items():
        if isinstance(node, ast.ClassDef):
            cls = getattr(pare._pare, name)
            members = {m for m in dir(cls) if not m.startswith("_")}
            stubbed = {b.name for b in node.body if isinstance(b, ast.FunctionDef)}
            stubbed |= {b.target.id for b in node.body if isinstance(b, ast.AnnAssign)}
            assert members - stubbed == set(), f"{name}: missing from _pare.pyi"


def test_a_stale_cursor_or_one_without_a_budget_is_a_cursor_error():
    """Regressions: a cursor whose input now fits one page answered page 1, and a cursor
    without a budget was ignored; both raise CursorError now."""
    policy = pare.Policy.builtin()
    rows = [{"id": i, "text": "word " * 20} for i in range(60)]
    first = policy.shape(rows, budget=300)
    assert first.next_cursor
    with pytest.raises(pare.CursorError):
        policy.shape(rows[:1], budget=300, cursor=first.next_cursor)
    with pytest.raises(pare.CursorError):
        policy.shape(rows, cursor=first.next_cursor)


def test_the_distribution_is_pare_llm_and_the_import_is_pare():
    """`pare` on PyPI is another project (which also imports as `pare`): pare publishes as
    `pare-llm`, and what it installs is imported as `pare`."""
    import importlib.metadata

    dist = importlib.metadata.distribution("pare-llm")
    assert dist.metadata["Name"] == "pare-llm"
    assert "pare/__init__.py" in {str(f).replace("\\", "/") for f in dist.files or []}


def test_regression_tokens_before_was_none_under_a_budget():
    """With a budget, ``tokens_before`` was ``None`` (the engine counts only what the budget
    needs, and the input was not kept to count later): it is counted when first read, as
    without one, on every page."""
    value = {"rows": [{"id": i, "note": None, "text": "word " * 20} for i in range(200)]}
    whole = pare.count_tokens(pare.dumps(value).decode())
    policy = pare.Policy.builtin()
    assert policy.shape(value, budget=100_000).tokens_before == whole
    assert policy.shape(pare.dumps(value).decode(), budget=100_000).tokens_before == whole
    pages = policy.pages(value, budget=800)
    assert len(pages) > 1
    assert all(p.tokens_before == whole for p in pages)
    assert all(p.record()["tokens_before"] == whole for p in pages)
