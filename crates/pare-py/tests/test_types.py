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
