"""Beyond one machine: a Dask cluster of worker processes shapes a JSONL corpus with a policy
(which pickles by its text) and writes exactly what `pare compact --jsonl` writes.

The recipe (README, "pare for Python"):

    lines = dask.bag.read_text("corpus.jsonl", blocksize="32MiB")
    lines.map_partitions(policy.shape_lines).to_textfiles("out/*.jsonl", last_endline=True)
"""

from __future__ import annotations

import json
import random

import pytest

import pare
from conftest import PAYLOADS, POLICIES, run_pare

distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed (scripts/test installs it)")
import dask.bag as db  # noqa: E402


def corpus(path, mb: float) -> None:
    """Lines of the corpus payloads' shapes: whole responses and single entities, mixed."""
    rng = random.Random(11)
    docs = [json.loads(p.read_text()) for p in sorted(PAYLOADS.glob("*.json"))]
    entities = json.loads((PAYLOADS / "entities_systems.json").read_text())["entities"]
    size = 0
    with open(path, "w") as f:
        while size < mb * 1e6:
            doc = rng.choice(docs) if rng.random() < 0.2 else {"entities": rng.sample(entities, rng.randint(1, 8)), "total": 8}
            line = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
            f.write(line + "\n")
            if rng.random() < 0.01:
                f.write("\n")  # blank lines are skipped by both
            size += len(line) + 1


def test_a_local_cluster_of_two_worker_processes_writes_what_pare_compact_jsonl_writes(pare_bin, tmp_path):
    src = tmp_path / "corpus.jsonl"
    corpus(src, 6)
    policy_path = POLICIES / "entities.toml"
    policy = pare.Policy.from_file(policy_path)
    want = run_pare(pare_bin, "compact", "--jsonl", str(src), "--policy", str(policy_path))
    assert want.returncode == 0, want.stderr

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        lines = db.read_text(str(src), blocksize=1_000_000)
        assert lines.npartitions >= 4
        out = tmp_path / "out"
        lines.map_partitions(policy.shape_lines).to_textfiles(str(out / "*.jsonl"), last_endline=True)
        # Which workers ran partitions: both did the work, in separate processes.
        pids = set(client.run(lambda: __import__("os").getpid()).values())
        assert len(pids) == 2

    parts = sorted(out.glob("*.jsonl"), key=lambda p: int(p.stem))
    got = b"".join(p.read_bytes() for p in parts)
    assert got == want.stdout


def test_shape_lines_names_the_bad_line():
    policy = pare.Policy.from_str('[[ops]]\nop = "prune"\n')
    assert policy.shape_lines(['{"a": null, "b": 1}\n', "  \n", "[1, {}]"]) == ['{"b":1}', "[1,{}]"]
    with pytest.raises(pare.JsonError, match=r"lines\[1\]"):
        policy.shape_lines(["{}", "{oops}"])


def test_regression_shape_lines_had_no_duplicate_key_warning_or_strict_mode(pare_bin, tmp_path):
    """`pare compact --jsonl` warned about a repeated key and refused it with --strict, while
    shape_lines (its own copy of the line loop) did neither. Both call the engine's line now."""
    policy = pare.Policy.from_str('[[ops]]\nop = "prune"\n')
    lines = ['{"a": 1}', '{"a": 1, "b": null, "a": 2}']
    with pytest.warns(UserWarning, match=r'lines\[1\]: duplicate key "a" at line 1 column 21'):
        assert policy.shape_lines(lines) == ['{"a":1}', '{"a":2}']
    with pytest.raises(pare.JsonError, match=r'lines\[1\]: duplicate key "a" in an object at line 1 column 21'):
        policy.shape_lines(lines, strict=True)
    # The same lines through the CLI: the same text, the same warning, the same refusal.
    src = tmp_path / "dup.jsonl"
    src.write_text("\n".join(lines) + "\n")
    cli = run_pare(pare_bin, "compact", "--jsonl", str(src))
    assert cli.returncode == 0, cli.stderr
    with pytest.warns(UserWarning):
        assert pare.Policy.builtin().shape_lines(lines) == cli.stdout.decode().splitlines()
    assert 'line 2: duplicate key "a" at line 1 column 21' in cli.stderr.decode()
    strict = run_pare(pare_bin, "compact", "--jsonl", "--strict", str(src))
    assert strict.returncode == 2 and "line 2: duplicate key \"a\" in an object at line 1 column 21" in strict.stderr.decode(), strict.stderr
