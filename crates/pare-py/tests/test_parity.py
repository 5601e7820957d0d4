"""The package's output is byte for byte what `pare compact` prints (minus the final
newline) with the same policy, level, format and budget — for a dict and for JSON text.

Every corpus payload with every example policy at its default level, and the scenario
pairs at every level, in every format, with and without a budget (and the later pages
by cursor).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import pare
from conftest import PAYLOADS, POLICIES, run_pare

PAIRS = {
    "entities.toml": ["entities.json", "entities_systems.json", "s1_entity.json"],
    "meta_relations.toml": ["search_memory.json", "s2_meta_relations.json"],
    "narrative.toml": ["narrative_day.json", "s3_narrative.json"],
    "website_usage.toml": ["website_usage.json"],
    "memory.toml": ["vendor_graph_full.json"],
    "search.toml": ["semantic_search_full.json"],
}
FORMATS = ["json", "pretty", "toon", "auto"]


class Refused(Exception):
    """The CLI refused the input (exit 2); the package must refuse it with the same words."""


def cli(pare_bin: Path, payload: Path, policy: Path, *extra: str) -> str:
    r = run_pare(pare_bin, "compact", str(payload), "--policy", str(policy), *extra)
    if r.returncode == 2:
        raise Refused(r.stderr.decode().removeprefix("pare: error: ").strip())
    assert r.returncode == 0, r.stderr.decode()
    out = r.stdout.decode()
    assert out.endswith("\n")
    return out[:-1]


def both_inputs(policy: pare.Policy, payload: Path, **kw) -> tuple[str, str]:
    text = payload.read_text()
    return policy.shape(text, **kw).text, policy.shape(json.loads(text), **kw).text


def cases():
    for policy, payloads in PAIRS.items():
        levels = pare.Policy.from_file(POLICIES / policy).levels
        for payload in payloads:
            for level in levels:
                for fmt in FORMATS:
                    yield policy, payload, level, fmt


def check(pare_bin, policy_name, payload_name, level, fmt, budget=None):
    policy_path, payload = POLICIES / policy_name, PAYLOADS / payload_name
    policy = pare.Policy.from_file(policy_path)
    extra = ["--format", fmt] + (["--level", level] if level else []) + (["--budget", str(budget)] if budget else [])
    where = f"{payload_name} {policy_name} level={level} format={fmt} budget={budget}"
    try:
        want = cli(pare_bin, payload, policy_path, *extra)
    except Refused as refused:
        for given in (payload.read_text(), json.loads(payload.read_text())):
            with pytest.raises(pare.PareError) as e:
                policy.shape(given, level=level, format=fmt, budget=budget)
            assert str(e.value) == str(refused), where
        return
    got_text, got_dict = both_inputs(policy, payload, level=level, format=fmt, budget=budget)
    assert got_text == want, f"JSON text input differs: {where}"
    assert got_dict == want, f"dict input differs: {where}"


@pytest.mark.parametrize("policy_name", sorted(p.name for p in POLICIES.glob("*.toml")))
def test_every_payload_with_every_policy_at_its_default_level(pare_bin, policy_name):
    payloads = sorted(p.name for p in PAYLOADS.glob("*.json"))
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda p: check(pare_bin, policy_name, p, None, "json"), payloads))


def test_scenario_pairs_at_every_level_in_every_format(pare_bin):
    all_cases = list(cases())
    assert len(all_cases) > 100
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda c: check(pare_bin, *c), all_cases))


@pytest.mark.parametrize("fmt", FORMATS)
def test_budgets_pages_and_cursors_match_the_cli(pare_bin, fmt):
    policy_path, payload = POLICIES / "entities.toml", PAYLOADS / "entities_systems.json"
    policy = pare.Policy.from_file(policy_path)
    text = payload.read_text()
    budget = 1500
    first = policy.shape(text, format=fmt, budget=budget, level="standard")
    assert first.pages > 1
    want = cli(pare_bin, payload, policy_path, "--format", fmt, "--budget", str(budget), "--level", "standard")
    assert first.text == want
    pages = policy.pages(text, budget=budget, format=fmt, level="standard")
    assert [p.text for p in pages][0] == first.text
    cursor, n = first.next_cursor, 1
    while cursor:
        n += 1
        want = cli(pare_bin, payload, policy_path, "--format", fmt, "--budget", str(budget), "--level", "standard", "--cursor", cursor)
        page = policy.shape(text, format=fmt, budget=budget, level="standard", cursor=cursor)
        assert page.text == want == pages[n - 1].text
        assert page.page == n
        assert page.tokens_after + page.note_tokens <= budget
        cursor = page.next_cursor
    assert n == first.pages == len(pages)


def test_a_default_level_is_lowered_to_fit_as_the_cli_lowers_it(pare_bin):
    policy_path, payload = POLICIES / "meta_relations.toml", PAYLOADS / "search_memory.json"
    policy = pare.Policy.from_file(policy_path)
    out = policy.shape(payload.read_text(), budget=1200)
    assert out.lowered_from == "standard" and out.level != "standard"
    assert out.text == cli(pare_bin, payload, policy_path, "--budget", "1200")
    assert out.tokens_after + out.note_tokens <= 1200


def test_generated_payloads_of_the_corpus_shapes(pare_bin, tmp_path):
    """Payloads nobody checked in: corpus shapes with other sizes and values."""
    import random

    rng = random.Random(7)
    policy_path = POLICIES / "entities.toml"
    policy = pare.Policy.from_file(policy_path)
    for n in (1, 7, 60):
        entities = [
            {
                "id": f"e{i}",
                "name": f"System {rng.randint(0, 10**6)}",
                "type": rng.choice(["service", "database", "team"]),
                "score": rng.random() * 10 ** rng.randint(-6, 17),
                "ratio": rng.choice([0.5, 1.0, 1e-7, 12345.678, -0.0, 2.5e16]),
                "count": rng.randint(-(2**70), 2**70),
                "tags": rng.sample(["a", "b", "c", "d"], rng.randint(0, 3)),
                "notes": rng.choice([None, "", "é ✓ \u2028 \"quoted\"", "x" * rng.randint(1, 80)]),
                "created_at": "2024-01-01T00:00:00Z",
                "metadata": {"source": None},
            }
            for i in range(n)
        ]
        doc = {"entities": entities, "relationships": [{"source": "e0", "target": f"e{i}", "type": "DEPENDS_ON", "weight": i / 3} for i in range(n)]}
        path = tmp_path / f"gen{n}.json"
        path.write_text(json.dumps(doc, indent=rng.choice([None, 2]), ensure_ascii=rng.random() < 0.5))
        for fmt in FORMATS:
            want = cli(pare_bin, path, policy_path, "--format", fmt)
            got_text, got_dict = both_inputs(policy, path, format=fmt)
            assert got_text == want, (n, fmt)
            assert got_dict == want, (n, fmt)


def test_a_question_reaches_a_pack_policy_as_pare_compact_query_gives_it(pare_bin):
    policy_path, payload = POLICIES / "search.toml", PAYLOADS / "semantic_search_full.json"
    policy = pare.Policy.from_file(policy_path)
    text = payload.read_text()
    for query in ("release index embedding deploy", "region report timeout"):
        for budget in (None, 700):
            extra = ["--query", query] + (["--budget", str(budget)] if budget else [])
            want = cli(pare_bin, payload, policy_path, *extra)
            assert policy.shape(text, query=query, budget=budget).text == want
            assert policy.shape(json.loads(text), query=query, budget=budget).text == want
    assert policy.shape(text, query="region report timeout").text != policy.shape(text).text


FIELDS = ["id,name", "$.entities[*].entity_type"]


def test_fields_give_what_pare_compact_fields_gives(pare_bin):
    policy_path, payload = POLICIES / "entities.toml", PAYLOADS / "entities.json"
    policy = pare.Policy.from_file(policy_path)
    for budget in (None, 400):
        extra = [a for f in FIELDS for a in ("--fields", f)] + (["--budget", str(budget)] if budget else [])
        want = cli(pare_bin, payload, policy_path, *extra)
        text, value = both_inputs(policy, payload, fields=FIELDS, budget=budget)
        assert text == want and value == want
        # One comma-separated string means the same.
        assert policy.shape(payload.read_text(), fields=",".join(FIELDS), budget=budget).text == want


def test_a_bad_field_is_a_value_error_naming_fields():
    with pytest.raises(ValueError, match=r"^fields: `\$\.\[` is not a field"):
        pare.Policy.builtin().shape({"a": 1}, fields=["id", "$.["])
    with pytest.raises(TypeError, match="fields"):
        pare.Policy.builtin().shape({"a": 1}, fields=[1])
