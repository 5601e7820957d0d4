#!/usr/bin/env python3
"""Drive an MCP server (directly, or through `pare mcp`) with the official Python SDK and
print what the client observed as one JSON document on stdout.

    client.py SCENARIO [--arg K=V]... -- COMMAND [ARGS]...
    client.py SCENARIO [--arg K=V]... -- http://HOST:PORT/mcp   (streamable HTTP)

Scenarios: memory, paging, everything. The Rust tests (crates/pare-mcp/tests/peers.rs) run
a scenario through pare and directly and compare, so the assertions live there.
"""
import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def texts(result):
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


async def memory(s, out, args):
    tools = await s.list_tools()
    out["tools"] = dump(tools)
    r = await s.call_tool("read_graph", {})
    out["default"] = {"texts": texts(r), "meta": (r.meta or {}).get("pare"),
                      "structured": r.structured_content}
    # pare offers `detail` only when the tool's levels give different outputs.
    graph = next(t for t in tools.tools if t.name == "read_graph")
    offers = "detail" in (graph.input_schema.get("properties") or {})
    r = await s.call_tool("read_graph", {"detail": "full"} if offers else {})
    out["full"] = {"texts": texts(r), "meta": (r.meta or {}).get("pare"),
                   "structured": r.structured_content}
    r = await s.call_tool("create_entities", {"entities": [
        {"name": "pare_probe", "entityType": "test", "observations": ["made through the proxy"]}]})
    out["create"] = {"texts": texts(r), "is_error": r.is_error}
    r = await s.call_tool("search_nodes", {"query": "pare_probe"})
    out["search"] = {"texts": texts(r), "meta": (r.meta or {}).get("pare")}


async def paging(s, out, args):
    await s.list_tools()
    r = await s.call_tool("read_graph", {})
    pages = [{"texts": texts(r), "meta": (r.meta or {}).get("pare")}]
    cursor = pages[0]["meta"].get("nextCursor") if pages[0]["meta"] else None
    while cursor and len(pages) < 100:
        r = await s.call_tool("pare_more", {"cursor": cursor})
        meta = (r.meta or {}).get("pare") or {}
        pages.append({"texts": texts(r), "meta": meta})
        cursor = meta.get("nextCursor")
    out["pages"] = pages
    try:
        await s.call_tool("pare_more", {"cursor": "nosuchcursor"})
        out["bad_cursor"] = "no error"
    except Exception as e:  # the SDK raises on a JSON-RPC error
        out["bad_cursor"] = str(e)


async def sampling_cb(context, params):
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="sampled by the test client"),
        model="test-model", stop_reason="endTurn")


async def elicitation_cb(context, params):
    return types.ElicitResult(action="decline")


async def roots_cb(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/pare-root", name="pare-root")])


async def everything(s, out, args):
    tools = await s.list_tools()
    out["tool_names"] = sorted(t.name for t in tools.tools)
    out["tools"] = dump(tools)
    out["ping"] = dump(await s.send_ping())
    out["echo"] = dump(await s.call_tool("echo", {"message": "hello through pare"}))
    out["sum"] = dump(await s.call_tool("get-sum", {"a": 2, "b": 3}))
    out["structured"] = dump(await s.call_tool("get-structured-content", {"location": "New York"}))
    out["image"] = dump(await s.call_tool("get-tiny-image", {}))
    out["sampling"] = dump(await s.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 5}))
    out["roots"] = dump(await s.call_tool("get-roots-list", {}))
    out["elicitation"] = dump(await s.call_tool("trigger-elicitation-request", {}))
    out["resources"] = dump(await s.list_resources())
    out["prompts"] = dump(await s.list_prompts())


async def main():
    argv = sys.argv[1:]
    sep = argv.index("--")
    scenario, opts, cmd = argv[0], argv[1:sep], argv[sep + 1:]
    args = dict(o.split("=", 1) for o in opts if "=" in o)
    if len(cmd) == 1 and cmd[0].startswith(("http://", "https://")):
        transport = streamable_http_client(cmd[0])
    else:
        transport = stdio_client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ)))
    out = {}
    async with transport as (read, write):
        async with ClientSession(read, write, sampling_callback=sampling_cb,
                                 elicitation_callback=elicitation_cb,
                                 list_roots_callback=roots_cb) as s:
            init = await s.initialize()
            out["server"] = init.server_info.name
            await {"memory": memory, "paging": paging, "everything": everything}[scenario](s, out, args)
    json.dump(out, sys.stdout)


asyncio.run(main())
