#!/usr/bin/env python3
"""Deterministic generator of a large `list_entities`-shaped payload.

Same shape as /work/shared/corpus/entities_systems.json (seed 000, ADR-010):

    {"entities": [<System entity, 46 fields, ~40% null/empty,
                   created_at/updated_at/valid_from/valid_until/version/metadata>, ...],
     "relationships": [<source_id, target_id, relationship_type, properties,
                        description, internal fields>, ...],   # ~1.5 per entity
     "total": <number of entities>,
     "entity_type": "System"}

scaled to a target size (default 70 MB, i.e. 70 * 10**6 bytes), written as
pretty JSON with indent=2, like the corpus files.  Stdlib only; the output is a
pure function of (--mb, --seed), byte for byte.

    python3 bench/gen_payload.py --mb 70 --out /tmp/pare-bench/entities_70mb.json

Contents vary per entity (names, descriptions, numbers, vulnerability lists,
nulls/empties at random); a little non-ASCII text and a few nested cases
(null/empty values inside vulnerabilities and relationship properties, which
cascade to empty dicts under compact_entity) are mixed in so the payload
exercises more than the corpus file does.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from json.encoder import encode_basestring, encode_basestring_ascii

# --------------------------------------------------------------------------
# Pretty printer: byte-identical to json.dumps(v, indent=2, ensure_ascii=...)
# (verified by --selftest) but several times faster than the stdlib's
# pure-Python indent encoder.  Each entity is serialized once, in one piece.
# --------------------------------------------------------------------------

_INDENTS = ["\n" + "  " * i for i in range(64)]


def _pretty(v, level: int, out: list, enc) -> None:
    if isinstance(v, str):
        out.append(enc(v))
    elif v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, int):
        out.append(int.__repr__(v))
    elif isinstance(v, float):
        out.append(float.__repr__(v))
    elif isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        inner = _INDENTS[level + 1]
        sep = "{" + inner
        for k, x in v.items():
            out.append(sep)
            out.append(enc(k))
            out.append(": ")
            _pretty(x, level + 1, out, enc)
            sep = "," + inner
        out.append(_INDENTS[level])
        out.append("}")
    elif isinstance(v, list):
        if not v:
            out.append("[]")
            return
        inner = _INDENTS[level + 1]
        sep = "[" + inner
        for x in v:
            out.append(sep)
            _pretty(x, level + 1, out, enc)
            sep = "," + inner
        out.append(_INDENTS[level])
        out.append("]")
    else:  # pragma: no cover - the generator only produces JSON types
        raise TypeError(f"not JSON: {type(v).__name__}")


def pretty(v, level: int = 0, ensure_ascii: bool = False) -> str:
    out: list = []
    _pretty(v, level, out, encode_basestring_ascii if ensure_ascii else encode_basestring)
    return "".join(out)


# --------------------------------------------------------------------------
# Vocabulary (from the corpus file, plus some variety)
# --------------------------------------------------------------------------

WORDS = (
    "account alert audit auth backup batch billing budget build cache cluster deploy "
    "embedding export gateway graph import incident index invoice ledger limit metric "
    "node payment pipeline pod policy queue quota region release replica report retry "
    "schedule search service session shard snapshot stream tenant timeout token vector "
    "worker catalog consent customer dispatch fraud inventory ledger loyalty mailer "
    "notification order partner pricing profile refund routing settlement shipment "
    "storage telemetry workflow"
).split()
CAMEL = [w.capitalize() for w in WORDS]
NAME_SUFFIX = ["Service"] * 12 + ["API", "Platform", "Engine", "Hub", "Store", "Portal", "Gateway", "Worker"]
OWNERS = ["data-team", "platform-team", "payments-team", "sre", "identity-team", "ml-team", "growth-team"]
BUSINESS_OWNERS = ["CTO office", "COO office", "CFO office", "CISO office", "CPO office"]
CRITICALITY = ["low", "medium", "high", "critical"]
STATUS = ["active"] * 6 + ["deprecated"] * 2 + ["planned"] * 2 + ["retired"]
LIFECYCLE = ["run", "build", "retire", "plan"]
VENDORS = ["Initech", "Umbrella", "Wayne Enterprises", "Hooli", "Acme Corp", "Globex",
           "Stark Industries", "Soylent", "Müller & Söhne GmbH", "Société Générale d'Informatique",
           "Nakatomi 株式会社", "Cyberdyne"]
HOSTING = ["azure", "gcp", "aws", "on-prem", "hetzner", "ovh"]
REGIONS = ["ap-south-1", "us-east-1", "eu-west-1", "eu-central-1", "us-west-2", "ap-northeast-1", "sa-east-1"]
DATA_CLASS = ["confidential", "restricted", "public", "internal"]
SEVERITY = ["low", "low", "medium", "medium", "high", "critical"]
INTERFACES = ["Kafka", "REST", "SFTP", "GraphQL", "gRPC", "AMQP", "SOAP", "WebSocket"]
COMPLIANCE = ["GDPR", "ISO27001", "SOC2", "PCI-DSS", "HIPAA", "NIS2", "DORA"]
SUPPORT_TIER = ["silver", "gold", "platinum", "bronze"]
ON_CALL = ["pagerduty:platform", "pagerduty:payments", "pagerduty:data", "opsgenie:sre", "pagerduty:identity"]
BACKUP = ["daily", "none", "hourly", "weekly", "continuous"]
AUTH = ["mTLS", "OAuth2", "SSO", "API key", "SAML", "Kerberos"]
SLA = [99.0, 99.5, 99.9, 99.95, 99.99, 98.5]
RTO = [1, 4, 8, 24, 72]
RPO = [0, 1, 4, 24]
REL_TYPES = ["REPLACES", "DEPENDS_ON", "HOSTED_ON", "FEEDS", "AUTHENTICATES_VIA", "BACKED_UP_BY"]
PROTOCOLS = ["Kafka", "REST", "gRPC", "SFTP", "AMQP"]
SOURCES = ["manual", "auto-kg", "auto-kg", "import:cmdb", "import:servicenow"]
ACCENTED = ["Zürich", "São Paulo", "Kraków", "Malmö", "Ærøskøbing", "Straße", "naïve", "café", "résumé", "東京", "→", "—"]

INTERNAL_FIELDS = ("created_at", "updated_at", "valid_from", "valid_until", "version", "metadata")


def _ts(r: random.Random) -> str:
    # 2026-02-01 .. 2026-06-30, minute resolution, same textual form as the corpus.
    m = r.randint(2, 6)
    return f"2026-{m:02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:00Z"


def _date(r: random.Random, year: int = 2026) -> str:
    return f"{year}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"


def _words(r: random.Random, lo: int, hi: int) -> list:
    ws = r.choices(WORDS, k=r.randint(lo, hi))
    if r.random() < 0.03:  # a little non-ASCII text
        ws.insert(r.randrange(len(ws) + 1), r.choice(ACCENTED))
    return ws


def _opt(r: random.Random, p_null: float, p_empty: float, make, empty):
    """None with p_null, `empty` with p_empty, else make()."""
    x = r.random()
    if x < p_null:
        return None
    if x < p_null + p_empty:
        return empty
    return make()


class Gen:
    def __init__(self, seed: int, n_hint: int):
        self.r = random.Random(seed)
        self.n_hint = max(n_hint, 2)
        self.width = max(4, len(str(self.n_hint - 1)))

    def sid(self, i: int) -> str:
        return f"sys-{i:0{self.width}d}"

    def entity(self, i: int) -> dict:
        r = self.r
        a, b = r.choice(CAMEL), r.choice(CAMEL)
        name = f"{a}{b} {r.choice(NAME_SUFFIX)}"
        if r.random() < 0.02:
            name += f" ({r.choice(ACCENTED)})"
        desc = " ".join(_words(r, 8, 24))
        desc = desc[:1].upper() + desc[1:] + "."

        def vulns():
            out = []
            for _ in range(r.choice((1, 1, 1, 2, 2, 3, 3, 4, 6))):
                v = {"cve": f"CVE-{r.choice((2023, 2024, 2025, 2025, 2026))}-{r.randint(1000, 99999)}",
                     "severity": r.choice(SEVERITY)}
                x = r.random()
                if x < 0.15:
                    v["fixed_in"] = None
                elif x < 0.22:
                    v["fixed_in"] = ""
                elif x < 0.35:
                    v["fixed_in"] = f"{r.randint(1, 9)}.{r.randint(0, 20)}.{r.randint(0, 9)}"
                if r.random() < 0.08:
                    v["cvss"] = round(r.uniform(1.0, 10.0), 1)
                out.append(v)
            return out

        def deps():
            lo, hi = max(0, i - 200), min(self.n_hint - 1, i + 200)
            return [self.sid(r.randint(lo, hi)) for _ in range(r.randint(1, 4))]

        def meta():
            x = r.random()
            if x < 0.02:
                return None
            if x < 0.10:
                return {}
            m = {"_confidence": round(r.random(), 4), "_source": r.choice(SOURCES)}
            if r.random() < 0.05:
                m["_extraction_run"] = f"run-{r.randint(1, 5000)}"
            return m

        ch = r.choice
        return {
            "id": self.sid(i),
            "entity_type": "System",
            "name": name,
            "description": desc,
            "owner": _opt(r, 0.34, 0.0, lambda: ch(OWNERS), ""),
            "business_owner": _opt(r, 0.44, 0.0, lambda: ch(BUSINESS_OWNERS), ""),
            "criticality": ch(CRITICALITY),
            "status": ch(STATUS),
            "lifecycle_stage": _opt(r, 0.16, 0.10, lambda: ch(LIFECYCLE), ""),
            "vendor": _opt(r, 0.42, 0.24, lambda: ch(VENDORS), ""),
            "product_version": _opt(r, 0.48, 0.0,
                                    lambda: f"{r.randint(1, 9)}.{r.randint(0, 20)}.{r.randint(0, 9)}", ""),
            "hosting": _opt(r, 0.32, 0.0, lambda: ch(HOSTING), ""),
            "region": _opt(r, 0.36, 0.0, lambda: ch(REGIONS), ""),
            "data_classification": _opt(r, 0.40, 0.0, lambda: ch(DATA_CLASS), ""),
            "contains_pii": _opt(r, 0.46, 0.0, lambda: r.random() < 0.3, None),
            "vulnerabilities": _opt(r, 0.26, 0.32, vulns, []),
            "dependencies": _opt(r, 0.12, 0.38, deps, []),
            "interfaces": _opt(r, 0.10, 0.20, lambda: r.sample(INTERFACES, r.randint(1, 3)), []),
            "compliance": _opt(r, 0.32, 0.22, lambda: r.sample(COMPLIANCE, r.randint(1, 3)), []),
            "tags": _opt(r, 0.24, 0.28, lambda: r.sample(WORDS, r.randint(1, 5)), []),
            "rto_hours": _opt(r, 0.50, 0.0, lambda: ch(RTO), None),
            "rpo_hours": _opt(r, 0.50, 0.0, lambda: ch(RPO), None),
            "users_count": _opt(r, 0.38, 0.0, lambda: r.randint(0, 250000), None),
            "annual_cost_eur": _opt(r, 0.56, 0.0, lambda: r.randint(5000, 2500000), None),
            "contract_end": _opt(r, 0.72, 0.0, lambda: _date(r, r.choice((2026, 2027, 2028))), None),
            "support_tier": _opt(r, 0.64, 0.0, lambda: ch(SUPPORT_TIER), None),
            "runbook_url": _opt(r, 0.30, 0.16, lambda: f"https://wiki.example.com/runbooks/{i}", ""),
            "repository_url": _opt(r, 0.20, 0.26, lambda: f"https://git.example.com/systems/{i}", ""),
            "on_call": _opt(r, 0.60, 0.0, lambda: ch(ON_CALL), None),
            "sla_availability": _opt(r, 0.44, 0.0, lambda: ch(SLA), None),
            "backup_policy": _opt(r, 0.24, 0.38, lambda: ch(BACKUP), ""),
            "encryption_at_rest": _opt(r, 0.44, 0.0, lambda: r.random() < 0.6, None),
            "encryption_in_transit": _opt(r, 0.50, 0.0, lambda: r.random() < 0.85, None),
            "authentication": _opt(r, 0.42, 0.0, lambda: ch(AUTH), None),
            "last_pentest": _opt(r, 0.64, 0.0, lambda: _date(r, r.choice((2025, 2026))), None),
            "decommission_date": _opt(r, 0.95, 0.0, lambda: _date(r, 2027), None),
            "replacement_system": _opt(r, 0.96, 0.0, lambda: self.sid(r.randrange(self.n_hint)), None),
            "notes": _opt(r, 0.24, 0.30, lambda: " ".join(_words(r, 6, 16)), ""),
            "aliases": _opt(r, 0.38, 0.20, lambda: [(a + b).lower()] + ([f"{a.lower()}-{b.lower()}"] if r.random() < 0.2 else []), []),
            "cost_center": _opt(r, 0.54, 0.0, lambda: f"CC-{r.randint(100, 999)}", None),
            "created_at": _ts(r),
            "updated_at": _ts(r),
            "valid_from": _ts(r),
            "valid_until": _opt(r, 0.97, 0.0, lambda: _ts(r), None),
            "version": r.randint(1, 40),
            "metadata": meta(),
        }

    def relationship(self, n: int) -> dict:
        r = self.r
        s = r.randrange(n)
        t = r.randrange(n - 1)
        t += t >= s  # no self-loops

        def props():
            x = r.random()
            if x < 0.37:
                return None
            if x < 0.72:
                return {}
            p = {"protocol": r.choice(PROTOCOLS)}
            y = r.random()
            if y < 0.10:
                p["protocol"] = ""  # cascades: {"protocol": ""} -> {} -> stripped
            elif y < 0.20:
                p["latency_ms"] = None
            elif y < 0.35:
                p["latency_ms"] = r.randint(1, 900)
            return p

        def meta():
            x = r.random()
            if x < 0.19:
                return None
            if x < 0.47:
                return {}
            return {"_confidence": round(r.random(), 4), "_source": r.choice(SOURCES)}

        return {
            "source_id": self.sid(s),
            "target_id": self.sid(t),
            "relationship_type": r.choice(REL_TYPES),
            "properties": props(),
            "description": _opt(r, 0.36, 0.31, lambda: " ".join(_words(r, 4, 8)), ""),
            "created_at": _ts(r),
            "updated_at": _ts(r),
            "valid_from": _ts(r),
            "valid_until": _opt(r, 0.97, 0.0, lambda: _ts(r), None),
            "version": r.randint(1, 12),
            "metadata": meta(),
        }


REL_PER_ENTITY = 1.5
ITEM_SEP = ",\n    "


def estimate_entities(target_bytes: int, seed: int) -> int:
    """Pick the entity count for a target size from a deterministic pilot sample."""
    sample = 400
    g = Gen(seed ^ 0x5EED, 100_000)
    eb = sum(len(pretty(g.entity(i), 2).encode()) + len(ITEM_SEP) for i in range(sample))
    rb = sum(len(pretty(g.relationship(100_000), 2).encode()) + len(ITEM_SEP) for _ in range(sample))
    per_unit = eb / sample + REL_PER_ENTITY * rb / sample
    return max(2, round((target_bytes - 120) / per_unit))


def generate(path: str, target_bytes: int, seed: int) -> tuple:
    n = estimate_entities(target_bytes, seed)
    n_rel = round(n * REL_PER_ENTITY)
    g = Gen(seed, n)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        buf: list = []
        flush_every = 2000
        f.write('{\n  "entities": [\n    ')
        for i in range(n):
            if i:
                buf.append(ITEM_SEP)
            buf.append(pretty(g.entity(i), 2))
            if len(buf) >= flush_every:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))
        buf.clear()
        f.write('\n  ],\n  "relationships": [\n    ')
        for j in range(n_rel):
            if j:
                buf.append(ITEM_SEP)
            buf.append(pretty(g.relationship(n), 2))
            if len(buf) >= flush_every:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))
        f.write(f'\n  ],\n  "total": {n},\n  "entity_type": "System"\n}}')
    os.replace(tmp, path)
    return n, n_rel, os.path.getsize(path)


def selftest() -> int:
    """The fast pretty printer must match json.dumps(indent=2) exactly."""
    import json

    g = Gen(7, 300)
    doc = {"entities": [g.entity(i) for i in range(300)],
           "relationships": [g.relationship(300) for _ in range(450)],
           "total": 300, "entity_type": "System"}
    for ea in (False, True):
        if pretty(doc, 0, ensure_ascii=ea) != json.dumps(doc, indent=2, ensure_ascii=ea):
            print(f"selftest: pretty() differs from json.dumps (ensure_ascii={ea})", file=sys.stderr)
            return 1
    # the streamed writer must produce the same document as json.dumps
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "x.json")
        n, n_rel, _ = generate(p, 300_000, 11)
        with open(p, encoding="utf-8") as f:
            text = f.read()
        if json.dumps(json.loads(text), indent=2, ensure_ascii=False) != text:
            print("selftest: streamed file is not json.dumps(indent=2) of itself", file=sys.stderr)
            return 1
    print(f"selftest ok (streamed {n} entities, {n_rel} relationships)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=70.0, help="target size in MB (10**6 bytes); default 70")
    ap.add_argument("--out", default=None,
                    help="output path; default ${PARE_BENCH_DIR:-/tmp/pare-bench}/entities_<mb>mb.json")
    ap.add_argument("--seed", type=int, default=10, help="RNG seed (default 10)")
    ap.add_argument("--selftest", action="store_true", help="check the writer against json.dumps and exit")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    out = a.out or os.path.join(os.environ.get("PARE_BENCH_DIR", "/tmp/pare-bench"),
                                f"entities_{a.mb:g}mb.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    t0 = time.perf_counter()
    n, n_rel, size = generate(out, int(a.mb * 1_000_000), a.seed)
    dt = time.perf_counter() - t0
    print(f"{out}: {size} bytes ({size / 1e6:.1f} MB), {n} entities, {n_rel} relationships, "
          f"seed {a.seed}, {dt:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
