"""A big conversion takes the helper thread only when that has been faster (split/pace.rs).

Each big conversion is timed, with the helper or alone; each goes the faster way but every
32nd, which goes the other (so a change is seen). Here a helper is made slow on purpose (it
starts 50 ms late, and the conversion waits for it to be done), so alone is faster whatever
the machine.
"""
from __future__ import annotations

import json

import pytest

import pare
from pare import _pare

pytestmark = pytest.mark.skipif(
    _pare.__abi3__,
    reason="the abi3 build converts on one thread (no helper to pace); the per-version build does",
)

PROBE_EVERY = 32


def reference(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def records(n: int) -> list[dict]:
    return [{"id": i, "name": f"rec {i}", "score": i / 7, "tags": ["a", str(i)]} for i in range(n)]


def test_a_helper_that_only_slows_conversions_down_is_left_out_but_for_probes():
    value = {"items": records(4000), "more": records(3000)}
    want = reference(value)
    before = _pare._helper_mode(steal=True, late_ms=50, paced=True)
    try:
        _pare._pace(reset=True)
        # The first big conversion takes the helper (one that starts its thread is not
        # timed: a conversion does that once), the next goes alone, to time both ways.
        for _ in range(3):
            if _pare._pace()[0] is not None:
                break
            assert pare.dumps(value) == want
        with_helper, alone, next_takes = _pare._pace()
        assert with_helper is not None and alone is None and next_takes is False
        assert pare.dumps(value) == want
        ways = []
        for _ in range(2 * PROBE_EVERY):
            ways.append(_pare._pace()[2])
            assert pare.dumps(value) == want
        with_helper, alone, _ = _pare._pace()
    finally:
        _pare._helper_mode(*before)
    assert alone < with_helper, (alone, with_helper)
    # Alone, but for one probe in each 32 (the helper that starts 50 ms late is not one
    # that pays, so a probe never turns it around).
    assert ways.count(True) == 2, ways


def test_a_conversion_that_stops_its_helper_early_is_not_timed():
    class Rich:
        pass

    value = {"items": [Rich()] + records(5000)}
    before = _pare._helper_mode(paced=True)
    try:
        _pare._pace(reset=True)
        text = pare.dumps(value, default=lambda o: "rich")
        timed = _pare._pace()
    finally:
        _pare._helper_mode(*before)
    assert text == reference({"items": ["rich"] + records(5000)})
    # Python code ran (the default hook), which stops the helper: the time says nothing
    # of how fast either way is.
    assert timed == (None, None, True)


def test_conversions_alone_and_with_the_helper_give_the_same_text():
    value = {"items": records(3000), "other": [[i, str(i)] for i in range(3000)], "n": 1}
    want = reference(value)
    before = _pare._helper_mode(paced=True)
    try:
        _pare._pace(reset=True)
        seen = set()
        for _ in range(2 * PROBE_EVERY):
            seen.add(_pare._pace()[2])
            assert pare.dumps(value) == want
    finally:
        _pare._helper_mode(*before)
    assert seen == {True, False}, "both ways should have run"


def test_regression_one_slow_call_turned_the_choice_for_the_next_32():
    # Averages of 1.0 ns/B with the helper and 2.0 alone: the helper. Then one call the
    # scheduler held up, 100 ns/B: counted as twice the average, the helper stays ahead
    # (a quarter of the raw time had made its average 25.75 and sent 32 calls alone).
    _pare._pace(reset=True, record=(True, 1.0))
    _pare._pace(record=(False, 2.0))
    assert _pare._pace()[:2] == (1.0, 2.0)
    with_helper, alone, _ = _pare._pace(record=(True, 100.0))
    assert (with_helper, alone) == (1.25, 2.0)
    # A way that is slower for good still loses: four slow calls in a row.
    for _ in range(4):
        with_helper, alone, _ = _pare._pace(record=(True, 8.0))
    assert with_helper > alone
    _pare._pace(reset=True)
