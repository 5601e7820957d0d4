"""Beyond one machine: a Dask or Ray cluster of worker processes shapes a JSONL corpus with a
policy (which pickles by its text) and writes exactly what `pare compact --jsonl` writes.

The recipes (docs/python.md): blocks of whole lines as bytes, `Policy.shape_jsonl`, each block
written by its task,

    _, blocks = dask.bytes.read_bytes("corpus.jsonl", delimiter=b"\n", blocksize="32MiB")
    dask.compute(*(shape_to(b, f"out/{i}.jsonl") for i, b in enumerate(blocks[0])))

the same with Ray tasks over ranges of whole lines, and the older bag of lines:

    lines = dask.bag.read_text("corpus.jsonl", blocksize="32MiB")
    lines.map_partitions(policy.shape_lines).to_textfiles("out/*.jsonl", last_endline=True)
"""

from __future__ import annotations

import json
import os
import random

import pytest

import pare
from conftest import PAYLOADS, POLICIES, missing, run_pare

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


def corpus_and_cli(pare_bin, tmp_path, mb: float):
    """A corpus of `mb` MB, the entities policy, and what `pare compact --jsonl` writes for it."""
    src = tmp_path / "corpus.jsonl"
    corpus(src, mb)
    policy_path = POLICIES / "entities.toml"
    want = run_pare(pare_bin, "compact", "--jsonl", str(src), "--policy", str(policy_path))
    assert want.returncode == 0, want.stderr
    return src, pare.Policy.from_file(policy_path), want.stdout


def joined(out) -> bytes:
    """The numbered part files in `out`, in order, as one text."""
    parts = sorted(out.glob("*.jsonl"), key=lambda p: int(p.stem))
    return b"".join(p.read_bytes() for p in parts)


def test_a_local_cluster_of_two_worker_processes_writes_what_pare_compact_jsonl_writes(pare_bin, tmp_path):
    src, policy, want = corpus_and_cli(pare_bin, tmp_path, 6)

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        lines = db.read_text(str(src), blocksize=1_000_000)
        assert lines.npartitions >= 4
        out = tmp_path / "out"
        lines.map_partitions(policy.shape_lines).to_textfiles(str(out / "*.jsonl"), last_endline=True)
        # Which workers ran partitions: both did the work, in separate processes.
        pids = set(client.run(lambda: __import__("os").getpid()).values())
        assert len(pids) == 2

    assert joined(out) == want


def line_ranges(path, size):
    """docs/python.md's Ray recipe: [start, end) byte ranges of about `size`, each ending
    after a newline (or at the end of the file)."""
    total = os.path.getsize(path)
    ranges, start = [], 0
    with open(path, "rb") as f:
        while start < total:
            f.seek(min(start + size, total))
            f.readline()
            end = min(f.tell(), total)
            ranges.append((start, end))
            start = end
    return ranges


def test_dask_blocks_of_bytes_through_shape_jsonl_write_what_pare_compact_jsonl_writes(pare_bin, tmp_path):
    import dask
    from dask.bytes import read_bytes

    src, policy, want = corpus_and_cli(pare_bin, tmp_path, 4)
    out = tmp_path / "out"
    out.mkdir()

    @dask.delayed
    def shape_to(block, path):
        with open(path, "wb") as f:
            f.write(policy.shape_jsonl(block))

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, distributed.Client(cluster):
        _, blocks = read_bytes(str(src), delimiter=b"\n", blocksize=500_000)
        blocks = [b for per_file in blocks for b in per_file]
        assert len(blocks) >= 4
        dask.compute(*(shape_to(b, out / f"{i}.jsonl") for i, b in enumerate(blocks)))
    assert joined(out) == want


def test_ray_tasks_over_ranges_of_lines_write_what_pare_compact_jsonl_writes(pare_bin, tmp_path):
    try:
        import ray
    except ImportError:
        missing("ray is not installed (scripts/test installs it from requirements-test.txt)")
    src, policy, want = corpus_and_cli(pare_bin, tmp_path, 2)
    out = tmp_path / "out"
    out.mkdir()

    @ray.remote
    def shape_range(path, start, end, dest, policy):
        with open(path, "rb") as f:
            f.seek(start)
            block = f.read(end - start)
        with open(dest, "wb") as f:
            f.write(policy.shape_jsonl(block))
        return os.getpid()

    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        ref = ray.put(policy)
        ranges = line_ranges(src, 300_000)
        assert len(ranges) >= 4
        pids = ray.get([shape_range.remote(str(src), a, b, str(out / f"{i}.jsonl"), ref) for i, (a, b) in enumerate(ranges)])
    finally:
        ray.shutdown()
    assert os.getpid() not in pids  # shaped in Ray's worker processes
    assert joined(out) == want


def test_shape_jsonl_takes_every_kind_of_block_and_names_a_bad_line_by_its_place_in_the_block():
    policy = pare.Policy.from_str('[[ops]]\nop = "prune"\n')
    block = '{"a": null, "b": 1}\r\n  \n[1, {}]\n"é"'
    want = '{"b":1}\n[1,{}]\n"é"\n'.encode()
    for given in (block, block.encode(), bytearray(block.encode()), memoryview(block.encode())):
        assert policy.shape_jsonl(given) == want
    assert policy.shape_jsonl(b"") == b""
    with pytest.raises(pare.JsonError) as e:
        policy.shape_jsonl(b'{}\n\n{"a":}\n{}\n')
    assert (e.value.line, e.value.column, e.value.offset) == (3, 6, 9)
    with pytest.raises(pare.JsonError, match="line 2 is not UTF-8") as e:
        policy.shape_jsonl(b'{}\n{"a":"\xff"}\n')
    assert (e.value.line, e.value.offset) == (2, 9)
    with pytest.raises(TypeError, match="data must be bytes, bytearray, memoryview or str, not list"):
        policy.shape_jsonl(["{}"])


def test_shape_jsonl_warns_and_refuses_repeated_keys_as_the_cli_does(pare_bin, tmp_path):
    policy = pare.Policy.builtin()
    block = b'{"a": 1}\n{"a": 1, "b": null, "a": 2}\n'
    src = tmp_path / "dup.jsonl"
    src.write_bytes(block)
    cli = run_pare(pare_bin, "compact", "--jsonl", str(src))
    assert cli.returncode == 0, cli.stderr
    with pytest.warns(UserWarning, match=r'line 2: duplicate key "a" at line 1 column 21'):
        assert policy.shape_jsonl(block) == cli.stdout
    assert 'line 2: duplicate key "a" at line 1 column 21' in cli.stderr.decode()
    with pytest.raises(pare.JsonError, match=r'duplicate key "a" in an object at line 2 column 21'):
        policy.shape_jsonl(block, strict=True)


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
