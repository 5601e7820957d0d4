"""`pare.mcp.shape` on the official SDK's MCPServer, driven by the official client
in-process: the same `detail` argument, budget, pages, original handle and `pare_more` as
`pare mcp`, from the same engine code."""

from __future__ import annotations

import asyncio
import json

from typing import List, Optional

import pytest
from pydantic import BaseModel

import pare
import pare.mcp
from conftest import PAYLOADS, POLICIES

mcp = pytest.importorskip("mcp", reason="the mcp SDK is not installed (scripts/test installs it)")
from mcp import Client  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402

PAYLOAD = json.loads((PAYLOADS / "entities.json").read_text())
POLICY_TEXT = (POLICIES / "entities.toml").read_text() + '\n[mcp]\nformat = "json"\n'


def server(shaped: bool = True, **kw) -> MCPServer:
    s = MCPServer("entities")

    @s.tool()
    def list_entities() -> dict:
        """Every entity and relationship."""
        return PAYLOAD

    @s.tool()
    def ping() -> str:
        """Plain text."""
        return "pong"

    if shaped:
        pare.mcp.shape(s, pare.Policy.from_str(POLICY_TEXT), **kw)
    return s


def run(coro):
    return asyncio.run(coro)


def test_tools_gain_detail_and_results_are_what_pare_compact_prints():
    async def go():
        async with Client(server()) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools["list_entities"].input_schema["properties"]["detail"]["enum"] == ["standard", "full"]
            assert "pare_more" not in tools
            r = await c.call_tool("list_entities", {})
            return r

    r = run(go())
    policy = pare.Policy.from_str(POLICY_TEXT)
    assert r.content[0].text == policy.shape(PAYLOAD).text
    meta = r.meta["pare"]
    assert meta["level"] == "standard" and meta["tokensBefore"] > meta["tokensAfter"]
    note = r.content[1].text
    assert note.startswith("pare: absent members may have been null")
    assert f'pare_more {{"cursor":"{meta["original"]}"}}' in note


def test_detail_full_is_the_servers_own_result():
    async def go(s, args):
        async with Client(s) as c:
            await c.list_tools()  # as clients do: pare takes out only what it listed
            return await c.call_tool("list_entities", args)

    own = run(go(server(shaped=False), {}))
    full = run(go(server(), {"detail": "full"}))
    assert [c.text for c in full.content] == [c.text for c in own.content]


def test_a_call_before_any_tools_list_still_has_detail_taken_out():
    """Regression: a `tools/call` with `detail` that came before any `tools/list` in the
    process (a restarted server, one of several workers) reached the tool, which refused it."""

    async def go():
        async with Client(server()) as c:
            return await c.call_tool("list_entities", {"detail": "full"})

    r = run(go())
    assert not r.is_error, r.content
    assert json.loads(r.content[0].text) == PAYLOAD


def test_a_bad_detail_is_an_invalid_params_error_naming_the_levels():
    from mcp.shared.exceptions import MCPError

    async def go():
        async with Client(server()) as c:
            await c.list_tools()
            try:
                await c.call_tool("list_entities", {"detail": "everything"})
            except MCPError as e:
                return e
        raise AssertionError("a bad detail was accepted")

    e = run(go())
    assert e.error.code == -32602
    assert e.error.message == '`detail` must be one of: standard, full (got "everything")'


def test_over_the_budget_pages_and_pare_more_returns_them_and_the_original():
    budget = 600

    async def go():
        async with Client(server(max_tokens=budget)) as c:
            await c.list_tools()
            first = await c.call_tool("list_entities", {"detail": "standard"})
            meta = first.meta["pare"]
            assert meta["pages"] > 1
            texts = [first.content[0].text]
            cursor = meta.get("nextCursor")
            while cursor:
                page = await c.call_tool("pare_more", {"cursor": cursor})
                assert sum(pare.count_tokens(x.text) for x in page.content) <= budget
                texts.append(page.content[0].text)
                cursor = page.meta["pare"].get("nextCursor")
            listed = {t.name for t in (await c.list_tools(cache_mode="refresh")).tools}
            one = await c.call_tool("pare_more", {"cursor": meta["original"], "path": "$.entities[0].id"})
            return first, texts, listed, one

    first, texts, listed, one = run(go())
    assert sum(pare.count_tokens(x.text) for x in first.content) <= budget
    assert "pare_more" in listed
    assert one.content[0].text == json.dumps(PAYLOAD["entities"][0]["id"])
    # Every page there is, each a JSON document of its own.
    assert len(texts) == first.meta["pare"]["pages"]
    for t in texts:
        json.loads(t)


def test_plain_text_results_and_unshaped_servers_pass_unchanged():
    async def go(s):
        async with Client(s) as c:
            return await c.call_tool("ping", {})

    assert run(go(server())).content[0].text == "pong"


def test_shape_refuses_what_is_not_an_mcp_server():
    with pytest.raises(TypeError, match="not an MCP server"):
        pare.mcp.shape(object())


def test_the_standalone_fastmcp_package_takes_the_same_hook():
    fastmcp = pytest.importorskip("fastmcp", reason="fastmcp is not installed (scripts/test installs it)")

    s = fastmcp.FastMCP("entities")

    @s.tool
    def list_entities() -> dict:
        """Every entity and relationship."""
        return PAYLOAD

    pare.mcp.shape(s, pare.Policy.from_str(POLICY_TEXT))

    async def go():
        async with fastmcp.Client(s) as c:
            tools = await c.list_tools()
            schema = tools[0].input_schema
            full = await c.call_tool("list_entities", {"detail": "full"})
            return schema, await c.call_tool("list_entities", {}), full

    schema, r, full = run(go())
    assert schema["properties"]["detail"]["enum"] == ["standard", "full"]
    assert r.content[0].text == pare.Policy.from_str(POLICY_TEXT).shape(PAYLOAD).text
    assert json.loads(full.content[0].text) == PAYLOAD


class Row(BaseModel):
    id: int
    name: str
    note: Optional[str]


class Report(BaseModel):
    rows: List[Row]


def structured_server(shaped: bool = True, max_tokens: int = 2000) -> MCPServer:
    """The SDK's dual emit (a dict as text and again as structuredContent, with an
    outputSchema), a returned list of 10,000 str (10,000 text items and the list again), and a
    wrapped str."""
    s = MCPServer("structured")

    @s.tool()
    def report() -> Report:
        """A large report."""
        return Report(rows=[Row(id=i, name=f"row {i}", note=None if i % 3 else f"day {i % 28}") for i in range(1500)])

    @s.tool()
    def scan() -> list[str]:
        """Every key."""
        return [f"session:{i:05d}:user" for i in range(10_000)]

    @s.tool()
    def word() -> str:
        """One word."""
        return "hello"

    if shaped:
        pare.mcp.shape(s, max_tokens=max_tokens)
    return s


def _merge(pages):
    """Pages back into their value, by the engine's rule (pare::respond::merge): objects by
    key, arrays concatenated, and along a page's `continues` pointer its first item (or
    string) joined to the last one so far."""

    def into(a, b, ptr):
        if isinstance(a, dict):
            for k, v in b.items():
                follow = ptr[1:] if ptr and ptr[0] == k else None
                a[k] = into(a[k], v, follow) if k in a else v
            return a
        if isinstance(a, list):
            if ptr and b:
                a[-1] = into(a[-1], b[0], ptr[1:])
                return a + b[1:]
            return a + b
        if isinstance(a, str) and ptr == []:
            return a + b
        raise AssertionError(f"pages do not merge: {a!r} / {b!r}")

    whole = pages[0][0]
    for value, continues in pages[1:]:
        ptr = None if continues is None else [p for p in continues.split("/")[1:]]
        whole = into(whole, value, ptr)
    return whole


def _reply_tokens(r) -> int:
    texts = sum(pare.count_tokens(c.text) for c in r.content if c.type == "text")
    structured = 0 if r.structured_content is None else pare.count_tokens(json.dumps(r.structured_content, separators=(",", ":"), ensure_ascii=False))
    return texts + structured


def test_structured_content_and_many_items_fit_the_budget_and_merge_back():
    """Regression: the SDK's structuredContent beside the text, and a list sent as one item
    per element, went out unshaped and uncounted (41,294 tokens at max_tokens=5000)."""
    budget = 2000

    async def walk(s):
        async with Client(s) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            walks = {}
            for name in ("report", "scan", "word"):
                r = await c.call_tool(name, {})  # the client validates against any outputSchema listed
                pages = [r]
                cursor = (r.meta or {}).get("pare", {}).get("nextCursor")
                while cursor:
                    r = await c.call_tool("pare_more", {"cursor": cursor})
                    pages.append(r)
                    cursor = r.meta["pare"].get("nextCursor")
                walks[name] = pages
            return tools, walks

    own_tools, own = run(walk(structured_server(shaped=False)))
    tools, walks = run(walk(structured_server(max_tokens=budget)))
    assert all(t.output_schema is not None for t in own_tools.values())
    assert all(t.output_schema is None for t in tools.values())
    assert _reply_tokens(own["report"][0]) > 25_000
    for name, want in (("report", own["report"][0].structured_content), ("scan", own["scan"][0].structured_content["result"])):
        pages = walks[name]
        assert len(pages) > 1, name
        for p in pages:
            assert _reply_tokens(p) <= budget, (name, _reply_tokens(p))
            assert p.structured_content is None
            assert p.meta["pare"]["tokensAfter"] == _reply_tokens(p)
        merged = _merge([(pare.expand(p.content[0].text), p.meta["pare"].get("continues")) for p in pages])
        assert merged == want, name
    assert [c.text for c in walks["word"][0].content] == ["hello"]
    assert walks["word"][0].structured_content is None


def test_the_typescript_sdk_client_accepts_every_reply_of_pare_mcp_in_process(node_peers_mcp):
    """`pare.mcp.shape` on a stdio server, driven by the official TypeScript SDK client (it
    validates each result against a listed outputSchema and refuses one that lacks
    structuredContent): every page within 2,000 tokens, text plus structuredContent."""
    import os
    import subprocess
    import sys
    from conftest import REPO

    server = REPO / "crates/pare-cli/tests/mcp/structured_server.py"
    client = REPO / "crates/pare-cli/tests/mcp/ts_client.cjs"
    out = subprocess.run(
        ["node", str(client), "report,scan,word", sys.executable, str(server), "--pare", "2000"],
        capture_output=True, env={**os.environ, "NODE_PATH": str(node_peers_mcp)}, timeout=300,
    )
    assert out.returncode == 0, out.stderr.decode()
    walks = json.loads(out.stdout)["walks"]
    assert len(walks["report"]) > 1 and len(walks["scan"]) > 1
    for pages in walks.values():
        for r in pages:
            texts = sum(pare.count_tokens(c["text"]) for c in r["content"] if c["type"] == "text")
            assert "structuredContent" not in r
            assert texts <= 2000
