"""``pare.dumps`` writing its text in the ``bytes`` it returns (``crates/pare-py/src/dump/sink.rs``).

From about 8 KB (the last text's length on the thread) a per-version build writes into the
``bytes`` itself, growing it as it goes and shrinking it to the text at the end, instead of
copying a buffer into a new ``bytes``. The bytes must be what ``json.dumps`` writes whatever
the growth, and a conversion that fails half way must give its ``bytes`` back."""
from __future__ import annotations

import dataclasses
import datetime
import json
import random
import sys
import tracemalloc
import uuid

import pytest

import pare
from pare import _pare
from test_dumps import random_value, reference

pytestmark = pytest.mark.skipif(
    _pare.__abi3__,
    reason="the abi3 build cannot grow a bytes (the stable ABI has no _PyBytes_Resize): it copies",
)


def prime(length: int = 20_000) -> None:
    """Make the next conversion on this thread guess about `length` bytes, and forget the
    count of texts written in place."""
    assert len(pare.dumps(["x" * length])) == length + 4
    _pare._written_in_place()


def test_random_values_written_in_place_are_json_dumps():
    rng = random.Random(2026)
    for _ in range(300):
        prime()
        v = [random_value(rng) for _ in range(rng.randrange(0, 40))]
        assert pare.dumps(v) == reference(v), v
        assert _pare._written_in_place() == 1


def test_a_small_guess_grows_to_a_big_text():
    # From a 9 KB guess to 2.4 MB: the bytes is grown eight times or more.
    row = {"name": "é\"x\n" * 3, "emoji": "😀" * 5, "n": 2**70, "x": 1e-7, "ok": None}
    big = {"rows": [dict(row, i=i) for i in range(20_000)], "tail": "\u2028" * 1000}
    prime(9_000)
    out = pare.dumps(big)
    assert _pare._written_in_place() == 1
    assert out == reference(big)
    assert len(out) > 2_000_000


def test_a_big_guess_shrinks_to_the_text():
    # Room made for a megabyte, a 9 KB text written: the bytes holds the text, not the room.
    prime(1_000_000)
    small = {"k": "v" * 9_000}
    out = pare.dumps(small)
    assert _pare._written_in_place() == 1
    assert out == reference(small)
    assert sys.getsizeof(out) == sys.getsizeof(b"") + len(out)
    assert out[-2:] == b'"}' and hash(out) == hash(reference(small))


def test_regression_a_failed_conversion_gave_its_bytes_back():
    # A bytes written in place belongs to the conversion until it succeeds: one that fails
    # half way (NaN at the end of 200 KB) must free it, every time.
    bad = ["y" * 100] * 2_000 + [float("nan")]
    tracemalloc.start()
    try:
        prime(250_000)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(40):
            with pytest.raises(ValueError, match=r"\$\[2000\]"):
                pare.dumps(bad)
            prime(250_000)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # 40 bytes objects of 280 KB kept would be 11 MB.
    assert grown < 1_000_000, grown


def test_a_default_that_calls_dumps_in_place_gets_its_own_bytes():
    inner = {"deep": ["q" * 20_000]}

    class Odd:
        pass

    def hook(o):
        # Written in place too (the thread's last text was big), inside the outer one.
        return json.loads(pare.dumps(inner))

    prime()
    v = {"a": "z" * 30_000, "odd": Odd(), "b": list(range(3_000))}
    assert pare.dumps(v, default=hook) == reference(dict(v, odd=inner))
    assert _pare._written_in_place() == 2


def test_rich_types_written_in_place_are_the_copied_text():
    @dataclasses.dataclass
    class Event:
        when: datetime.datetime
        id: uuid.UUID
        note: str

    when = datetime.datetime(2026, 11, 28, 13, 0, tzinfo=datetime.timezone.utc)
    events = [Event(when, uuid.UUID(int=i), "n\u00e9\n" * 4) for i in range(500)]
    prime(100)  # under 8 KB: copied
    copied = pare.dumps(events)
    assert _pare._written_in_place() == 0
    prime()
    assert pare.dumps(events) == copied
    assert _pare._written_in_place() == 1
    assert json.loads(copied)[3] == {"when": when.isoformat(), "id": str(uuid.UUID(int=3)), "note": "n\u00e9\n" * 4}


def test_pydantic_models_written_in_place_are_the_copied_text():
    pydantic = pytest.importorskip("pydantic", reason="pydantic is not installed in this venv")

    class Item(pydantic.BaseModel):
        id: uuid.UUID
        price: float
        tags: list[str]

    items = [Item(id=uuid.UUID(int=i), price=i / 7, tags=["a\"b", "é"]) for i in range(400)]
    prime(100)
    copied = pare.dumps(items)
    prime()
    assert pare.dumps(items) == copied
    assert _pare._written_in_place() == 1
    assert copied == reference([i.model_dump(mode="json") for i in items])
