"""`pare.mcp.shape` on the official SDK's MCPServer, driven by the official client
in-process: the same `detail` argument, budget, pages, original handle and `pare_more` as
`pare mcp`, from the same engine code."""

from __future__ import annotations

import asyncio
import json

import pytest

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
