"""Members left out as they are written (``crates/pare-py/src/dump/omitting.rs``): for a
policy the engine's stream does whole (``$..name`` drops and a plain ``prune``, JSON out, no
budget), ``Policy.shape`` of a Python value cuts what the policy drops or prunes as it writes
the value, instead of writing it whole for the stream to read again. The page must be the
one the whole text gives, byte for byte and count for count."""
from __future__ import annotations

import dataclasses
import datetime
import enum
import math
import random
import uuid

import pytest

import pare
from pare import _pare

pydantic = pytest.importorskip("pydantic")

POLICIES = {
    "drop and prune": """
[[ops]]
op = "drop"
paths = ["$..created_at", "$..metadata", "$..b"]
[[ops]]
op = "prune"
""",
    "prune first, then a pattern": """
[[ops]]
op = "prune"
[[ops]]
op = "drop"
paths = ["$..a*"]
""",
    "nulls only": """
[[ops]]
op = "prune"
empty_string = false
empty_array = false
""",
    "no op at the level": """
levels = ["standard", "full"]
[[ops]]
op = "drop"
levels = ["standard"]
paths = ["$..b"]
""",
}


def whole(policy: pare.Policy, value, **kw) -> pare.Shaped:
    """The page for the value's whole text, read by the engine's stream as any text."""
    return policy.shape(pare.dumps(value), **kw)


def shaped_as_written(policy: pare.Policy, value, **kw) -> pare.Shaped:
    _pare._omitted_as_written()
    page = policy.shape(value, **kw)
    assert _pare._omitted_as_written() == 1, "the value should have been written omitting"
    return page


def assert_same_page(policy: pare.Policy, value, **kw):
    got = shaped_as_written(policy, value, **kw)
    want = whole(policy, value, **kw)
    assert got.text == want.text
    assert got.record() == want.record()


class Colour(enum.Enum):
    RED = "red"
    NONE = None


@dataclasses.dataclass
class Point:
    a: int | None
    b: str
    created_at: datetime.datetime


class Model(pydantic.BaseModel):
    id: uuid.UUID
    created_at: datetime.datetime
    note: str | None = None
    tags: list[str] = []
    metadata: dict = {}


KEYS = ["a", "ab", "b", "created_at", "metadata", "note", "é", 'q"k', "nl\n", ""]


def random_value(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return rng.choice([
            None, "", "x", "ü\u2028", 0, -7, 2**70, 1.5, 1e-7, True, False,
            datetime.datetime(2024, 1, 2, 3, 4, 5), uuid.UUID(int=rng.getrandbits(128)),
            Colour.RED, Colour.NONE, (), [], {},
        ])
    if roll < 0.6:
        n = rng.randrange(4)
        return [random_value(rng, depth + 1) for _ in range(n)]
    if roll < 0.65:
        return tuple(random_value(rng, depth + 1) for _ in range(rng.randrange(3)))
    if roll < 0.7:
        return Point(rng.choice([None, 1]), rng.choice(["", "s"]), datetime.datetime(2020, 5, 6))
    if roll < 0.75:
        return Model(id=uuid.UUID(int=rng.getrandbits(128)), created_at=datetime.datetime(2021, 1, 1),
                     note=rng.choice([None, "", "n"]), tags=rng.choice([[], ["t"]]),
                     metadata=rng.choice([{}, {"b": None}]))
    n = rng.randrange(6)
    return {rng.choice(KEYS): random_value(rng, depth + 1) for _ in range(n)}


@pytest.mark.parametrize("name", POLICIES)
def test_the_page_is_the_whole_texts_for_random_values(name):
    policy = pare.Policy.from_str(POLICIES[name])
    rng = random.Random(name)
    for _ in range(400):
        assert_same_page(policy, {"root": random_value(rng), "b": None})


def test_a_list_of_models_written_by_pydantic_is_left_out_of_too():
    policy = pare.Policy.from_str(POLICIES["drop and prune"])
    models = [Model(id=uuid.UUID(int=i), created_at=datetime.datetime(2024, 1, 1), note=None if i % 2 else "n")
              for i in range(50)]
    assert_same_page(policy, {"items": models})
    page = shaped_as_written(policy, {"items": models})
    assert "created_at" not in page.text and "metadata" not in page.text
    assert page.omitted


def test_the_entities_payload_matches_the_cli(pare_bin):
    from conftest import PAYLOADS, POLICIES as POLICY_DIR, run_pare
    import json
    payload = PAYLOADS / "entities_systems.json"
    policy_file = POLICY_DIR / "entities.toml"
    policy = pare.Policy.from_file(policy_file)
    value = json.loads(payload.read_text())
    cli = run_pare(pare_bin, "compact", "--policy", str(policy_file), str(payload)).stdout.decode()
    _pare._omitted_as_written()
    page = policy.shape(value)
    written = _pare._omitted_as_written()
    assert page.text + "\n" == cli
    adr = pare.Policy.from_file(POLICY_DIR.parent.parent / "bench" / "adr010.toml")
    assert_same_page(adr, value)
    # entities.toml hoists and keys lists by type: those ops are the walk's, so its dicts are
    # written whole (and the page is still the CLI's).
    assert written == 0


def test_an_error_inside_a_dropped_member_is_still_raised():
    policy = pare.Policy.from_str(POLICIES["drop and prune"])
    for bad in (math.nan, object(), {1: "int key"}):
        with pytest.raises((ValueError, TypeError)) as written:
            policy.shape({"keep": 1, "created_at": bad})
        with pytest.raises((ValueError, TypeError)) as whole_text:
            pare.dumps({"keep": 1, "created_at": bad})
        assert str(written.value) == str(whole_text.value)
        assert "$.created_at" in str(written.value)


def test_a_str_subclass_key_has_the_whole_text_written():
    class Key(str):
        pass

    policy = pare.Policy.from_str(POLICIES["drop and prune"])
    value = {Key("created_at"): 1, "a": None, "k": 2}
    _pare._omitted_as_written()
    page = policy.shape(value)
    assert _pare._omitted_as_written() == 0
    assert page.text == whole(policy, value).text == '{"k":2}'


def test_not_with_a_budget_a_walked_op_or_another_format():
    drop = pare.Policy.from_str(POLICIES["drop and prune"])
    walked = pare.Policy.from_str('[[ops]]\nop = "drop"\npaths = ["$.a.b"]\n')
    value = {"a": {"b": 1, "c": None}, "created_at": 2}
    for policy, kw in ((drop, {"budget": 1000}), (drop, {"format": "toon"}), (walked, {})):
        _pare._omitted_as_written()
        page = policy.shape(value, **kw)
        assert _pare._omitted_as_written() == 0
        assert page.text == whole(policy, value, **kw).text


def test_default_runs_once_per_object():
    calls = []

    class Odd:
        pass

    def default(obj):
        calls.append(obj)
        return {"b": None, "x": 1}

    policy = pare.Policy.from_str(POLICIES["drop and prune"])
    page = shaped_as_written(policy, {"o": Odd(), "created_at": Odd()}, default=default)
    assert page.text == '{"o":{"x":1}}'
    assert len(calls) == 2


def big_records(n: int, tag: str) -> list[dict]:
    return [
        {"id": i, "name": f"{tag} {i}", "created_at": "2024-01-01", "note": None if i % 3 else "",
         "tags": [] if i % 2 else ["t", str(i)], "metadata": {"k": i}, "b": {"a": None},
         "nested": {"created_at": 1, "x": None} if i % 5 == 0 else {"y": i / 7}}
        for i in range(n)
    ]


@pytest.mark.skipif(_pare.__abi3__, reason="the abi3 build converts on one thread")
def test_a_big_value_is_left_out_of_on_two_threads_as_on_one():
    policy = pare.Policy.from_str(POLICIES["drop and prune"])
    # `metadata` is dropped whole: its list is the caller's, written with nothing left out.
    value = {"items": big_records(6000, "i"), "metadata": big_records(2000, "m"),
             "more": big_records(4000, "x"), "total": 10000}
    _pare._helper_parts()
    before = _pare._helper_mode(steal=False, paced=False)  # wait for the helper's parts: counted exactly
    try:
        got = shaped_as_written(policy, value)
    finally:
        _pare._helper_mode(*before)
    assert _pare._helper_parts() == 2, "the helper should have written half of items and more"
    for _ in range(10):  # and as the caller claims parts too
        assert shaped_as_written(policy, value).text == got.text
    want = whole(policy, value)
    assert got.text == want.text
    assert got.record() == want.record()
    assert got.omitted


@pytest.mark.skipif(_pare.__abi3__, reason="the abi3 build converts on one thread")
def test_a_helpers_part_stopped_by_python_code_is_counted_once():
    class Odd:
        pass

    policy = pare.Policy.from_str(POLICIES["drop and prune"])
    items = big_records(8000, "i")
    # Python code in the caller's half stops the helper: the parts it did not hand over are
    # written (and counted) by the caller alone.
    items[100]["odd"] = Odd()
    value = {"items": items}
    got = shaped_as_written(policy, value, default=lambda o: {"b": 1, "c": None})
    want = policy.shape(pare.dumps(value, default=lambda o: {"b": 1, "c": None}))
    assert got.text == want.text
    assert got.record() == want.record()
