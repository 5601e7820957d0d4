"""The types a FastAPI or FastMCP handler returns besides JSON's own, shaped directly: each
gives the bytes its ``jsonable_encoder`` form gives (as JSON text), except ``Decimal``, which
keeps its own digits (the documented difference)."""
from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import uuid
from decimal import Decimal

import pytest

import pare

fastapi = pytest.importorskip("fastapi")
pydantic = pytest.importorskip("pydantic")
from fastapi.encoders import jsonable_encoder  # noqa: E402

POLICY = pare.Policy.builtin()


class Color(enum.Enum):
    RED = "red"
    BLUE = 2


class Size(enum.IntEnum):
    S = 1


@dataclasses.dataclass
class Point:
    x: int
    when: dt.date
    tags: list


class Item(pydantic.BaseModel):
    id: uuid.UUID
    created: dt.datetime
    color: Color
    display_name: str = pydantic.Field(alias="displayName")
    point: Point | None = None


def same_as_jsonable_encoder(obj):
    want = POLICY.shape(json.dumps(jsonable_encoder(obj))).text
    assert POLICY.shape(obj).text == want
    return want


def test_datetimes_uuids_enums_dataclasses_and_models_as_jsonable_encoder_writes_them():
    tz = dt.timezone(dt.timedelta(hours=2))
    values = {
        "when": dt.datetime(2026, 11, 27, 1, 2, 3, 456789, tzinfo=tz),
        "naive": dt.datetime(2026, 1, 1),
        "day": dt.date(2026, 2, 28),
        "at": dt.time(23, 59, 1),
        "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "color": Color.RED,
        "number_enum": Color.BLUE,
        "size": Size.S,
        "point": Point(1, dt.date(2020, 1, 2), ["a", Color.RED]),
    }
    assert same_as_jsonable_encoder(values).startswith('{"when":"2026-11-27T01:02:03.456789+02:00"')
    item = Item(
        id=uuid.uuid4(),
        created=dt.datetime(2026, 5, 1, 12, 0),
        color=Color.BLUE,
        displayName="x",
        point=Point(3, dt.date(2021, 3, 4), []),
    )
    assert '"displayName":"x"' in same_as_jsonable_encoder([item, item])


def test_a_thousand_models_shape_as_their_json_dump():
    items = [
        Item(id=uuid.UUID(int=i), created=dt.datetime(2026, 1, 1) + dt.timedelta(minutes=i), color=Color.RED, displayName=f"n{i}")
        for i in range(1000)
    ]
    same_as_jsonable_encoder({"items": items})


class Measure(pydantic.BaseModel):
    label: str
    values: list[float]
    nested: list[Item] = []


def test_a_model_written_by_pydantics_json_is_its_dump_byte_for_byte():
    # pare writes a model by pydantic's own JSON (no dict made), with floats rewritten as
    # Python's repr: the bytes are those of its `model_dump(mode="json")`, for floats of
    # every exponent and strings with every escape.
    floats = [1e-7, 1e-5, 1e-4, 0.1, 1.0, 100.0, 1e15, 1e16, 1.2345678901234568e20, -0.0, 5e-324, 1.7976931348623157e308, -2.5e-300]
    floats += [1.1 * 10.0**e for e in range(-30, 30)]
    label = 'a"\\\n\t\x00\x08\x0c\x1b\x1f\x7f é€😀\u2028'
    item = Item(id=uuid.UUID(int=7), created=dt.datetime(2026, 1, 1), color=Color.RED, displayName=label, point=Point(1, dt.date(2020, 1, 1), [2.5e-9]))
    m = Measure(label=label, values=floats, nested=[item])
    want = json.dumps(m.model_dump(mode="json", by_alias=True), separators=(",", ":"), ensure_ascii=False).encode()
    assert pare.dumps(m) == want
    assert pare.dumps({"m": [m, m]}) == json.dumps({"m": [json.loads(want)] * 2}, separators=(",", ":"), ensure_ascii=False).encode()


def test_runs_of_models_in_a_list_are_their_dumps_and_a_failing_one_still_fails():
    # Runs of one class are written in one call of pydantic's list serializer: mixed
    # lists, subclasses, runs of one and many, give the dumps' bytes.
    class Sub(Measure):
        extra: int = 5

    a = Measure(label="a", values=[1e-7])
    b = Item(id=uuid.UUID(int=1), created=dt.datetime(2026, 1, 1), color=Color.BLUE, displayName="b")
    mixed = [a, a, b, a, Sub(label="s", values=[]), Sub(label="t", values=[2.5]), {"x": a}, a, a, a, [b, b]]

    def dumped(v):
        if isinstance(v, pydantic.BaseModel):
            return v.model_dump(mode="json", by_alias=True)
        if isinstance(v, dict):
            return {k: dumped(x) for k, x in v.items()}
        if isinstance(v, list):
            return [dumped(x) for x in v]
        return v

    assert pare.dumps(mixed) == json.dumps(dumped(mixed), separators=(",", ":"), ensure_ascii=False).encode()

    # The run was written by a list serializer (made here, for a class new to pare).
    import pydantic_core

    class Row(pydantic.BaseModel):
        x: float

    made = []
    real = pydantic_core.SchemaSerializer

    def counting(*args, **kwargs):
        made.append(args)
        return real(*args, **kwargs)

    rows = [Row(x=i / 7) for i in range(50)]
    try:
        pydantic_core.SchemaSerializer = counting
        text = pare.dumps(rows)
    finally:
        pydantic_core.SchemaSerializer = real
    assert len(made) == 1
    assert text == json.dumps(dumped(rows), separators=(",", ":"), ensure_ascii=False).encode()

    class Loose(pydantic.BaseModel):
        v: object

    class Opaque:
        pass

    bad = [Loose(v=1), Loose(v=2), Loose(v=Opaque()), Loose(v=3)]
    with pytest.raises(Exception) as direct:
        pare.dumps(bad)
    with pytest.raises(Exception) as dumped_first:
        bad[2].model_dump(mode="json")
    assert type(direct.value) is type(dumped_first.value)


def test_regression_a_models_json_that_repeats_a_key_was_written_with_both():
    # An alias that is another field's name: pydantic's JSON has the key twice, its
    # `model_dump` once (the later field's value, at the first place). pare writes the dump.
    class Clash(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")
        x: int = pydantic.Field(alias="y")
        y: int = 0

    one = Clash(y=1)
    extra = Measure.model_validate({"label": "a", "values": []})
    for v in ([one], [one, one, one], {"a": one}, [Clash(y=2, z=3), extra, extra]):
        want = json.dumps(
            json.loads(json.dumps(v, default=lambda m: m.model_dump(mode="json", by_alias=True))),
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode()
        assert pare.dumps(v) == want, v
    assert POLICY.shape([one, one]).warnings == POLICY.shape([one.model_dump(mode="json", by_alias=True)] * 2).warnings


def test_a_model_with_its_own_model_dump_is_written_by_it():
    class Custom(pydantic.BaseModel):
        x: int

        def model_dump(self, **kwargs):
            return {"custom": self.x, "mode": kwargs.get("mode")}

    assert pare.dumps([Custom(x=1)]) == b'[{"custom":1,"mode":"json"}]'


def test_a_models_nan_is_null_as_pydantic_writes_it_or_refused_as_a_float_is():
    # The documented difference: pydantic's JSON writes NaN and infinities as its
    # `ser_json_inf_nan` says (`null` by default), where `model_dump` + `json.dumps` would
    # write `NaN`, which no JSON reader takes.
    class Reading(pydantic.BaseModel):
        x: float

    assert pare.dumps(Reading(x=float("nan"))) == b'{"x":null}'

    class Strict(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(ser_json_inf_nan="constants")
        x: list[float]

    with pytest.raises(ValueError, match=r"-Infinity at \$\.a\[0\] is not a JSON number"):
        pare.dumps({"a": [Strict(x=[1.0, float("-inf")])]})


def test_decimal_keeps_its_own_digits_and_refuses_nan():
    assert POLICY.shape({"price": Decimal("1.10"), "big": Decimal("1E+2"), "neg": Decimal("-0.000001")}).text == (
        '{"price":1.10,"big":1E+2,"neg":-0.000001}'
    )
    with pytest.raises(ValueError, match=r'Decimal\("NaN"\) at \$\.x\[1\] is not a JSON number'):
        POLICY.shape({"x": [1, Decimal("NaN")]})


def test_what_is_still_not_json_names_its_type_and_place():
    with pytest.raises(TypeError, match=r"cannot shape a set at \$\.s"):
        POLICY.shape({"s": {1, 2}})
    with pytest.raises(TypeError, match=r"cannot shape a type at \$\.t"):
        POLICY.shape({"t": Point})
