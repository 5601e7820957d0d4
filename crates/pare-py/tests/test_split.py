"""The converter's second thread (``crates/pare-py/src/split.rs``): a big object's long lists
are written half by a helper thread. The text must be byte for byte what one thread writes,
whatever the helper meets: types it gives up on, errors in its half, and Python code (a
``default=`` hook) that changes its half while the first half is written."""
from __future__ import annotations

import datetime
import enum
import json
import os
import signal
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

import pare
from pare import _pare

pytestmark = pytest.mark.skipif(
    _pare.__abi3__,
    reason="the abi3 build converts on one thread (no helper to test); the per-version build does",
)


def reference(value, **kw) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, **kw).encode()


@pytest.fixture(autouse=True)
def helper_always():
    """Every big conversion here takes the helper: by default a process takes it only when
    that has been faster (test_pace.py), and these tests are of the two-thread path."""
    before = _pare._helper_mode(paced=False)
    yield
    _pare._helper_mode(*before)


def records(n: int, tag: str = "rec") -> list[dict]:
    """About 150 bytes each: 3,000 are well past the size the helper starts at."""
    return [
        {"id": i, "name": f"{tag} {i}", "score": i / 7, "ok": i % 2 == 0, "note": None,
         "tags": ["a", "b", str(i)], "pair": (i, -i)}
        for i in range(n)
    ]


def dumps_counting(value, **kw) -> tuple[bytes, int]:
    """The text, and of how many lists the helper wrote parts. The caller waits for every
    part the helper would write here (``steal=False``): by default it writes a part no one
    has claimed yet itself, and how many that is depends on the scheduler."""
    _pare._helper_parts()  # reset this thread's count
    before = _pare._helper_mode(steal=False, paced=False)
    try:
        text = pare.dumps(value, **kw)
    finally:
        _pare._helper_mode(*before)
    return text, _pare._helper_parts()


def test_a_helper_that_starts_late_leaves_every_part_to_the_caller():
    value = {"items": records(3000), "more": records(2000, "more"), "total": 5000}
    _pare._helper_parts()
    before = _pare._helper_mode(steal=True, late_ms=200, paced=False)
    try:
        text = pare.dumps(value)
    finally:
        _pare._helper_mode(*before)
    assert text == reference(value)
    assert _pare._helper_parts() == 0, "the caller should have claimed every part"


def test_parts_claimed_by_both_threads_join_as_one_thread_writes_them():
    # Whichever thread claims each chunk, the text is the same: run it often enough that
    # both orders happen (the helper starts tens of microseconds after the caller).
    value = {"items": records(6000), "mixed": [1, "two", None, 3.5] * 2000,
             "more": records(3000, "more"), "total": 9000}
    want = reference(value)
    for _ in range(30):
        assert pare.dumps(value) == want


def test_a_big_dict_of_lists_is_written_on_two_threads_as_one_writes_it():
    value = {"items": records(3000), "more": records(2000, "more"), "total": 5000}
    text, parts = dumps_counting(value)
    assert text == reference(value)
    assert parts == 2, "the helper should have written the second half of both lists"


def test_a_big_list_at_the_root_and_a_small_one_stays_on_one_thread():
    value = records(4000)
    text, parts = dumps_counting(value)
    assert text == reference(value) and parts == 1
    small = records(100)
    text, parts = dumps_counting(small)
    assert text == reference(small) and parts == 0


def test_one_list_met_twice_and_inside_another_member_is_written_each_time():
    shared = records(3000)
    value = {"first": {"inner": shared}, "shared": shared, "again": shared}
    text, parts = dumps_counting(value)
    assert text == reference(value)
    assert parts >= 1


class Colour(enum.IntEnum):
    RED = 1


class MyStr(str):
    pass


@pytest.mark.parametrize(
    "odd",
    [MyStr("sub"), Colour.RED, 2**70, -(2**64), {"k": MyStr("v")}, (1, [2, {"deep": 2**65}])],
    ids=["str-subclass", "int-enum", "big-int", "big-negative-int", "subclass-in-dict", "deep-big-int"],
)
def test_what_the_helper_gives_up_on_in_its_half_is_written_by_the_caller(odd):
    items = records(3000)
    items[2500]["odd"] = odd
    value = {"items": items}
    text, parts = dumps_counting(value)
    assert text == reference(value)
    # The helper gives up on the chunk that holds it (the caller writes that one) and
    # writes the others.
    assert parts == 1, "the helper should have written the chunks around the odd item"


def test_strings_whose_utf8_cpython_has_not_made_are_encoded_on_both_threads():
    # Made now, by join: CPython makes a str's UTF-8 only when asked, and pare does not ask.
    words = ["".join(["fresh ", c, str(i)]) for i, c in enumerate("é€😀\u2028ÿ" * 600)]
    items = records(3000)
    for i, w in enumerate(words):
        items[i]["word"] = w
        items[i][w] = i  # as keys too
    value = {"items": items}
    text, parts = dumps_counting(value)
    assert text == reference(value)
    assert parts == 1, "non-ASCII strings should not stop the helper"


def test_a_lone_surrogate_in_the_helpers_half_is_refused_with_its_place():
    items = records(3000)
    items[2700]["name"] = "bad \ud800 text"
    with pytest.raises(ValueError, match=r"a str at \$\.items\[2700\]\.name is not Unicode text"):
        pare.dumps({"items": items})


def test_a_rich_type_early_in_the_callers_half_stops_the_helper_and_all_is_written():
    items = records(3000)
    items[3]["when"] = datetime.datetime(2026, 11, 27, 12, 0, tzinfo=datetime.timezone.utc)
    value = {"items": items}
    text, parts = dumps_counting(value)
    assert text == reference(value, default=lambda o: o.isoformat())
    assert parts == 0, "Python code ran (isoformat) before the helper's part was reached"


def test_a_default_hook_that_changes_the_helpers_half_is_seen_as_one_thread_sees_it():
    class Marker:
        pass

    def make():
        items = records(3000)
        # The last item of the caller's half: by the time it is written, the helper (items
        # 1500 on, as fast) has written much of its half, which the hook then changes.
        items[1499]["m"] = Marker()

        def default(obj):
            items[1500]["name"] = "changed by default="
            items[1501]["tags"].append("added")
            del items[1502]["note"]
            items[2999]["id"] = -1
            return "marker"

        return {"items": items}, default

    value, default = make()
    text = pare.dumps(value, default=default)
    value, default = make()
    # json.dumps writes on one thread, in order: the reference for what Python code changes.
    assert text == reference(value, default=default)
    assert b"changed by default=" in text and b'"added"' in text


def test_nan_in_the_helpers_half_is_refused_with_its_place():
    items = records(3000)
    items[2222]["score"] = float("nan")
    with pytest.raises(ValueError, match=r"\$\.items\[2222\]\.score"):
        pare.dumps({"items": items})


def test_a_bad_key_in_the_helpers_half_is_refused_with_its_place():
    items = records(3000)
    items[2345][7] = "int key"
    with pytest.raises(TypeError, match=r"dict keys must be str, got int \(7\) at \$\[2345\]"):
        pare.dumps(items)


def test_a_cycle_in_the_helpers_half_stops_at_the_depth_limit():
    items = records(3000)
    loop: list = []
    loop.append(loop)
    items[2500]["loop"] = loop
    with pytest.raises(ValueError, match="nested deeper than"):
        pare.dumps(items)


def test_threads_converting_one_shared_object_at_once_all_get_its_text():
    value = {"items": records(3000), "other": records(3000, "o")}
    want = reference(value)
    got: list[bytes] = []
    errors: list[BaseException] = []

    def work():
        try:
            for _ in range(10):
                got.append(pare.dumps(value))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(got) == 40 and all(g == want for g in got)


def test_shape_of_a_big_dict_is_the_same_as_shape_of_its_text():
    policy = pare.Policy.builtin()
    value = {"items": records(3000), "total": 3000}
    assert policy.shape(value).text == policy.shape(json.dumps(value)).text


def test_refcounts_are_as_they_were_after_two_thread_conversions():
    items = records(3000)
    value = {"items": items}
    before = [sys.getrefcount(x) for x in (value, items, items[0], items[2999])]
    for _ in range(20):
        pare.dumps(value)
    assert [sys.getrefcount(x) for x in (value, items, items[0], items[2999])] == before


def test_keys_the_helper_caches_escaped_long_and_non_ascii_are_written_right():
    keys = ['q"uote', "back\\slash", "tab\there", "é-accent", "long-" + "k" * 60, "ctl\x01"]
    items = [{k + str(i % 300): i for k in keys} for i in range(3000)]
    value = {"items": items}
    first, first_parts = dumps_counting(value)
    second, parts = dumps_counting(value)
    assert first == second == reference(value)
    assert first_parts == parts == 1


def test_converting_a_non_ascii_str_leaves_it_without_a_utf8_copy():
    # CPython's own UTF-8 call would keep a copy inside each string (and sys.getsizeof counts
    # it); the per-version build encodes from the characters and changes nothing.
    words = ["".join(["naïve ", str(i), " 東京 😀"]) for i in range(100)]
    sizes = [sys.getsizeof(w) for w in words]
    pare.dumps({"words": words, "by": {w: i for i, w in enumerate(words)}})
    assert [sys.getsizeof(w) for w in words] == sizes


ENTITIES = Path(__file__).resolve().parents[3] / "examples" / "policies" / "entities.toml"


@pytest.mark.parametrize("level", [None, "full"])
def test_shape_of_a_megabyte_dict_read_on_two_threads_is_shape_of_its_text(level):
    # Past 512 KB a dict's text is streamed on two threads without looking for repeated
    # keys (Request::written_by_door); a text from elsewhere waits for 2 MB and looks.
    policy = pare.Policy.from_file(ENTITIES)
    value = {
        "entities": [dict(r, created_at="2026-01-01", metadata={}, aliases=[]) for r in records(4000)],
        "relationships": [{"from": i, "to": i + 1, "relationship_type": None if i % 5 else "uses",
                           "created_at": "x", "version": 2} for i in range(4000)],
        "total": 4000,
    }
    text = json.dumps(value)
    assert len(text) > 1_000_000
    kw = {} if level is None else {"level": level}
    assert policy.shape(value, **kw).text == policy.shape(text, **kw).text


class SameTextKey(str):
    """Two of these with one text are two keys of one dict."""

    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other


def test_regression_keys_of_one_text_from_a_str_subclass_are_not_taken_as_unique():
    policy = pare.Policy.builtin()
    d = {SameTextKey("a"): 1, SameTextKey("a"): 2, "b": [1, 2]}
    assert len(d) == 3
    text = json.dumps(d, separators=(",", ":"))
    assert text == '{"a":1,"a":2,"b":[1,2]}'
    # As the text is read: the last "a" wins, as `pare compact` gives it.
    assert policy.shape(d).text == policy.shape(text).text == '{"a":2,"b":[1,2]}'


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_a_forked_child_converts_with_a_helper_of_its_own():
    # The helper thread is kept between conversions; a forked child has only the thread
    # that forked, so it must start its own, not hand its work to one that is not there.
    value = {"items": records(3000), "more": records(2000, "more")}
    want = reference(value)
    assert pare.dumps(value) == want  # the parent's helper thread is running now
    alone = os_threads() == 2  # this one and the helper
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pid = os.fork()
    if pid == 0:  # the child: exit 0 only if the conversion (on two threads) is right
        try:
            _pare._helper_parts()
            before = _pare._helper_mode(steal=False, paced=False)
            ok = pare.dumps(value) == want and _pare._helper_parts() == 2
            _pare._helper_mode(*before)
        finally:
            os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child's conversion hung")
    assert pare.dumps(value) == want  # and the parent's helper still works
    # The helper thread ended before the fork: CPython 3.12+ warns of a fork with threads.
    if alone:
        assert not [w for w in caught if "multi-threaded" in str(w.message)]


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="no /proc/self/task here")
def test_the_helper_thread_is_kept_between_conversions_and_ends_when_asked():
    value = {"items": records(3000)}
    pare.dumps(value)
    running = os_threads()
    for _ in range(5):
        pare.dumps(value)
        assert os_threads() == running, "one helper thread, kept, not one per conversion"
    _pare._end_helper_thread()  # what os.register_at_fork calls before a fork
    assert os_threads() == running - 1
    _pare._end_helper_thread()  # and again, with none running
    assert pare.dumps(value) == reference(value)
    assert os_threads() == running
