#!/usr/bin/env python3
"""Drive an MCP server (directly, or through `pare mcp`) with the official Python SDK and
print what the client observed as one JSON document on stdout.

    client.py SCENARIO [--arg K=V]... -- COMMAND [ARGS]...
    client.py SCENARIO [--arg K=V]... -- http://HOST:PORT/mcp   (streamable HTTP)

Scenarios: memory, paging, everything (tests/mcp_peers.rs, mcp_http.rs, mcp_listen.rs);
calls, edit, follow (tests/mcp_real.rs); walk (tests/mcp_structured.rs). The Rust tests run a scenario through pare and directly and
compare, so the assertions live there.

    --arg calls=JSON   calls: [[TOOL, ARGUMENTS], ...], each result's texts recorded
    --arg tools=A,B    walk: the tools to call, each result followed through its pages
    --arg call=JSON    follow: [TOOL, ARGUMENTS], its result followed through its pages
    --arg file=PATH    edit: the file to read with read_text_file and edit with edit_file
    --arg root=DIR     the one root the client offers (default /tmp/pare-root); the
                       filesystem server takes the client's roots as its allowed directories
    --arg env=NAMES    the server gets only these (comma-separated) of our environment
                       variables, over the SDK's safe defaults (PATH, HOME, ...); default: all
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


ROOT = ["/tmp/pare-root"]


async def roots_cb(context):
    return types.ListRootsResult(roots=[types.Root(uri="file://" + ROOT[0], name="pare-root")])


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


def result(r):
    return {"texts": texts(r), "is_error": bool(r.is_error), "meta": (r.meta or {}).get("pare"),
            "structured": r.structured_content}


async def calls(s, out, args):
    """Any server: its tools/list, then each call's result (or the JSON-RPC error)."""
    out["tools"] = dump(await s.list_tools())
    out["calls"] = []
    for name, arguments in json.loads(args.get("calls", "[]")):
        try:
            out["calls"].append(result(await s.call_tool(name, arguments)))
        except Exception as e:  # the SDK raises on a JSON-RPC error
            out["calls"].append({"error": str(e)})


async def walk(s, out, args):
    """Each tool of --arg tools=A,B,... called with no arguments, then every later page by
    `pare_more`: each page's texts, structured content and `_meta.pare` (the SDK validates
    each result against the tool's listed outputSchema as it comes)."""
    out["tools"] = dump(await s.list_tools())
    out["walks"] = {}
    for name in args["tools"].split(","):
        out["walks"][name] = await pages_of(s, name, {})


async def pages_of(s, name, arguments):
    """The call's result, then each later page by `pare_more` (at most 500 pages)."""
    pages = [result(await s.call_tool(name, arguments))]
    cursor = (pages[0]["meta"] or {}).get("nextCursor")
    while cursor and len(pages) < 500:
        pages.append(result(await s.call_tool("pare_more", {"cursor": cursor})))
        cursor = (pages[-1]["meta"] or {}).get("nextCursor")
    return pages


async def follow(s, out, args):
    """One call, with arguments, and every later page of its result by `pare_more`."""
    await s.list_tools()
    name, arguments = json.loads(args["call"])
    out["pages"] = await pages_of(s, name, arguments)


async def edit(s, out, args):
    """What a model does to change a config file: read it, then edit_file with the text it
    was shown as oldText (one changed value in newText), then read it again."""
    path = args["file"]
    out["tools"] = dump(await s.list_tools())
    read = await s.call_tool("read_text_file", {"path": path})
    out["read"] = result(read)
    seen = "".join(texts(read))
    new = seen.replace("8080", "9090", 1)
    out["edit"] = result(await s.call_tool("edit_file", {"path": path, "edits": [{"oldText": seen, "newText": new}]}))
    out["reread"] = result(await s.call_tool("read_text_file", {"path": path}))


async def main():
    argv = sys.argv[1:]
    sep = argv.index("--")
    scenario, opts, cmd = argv[0], argv[1:sep], argv[sep + 1:]
    args = dict(o.split("=", 1) for o in opts if "=" in o)
    ROOT[0] = args.get("root", ROOT[0])
    if len(cmd) == 1 and cmd[0].startswith(("http://", "https://")):
        transport = streamable_http_client(cmd[0])
    else:
        env = dict(os.environ)
        if "env" in args:
            env = {k: os.environ[k] for k in args["env"].split(",") if k in os.environ}
        transport = stdio_client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env))
    out = {}
    async with transport as (read, write):
        async with ClientSession(read, write, sampling_callback=sampling_cb,
                                 elicitation_callback=elicitation_cb,
                                 list_roots_callback=roots_cb) as s:
            init = await s.initialize()
            out["server"] = init.server_info.name
            scenarios = {"memory": memory, "paging": paging, "everything": everything, "calls": calls, "edit": edit,
                         "walk": walk, "follow": follow}
            await scenarios[scenario](s, out, args)
    json.dump(out, sys.stdout)


asyncio.run(main())
