"""The ASGI middleware on a FastAPI app that serves the same entities as REST routes and as
an MCP tool, with one policy file (fixtures/service.toml): the REST body and the MCP text are
the same bytes; `full` is the handler's exact output; what is not a JSON success passes
untouched; pages carry `Link` and fit the budget."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import pare
import pare.asgi
import pare.mcp
from conftest import PAYLOADS, POLICIES, run_pare

fastapi = pytest.importorskip("fastapi", reason="fastapi is not installed (scripts/test installs it)")
from fastapi import FastAPI, Request, Response  # noqa: E402
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402

SERVICE = Path(__file__).parent / "fixtures" / "service.toml"
PAYLOAD = json.loads((PAYLOADS / "entities.json").read_text())
BIG = json.loads((PAYLOADS / "entities_systems.json").read_text())


def make_app() -> tuple[FastAPI, MCPServer]:
    policy = pare.Policy.from_file(SERVICE)
    tools = MCPServer("entities")

    @tools.tool()
    def list_entities() -> dict:
        """Every entity and relationship."""
        return PAYLOAD

    pare.mcp.shape(tools, policy)
    app = FastAPI()

    @app.get("/api/entities")
    def entities() -> dict:
        return PAYLOAD

    @app.get("/api/entities/{id}")
    def entity(id: str, q: str = ""):
        for e in PAYLOAD["entities"]:
            if e["id"] == id:
                return {"entity": e, "q": q}
        return JSONResponse({"error": "no such entity", "id": id, "extra": None}, status_code=404)

    @app.get("/api/paged")
    def paged() -> dict:
        return BIG

    @app.get("/api/digested")
    def digested():
        # Headers that describe the handler's bytes, which a shaped body no longer is.
        return JSONResponse(
            {"a": None, "b": 1},
            headers={
                "ETag": '"v1"',
                "Digest": "sha-256=abc",
                "Content-Digest": "sha-256=:abc=:",
                "Repr-Digest": "sha-256=:abc=:",
                "Accept-Ranges": "bytes",
                "X-Kept": "yes",
            },
        )

    @app.get("/api/text")
    def text():
        return PlainTextResponse('{"looks": null}')

    @app.get("/api/stream")
    def stream():
        async def events():
            for i in range(3):
                yield f"data: {{\"n\": {i}, \"x\": null}}\n\n"
                await asyncio.sleep(0)

        return StreamingResponse(events(), media_type="text/event-stream")

    app.add_middleware(pare.asgi.PareMiddleware, policy=policy)
    app.mount("/mcp", tools.streamable_http_app())
    return app, tools


@pytest.fixture(scope="module")
def app_and_tools():
    return make_app()


@pytest.fixture(scope="module")
def client(app_and_tools):
    return TestClient(app_and_tools[0])


def test_the_rest_body_and_the_mcp_text_are_the_same_bytes(client, app_and_tools):
    r = client.get("/api/entities")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"

    async def tool_text():
        async with Client(app_and_tools[1]) as c:
            await c.list_tools()
            return (await c.call_tool("list_entities", {})).content[0].text

    mcp_text = asyncio.run(tool_text())
    assert r.content == mcp_text.encode()
    want = pare.Policy.from_file(POLICIES / "entities.toml").shape(PAYLOAD).text
    assert r.text == want
    assert int(r.headers["x-pare-tokens-before"]) > int(r.headers["x-pare-tokens-after"]) == pare.count_tokens(r.text)
    assert (r.headers["x-pare-level"], r.headers["x-pare-page"], r.headers["x-pare-pages"]) == ("standard", "1", "1")
    assert "pruned" in r.headers["x-pare-note"]


def test_full_is_the_handlers_exact_response(client):
    # FastAPI's own bytes for the handler's dict (its JSONResponse encoding).
    own = json.dumps(PAYLOAD, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    for ask in ({"params": {"pare_detail": "full"}}, {"headers": {"X-Pare-Detail": "full"}}):
        r = client.get("/api/entities", **ask)
        assert r.content == own
        assert r.headers["content-length"] == str(len(own))
        assert not [h for h in r.headers if h.startswith("x-pare-")]


def test_pare_parameters_are_taken_out_before_the_handler(client):
    r = client.get("/api/entities/" + PAYLOAD["entities"][0]["id"], params={"q": "kept", "pare_detail": "standard"})
    assert r.status_code == 200 and r.json()["q"] == "kept"


def test_what_is_not_a_json_success_passes_untouched(client):
    r = client.get("/api/entities/none")
    assert r.status_code == 404 and r.json() == {"error": "no such entity", "id": "none", "extra": None}
    assert "x-pare-level" not in r.headers
    r = client.get("/api/text")
    assert r.text == '{"looks": null}' and "x-pare-level" not in r.headers
    r = client.get("/api/stream")
    assert r.text.count("data:") == 3 and '"x": null' in r.text


def test_toon_when_asked_and_bad_parameters_are_400(client):
    r = client.get("/api/entities", headers={"Accept": "text/toon"})
    assert r.headers["content-type"].startswith("text/toon")
    assert pare.expand(r.text) == json.loads(client.get("/api/entities").text)
    r = client.get("/api/entities", params={"pare_detail": "everything"})
    assert r.status_code == 400
    assert r.json()["param"] == "pare_detail" and r.json()["allowed"] == ["standard", "full"]
    r = client.get("/api/entities", params={"pare_format": "yaml"})
    assert r.status_code == 400 and r.json()["allowed"] == ["json", "pretty", "toon", "auto"]


def test_pages_fit_the_budget_and_link_to_the_next(client):
    url, texts = "/api/paged?x=1", []
    while url:
        r = client.get(url)
        assert r.status_code == 200
        json.loads(r.text)  # every page is JSON
        note = r.headers.get("x-pare-note", "")
        assert "page" in note
        assert int(r.headers["x-pare-tokens-after"]) + pare.count_tokens(note) <= 1500
        texts.append(r.text)
        link = r.headers.get("link")
        url = link[1 : link.index(">")] if link else None
        if url:
            assert url.startswith("/api/paged?x=1&pare_cursor=")
    assert len(texts) == int(client.get("/api/paged").headers["x-pare-pages"]) > 1
    policy = pare.Policy.from_file(POLICIES / "entities.toml")
    assert texts == [p.text for p in policy.pages(BIG, budget=1500)]


def test_policy_parameters_are_pare_params_checked_and_kept_from_the_handler(tmp_path, pare_bin):
    """Regression: `?maxGapMinutes=5` went to the handler and the policy ignored it. A route's
    parameters come as `pare_param_<name>` or `X-Pare-Param-<name>`, give what `pare compact
    --param` gives, are checked (400 naming the parameter), and never reach the handler."""
    narrative = PAYLOADS / "narrative_day.json"
    policy_file = tmp_path / "p.toml"
    policy_file.write_text(
        f'[http]\n[[http.routes]]\nmatch = ["GET /api/narrative"]\npolicy = "{POLICIES / "narrative.toml"}"\n'
    )
    app = FastAPI()
    seen = []

    @app.get("/api/narrative")
    def get_narrative(request: Request):
        seen.append(str(request.query_params))
        return Response(narrative.read_bytes(), media_type="application/json")

    app.add_middleware(pare.asgi.PareMiddleware, policy=pare.Policy.from_file(policy_file))
    c = TestClient(app)
    want = run_pare(pare_bin, "compact", str(narrative), "--policy", str(POLICIES / "narrative.toml"),
                    "--param", "maxGapMinutes=5").stdout.rstrip(b"\n")
    for r in (c.get("/api/narrative", params={"pare_param_maxGapMinutes": "5"}),
              c.get("/api/narrative", headers={"X-Pare-Param-maxGapMinutes": "5"})):
        assert r.status_code == 200, r.text
        assert r.content == want
    assert seen == ["", ""]
    bad = c.get("/api/narrative", params={"pare_param_maxGapMinutes": "soon"})
    assert bad.status_code == 400
    assert (bad.json()["param"], bad.json()["value"]) == ("pare_param_maxGapMinutes", "soon")


def test_a_search_policy_is_the_same_at_the_python_doors():
    """Regressions: `Policy.shape` and `pare.asgi` with a `[pack]` policy: the tokens reported
    are the printed pack's, `full` is the input, and a body labelled `application/json`
    parses (a JSON caller gets the pack as data; packed text is `text/markdown`)."""
    search = pare.Policy.from_file(POLICIES / "search.toml")
    body = (PAYLOADS / "semantic_search_full.json").read_bytes()
    packed = search.shape(body, budget=1500)
    assert packed.kind == "packed" and packed.format == "pack"
    assert packed.tokens_after == pare.count_tokens(packed.text)
    assert "--cursor" not in packed.text
    assert json.loads(search.shape(body, level="full").text) == json.loads(body)

    app = FastAPI()

    @app.get("/api/search")
    def get_search():
        return Response(body, media_type="application/json")

    policy_text = (POLICIES / "search.toml").read_text() + '\n[http]\n[[http.routes]]\nmatch = ["GET /api/search"]\nmax_tokens = 1500\n'
    app.add_middleware(pare.asgi.PareMiddleware, policy=pare.Policy.from_str(policy_text))
    c = TestClient(app)
    text = c.get("/api/search")
    assert text.headers["content-type"] == "text/markdown; charset=utf-8"
    assert text.text == packed.text
    for r in (c.get("/api/search", params={"pare_format": "json"}),
              c.get("/api/search", headers={"Accept": "application/json"})):
        assert r.headers["content-type"] == "application/json"
        doc = r.json()
        assert doc["mode"] == "standard" and doc["chunks"]
        assert "pare_format=json" in r.headers["link"]
    full = c.get("/api/search", params={"pare_detail": "full"})
    assert full.content == body


def test_pare_fields_give_what_policy_shape_fields_gives(client):
    want = pare.Policy.from_file(POLICIES / "entities.toml").shape(PAYLOAD, fields="id,name")
    for ask in ({"params": {"pare_fields": "id,name"}}, {"headers": {"X-Pare-Fields": "id,name"}}):
        r = client.get("/api/entities", **ask)
        assert r.status_code == 200 and r.text == want.text
        assert "showing only the fields id, name; pare_fields to change." in r.headers["x-pare-note"]
    r = client.get("/api/entities", params={"pare_fields": "$.["})
    assert r.status_code == 400 and r.json()["param"] == "pare_fields"


def test_regression_a_shaped_body_kept_the_handlers_digests_and_accept_ranges(client):
    r = client.get("/api/digested")
    assert r.status_code == 200 and r.headers.get("x-pare-level")
    for gone in ("etag", "digest", "content-digest", "repr-digest", "accept-ranges"):
        assert gone not in r.headers, gone
    assert r.headers["x-kept"] == "yes"
    assert r.headers["content-length"] == str(len(r.content))
    assert set(pare._pare.NOT_OF_THE_SHAPED_BODY) >= {"etag", "digest", "content-digest", "repr-digest", "accept-ranges"}
