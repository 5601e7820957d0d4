"""``pare.dumps`` and the ``default=`` hook: a Python value as the JSON text the engine reads
(``json.dumps(v, separators=(",", ":"), ensure_ascii=False)`` for JSON's own types), the
conversion behind ``Policy.shape(dict)``, and what happens when a hook or a hostile object
gets in the way."""
from __future__ import annotations

import collections
import enum
import json
import math
import random
import struct
import sys

import pytest

import pare

POLICY = pare.Policy.builtin()


def reference(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


class Tag(str, enum.Enum):
    A = "a\n\"b\""


class Level(enum.IntEnum):
    HIGH = 3


class MyStr(str):
    pass


class MyInt(int):
    def __str__(self):  # json.dumps writes int.__repr__'s digits, not this
        return "not-digits"


class MyFloat(float):
    pass


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(10 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([0, -1, 2**63 - 1, -(2**63), 2**64, -(10**30), rng.randrange(-10**6, 10**6)])
    if kind == 3:
        return rng.choice([0.0, -0.0, 1e-7, 1e16, 1e15, 123456789012345.6, 0.1, -2.5e-300, 1.7976931348623157e308,
                           rng.uniform(-1e6, 1e6), rng.random() * 10 ** rng.randrange(-30, 30)])
    if kind in (4, 5):
        alphabet = 'ab"\\\n\t\x00\x1f\x7f/é€😀\u2028 '
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
    if kind in (6, 7):
        seq = [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 6))]
        return tuple(seq) if kind == 7 else seq
    keys = ["id", "name", "a\"b", "é", "k" * 50, "x\ty"]
    return {rng.choice(keys) + str(i % 3): random_value(rng, depth + 1) for i in range(rng.randrange(0, 6))}


def test_dumps_is_json_dumps_for_json_types_on_random_values():
    rng = random.Random(33)
    for _ in range(3000):
        v = random_value(rng)
        assert pare.dumps(v) == reference(v), v
        # And the engine reads it as it reads that text (a str alone would be JSON text).
        assert POLICY.shape([v]).text == POLICY.shape(reference([v])).text


def test_strings_of_every_length_with_an_escape_at_every_place():
    # The converter copies strings eight bytes at a time and escapes where a word stops:
    # every length around a word, an escape (or a multi-byte character) at every place.
    for n in range(0, 26):
        for at in range(n):
            for odd in ('"', "\\", "\n", "\x00", "\x1f", "é", "€", "😀", "\x7f"):
                for filler in ("a", "é"):
                    s = filler * at + odd + filler * (n - at - 1)
                    assert pare.dumps(s) == reference(s), s
                    assert pare.dumps({s: [s, s + odd]}) == reference({s: [s, s + odd]}), s


def test_floats_of_every_exponent_are_written_as_repr():
    rng = random.Random(7)
    xs = [rng.uniform(-1, 1) * 10.0 ** rng.randrange(-320, 308) for _ in range(20000)]
    xs += [10.0**e for e in range(-20, 22)] + [5e-324, 1e-5, 1e-4, 9.999999999999999e15, 1e16]
    assert pare.dumps(xs) == reference(xs)


def test_floats_of_every_bit_pattern_and_near_1e_minus_4_are_written_as_repr():
    # zmij writes these; below 1e-4 its form differs from Python's (`1e-7`, `0.00001`).
    rng = random.Random(11)
    xs = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(50000)]
    xs = [x for x in xs if math.isfinite(x)]
    xs += [m * 10.0**e for e in range(-9, 0) for m in (1.0, -1.0, 1.5, 9.999999999999999, 1.0000000000000002)]
    xs += [rng.uniform(-2e-4, 2e-4) for _ in range(5000)] + [0.0, -0.0, 9.999999999999999e-05, 0.00011]
    assert pare.dumps(xs) == reference(xs)


def test_subclasses_and_enums_that_are_ints_or_strs():
    v = {
        "od": collections.OrderedDict([("b", 1), ("a", 2)]),
        "dd": collections.defaultdict(list, {"x": [1]}),
        MyStr("key"): MyStr("value"),
        "tag": Tag.A,
        "level": Level.HIGH,
        "my_int": MyInt(5),
        "big": MyInt(2**70),
        "my_float": MyFloat(0.5),
    }
    assert pare.dumps(v) == reference(v)


def test_a_key_that_is_not_a_str_names_its_type_value_and_place():
    with pytest.raises(TypeError, match=r"dict keys must be str, got int \(1\) at \$\.a\[0\]"):
        pare.dumps({"a": [{1: "x"}]})


def test_text_that_is_not_unicode_is_refused_with_its_place():
    with pytest.raises(ValueError, match=r"a str at \$\.s\[1\] is not Unicode text"):
        pare.dumps({"s": ["ok", "\ud800"]})
    with pytest.raises(ValueError, match=r"a dict key at \$\.d is not Unicode text"):
        pare.dumps({"d": {"\udfff": 1}})


def test_nan_is_refused_with_its_place():
    with pytest.raises(ValueError, match=r"NaN at \$\.x is not a JSON number"):
        POLICY.shape({"x": float("nan")})


def test_regression_doors_wrote_a_place_each_their_own_way():
    # Every door says where a value is as the engine writes a path: `['x y']` (it was
    # `["x y"]` here, in Rust's quoting), control characters escaped, a long path cut.
    with pytest.raises(ValueError, match=r"NaN at \$\['x y'\]\.b\['a\\nb'\]\[0\] is not"):
        POLICY.shape({"x y": {"b": {"a\nb": [float("nan")]}}})
    with pytest.raises(ValueError, match=r"NaN at \$\['it\\'s'\]\['0a'\]\.a-b "):
        POLICY.shape({"it's": {"0a": {"a-b": float("nan")}}})


def test_a_cycle_stops_at_the_parsers_depth_with_a_message():
    d: dict = {}
    d["self"] = d
    with pytest.raises(ValueError, match=r"nested deeper than 256 levels at \$(\.self){8}…\(\d+ more\)…(\.self){8}, .*a cycle"):
        pare.dumps(d)
    deep: list = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(ValueError, match="nested deeper"):
        POLICY.shape(deep)


class Money:
    def __init__(self, cents: int):
        self.cents = cents


def test_default_converts_what_pare_does_not_know_as_json_dumps_does():
    hook = lambda o: {"cents": o.cents} if isinstance(o, Money) else sorted(o)  # noqa: E731
    v = {"price": Money(150), "tags": {"b", "a"}, "n": [Money(1)]}
    assert pare.dumps(v, default=hook) == json.dumps(v, default=hook, separators=(",", ":")).encode()
    shaped = POLICY.shape(v, default=hook)
    assert shaped.text == '{"price":{"cents":150},"tags":["a","b"],"n":[{"cents":1}]}'
    # tokens_before is counted from the value written again, with the same hook.
    assert shaped.tokens_before == pare.count_tokens(pare.dumps(v, default=hook).decode())
    assert pare.encode(v, format="toon", default=hook).startswith("price:")
    assert POLICY.pages(v, budget=1000, default=hook)[0].text == shaped.text
    assert POLICY.shape_value(v, default=hook) == json.loads(shaped.text)
    assert pare.stats(v, default=hook)["tokens"] > 0


def test_a_default_that_calls_dumps_gets_its_own_buffer():
    # Each text on a thread is written into the buffer the one before gave back: a text
    # written inside another's (a hook that calls pare.dumps) must not share it.
    inner = {"deep": ["x" * 300, {"k": 1.5}]}
    hook = lambda o: json.loads(pare.dumps(inner)) if isinstance(o, Money) else None  # noqa: E731
    v = {"a": "y" * 500, "m": Money(1), "tail": list(range(50))}
    expected = reference({"a": "y" * 500, "m": inner, "tail": list(range(50))})
    for _ in range(3):
        assert pare.dumps(v, default=hook) == expected
    # A huge text's buffer is not kept, and the next small text is right all the same.
    big = ["z" * 1000] * 3000
    assert pare.dumps(big) == reference(big)
    assert pare.dumps({"b": 2}) == b'{"b":2}'


def test_bytes_made_from_the_kept_buffer_are_not_changed_by_the_next_text():
    # pare.dumps makes its bytes where the text lies and keeps the buffer for the next
    # text on the thread: each bytes must be a copy, whatever comes after it.
    values = [{"a": "x" * n, "n": n} for n in (0, 5, 300, 40, 2000, 1)]
    made = [pare.dumps(v) for v in values]
    try:
        pare.dumps({"bad": float("nan")})
    except ValueError:
        pass
    made.append(pare.dumps({}))
    assert made == [reference(v) for v in values] + [b"{}"]


def test_default_is_not_asked_about_types_pare_writes():
    seen = []
    pare.dumps({"a": [1, 2.5, "x", None, True]}, default=seen.append)
    assert seen == []


def test_an_error_default_raises_gets_the_place_and_keeps_its_cause():
    def hook(o):
        raise TypeError(f"no idea what {type(o).__name__} is")

    with pytest.raises(TypeError, match=r"default= raised at \$\.items\[1\]: no idea what Money is") as info:
        pare.dumps({"items": [1, Money(2)]}, default=hook)
    assert isinstance(info.value.__cause__, TypeError)

    class Boom(Exception):
        pass

    def boom(o):
        raise Boom("kept as it is")

    with pytest.raises(Boom, match="kept as it is"):
        POLICY.shape({"m": Money(1)}, default=boom)


def test_a_default_that_never_gives_json_stops_at_the_depth_limit():
    with pytest.raises(ValueError, match="nested deeper"):
        pare.dumps({"m": Money(1)}, default=lambda o: Money(0))


def test_regression_a_default_that_empties_the_dict_being_written_is_an_error_not_a_crash():
    d = {"a": Money(1), "b": 2, "c": 3}

    def hook(o):
        d.clear()
        return 0

    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        pare.dumps(d, default=hook)


def test_regression_a_default_that_empties_the_list_being_written_does_not_crash():
    items = [Money(1), {"k": "v"}, "x" * 100]

    def hook(o):
        items.clear()
        return "gone"

    assert pare.dumps(items, default=hook) == b'["gone"]'


def test_regression_keys_freed_by_a_default_are_not_read_from_the_cache():
    # The key cache is by address: a hook that frees a row already written (its dict and
    # key) and makes a new key, likely at the freed address, must not get the old key's text.
    rows = [{f"key{i}": Money(i)} for i in range(200)]

    def hook(o):
        if o.cents:
            rows[o.cents - 1] = None
        return {f"fresh{o.cents}": o.cents}

    out = json.loads(pare.dumps(rows, default=hook))
    assert out == [{f"key{i}": {f"fresh{i}": i}} for i in range(200)]


def test_a_1_kb_dict_gives_the_same_text_as_its_json():
    small = {"id": 1, "name": "x" * 900, "tags": ["a", "b"], "score": 0.25}
    assert POLICY.shape(small).text == POLICY.shape(json.dumps(small)).text


@pytest.mark.skipif(sys.version_info < (3, 11), reason="StrEnum is 3.11+")
def test_strenum_is_its_str():
    class Color(enum.StrEnum):
        RED = "red"

    assert pare.dumps({"c": Color.RED}) == b'{"c":"red"}'


def test_dicts_with_holes_mixed_keys_and_split_tables_are_written_in_order():
    class Obj:
        def __init__(self):
            self.a, self.b = 1, None

    holes = {f"k{i}": i for i in range(300)}
    for i in range(0, 300, 7):
        del holes[f"k{i}"]
    holes["late"] = "after the deletions"
    instance = Obj().__dict__  # a split table
    instance["c"] = [1]
    value = {"holes": holes, "instance": instance,
             "defaults": collections.defaultdict(list, {"x": [1]}), "empty": {}}
    assert pare.dumps(value) == reference(value)
    # Keys other than str make a table with hashes: refused, naming the place.
    with pytest.raises(TypeError, match=r"\$\.mixed"):
        pare.dumps({"mixed": {"a": 1, 2: "b"}})


def test_short_ascii_strings_with_every_special_byte_at_every_place_are_escaped():
    """A compact ASCII string under 8 bytes is read as one word ending where it ends
    (``capi::short_ascii``): its bytes must be the string's, and an escape anywhere in them
    must still be written."""
    specials = ['"', "\\", "\n", "\x00", "\x1f", "\x7f", "~", "a"]
    values = [""]
    for n in range(1, 12):
        for c in specials:
            for at in range(n):
                values.append("x" * at + c + "y" * (n - at - 1))
    value = {"values": values, "keys": {v: i for i, v in enumerate(values)}}
    assert pare.dumps(value) == reference(value)
    # And in the second thread's half of a long list.
    big = {"items": [{"k": v, v: 1} for v in values] * 40}
    assert pare.dumps(big) == reference(big)


def test_dict_tables_of_every_index_width_and_kind_are_read_in_order():
    """pare reads a dict's entry table directly on CPython 3.11-3.13 (``capi::dict_next``):
    the entries start after 1-, 2- or 4-byte indices (8 from 2**32 slots), and a table that once held a key
    other than ``str`` keeps entries with hashes after that key is gone."""
    for size in (3, 200, 70_000):  # indices of 1, 2 and 4 bytes
        d = {f"k{i}": i for i in range(size)}
        for i in range(0, size, 3):
            del d[f"k{i}"]
        assert pare.dumps(d) == reference(d), size
    general = {0: "gone", "a": 1, "b": [2, {"c": None}]}
    del general[0]
    for i in range(50):
        general[f"g{i}"] = i
    assert pare.dumps(general) == reference(general)
    assert pare.dumps({"nested": general, "list": [general] * 20}) == reference(
        {"nested": general, "list": [general] * 20}
    )


def test_regression_an_ordered_dicts_own_order_was_lost():
    """A dict subclass was read from its table, as a dict: an ``OrderedDict`` whose order was
    changed (``move_to_end``) came out in insertion order. ``json.dumps`` writes a subclass
    by its ``items()``, and so does pare now."""

    class Pairs(dict):
        def items(self):
            return [("x", 1), ("y", 2)]

    class Broken(dict):
        def items(self):
            return [1]

    ordered = collections.OrderedDict([("z", 1), ("a", 2)])
    ordered.move_to_end("z")
    value = {"ordered": ordered, "pairs": Pairs(a=1)}
    assert pare.dumps(value) == reference(value) == b'{"ordered":{"a":2,"z":1},"pairs":{"x":1,"y":2}}'
    with pytest.raises(ValueError, match=r"must return \(key, value\) pairs, at \$\.broken"):
        pare.dumps({"broken": Broken(a=1)})
