"""Shape an in-process MCP server's tool results, as ``pare mcp`` shapes them through a proxy.

One call wraps the server's ``tools/list`` and ``tools/call`` handlers with the engine's MCP
mapping (``pare::mcp``, the code ``pare mcp`` runs): shaped tools gain the ``detail``
argument (only where the policy's levels differ), results are shaped at the tool's level,
lowered to fit the budget or paged, a result shown in part names its original, and
``pare_more`` (listed once needed) returns later pages and originals. Nothing is rewritten in
Python: messages cross to the engine as the JSON the wire would carry.

>>> from mcp.server.mcpserver import MCPServer
>>> server = MCPServer("entities")
>>> @server.tool()
... def list_entities() -> dict: ...
>>> pare.mcp.shape(server, pare.Policy.from_file("entities.toml"))   # doctest: +SKIP

Works with the official SDK's ``MCPServer`` (``mcp`` 2.x) and its low-level ``Server``, and
with the standalone ``fastmcp`` package's ``FastMCP`` (which runs on that ``Server``): anything
with ``get_request_handler``/``add_request_handler``. Call it after the
server's tools and extensions are set up (an extension added later may replace the
``tools/call`` handler). Per-tool settings come from the policy's ``[mcp]`` section, exactly
as for ``pare mcp --policy``.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Optional

from . import _pare
from ._pare import Policy

__all__ = ["shape"]

log = logging.getLogger("pare.mcp")


def _lowlevel(server: Any) -> Any:
    for candidate in (server, getattr(server, "_lowlevel_server", None), getattr(server, "_mcp_server", None)):
        if candidate is not None and hasattr(candidate, "get_request_handler") and hasattr(candidate, "add_request_handler"):
            return candidate
    raise TypeError(
        f"pare.mcp.shape: {type(server).__name__} is not an MCP server of the official SDK "
        "(MCPServer, FastMCP or mcp.server.lowlevel.Server)"
    )


def _dump(model: Any) -> str:
    return model.model_dump_json(by_alias=True, exclude_none=True)


def shape(
    server: Any,
    policy: Optional[Policy] = None,
    *,
    max_tokens: int = 20_000,
    max_chars4: int = 25_000,
    tokenizer: str = "o200k_base",
) -> Any:
    """Shape ``server``'s tool results with ``policy`` (its ``[mcp]`` section; without one,
    the built-in policy, which is lossless) under ``max_tokens`` (and ``max_chars4``, by
    chars/4) per result page. Returns ``server``."""
    from mcp.shared.exceptions import MCPError

    low = _lowlevel(server)
    session = _pare.McpSession(policy, max_tokens=max_tokens, max_chars4=max_chars4, tokenizer=tokenizer)
    listing = low.get_request_handler("tools/list")
    calling = low.get_request_handler("tools/call")
    if listing is None or calling is None:
        raise ValueError("pare.mcp.shape: the server has no tools/list or tools/call handler (define its tools first)")
    list_handler, call_handler = listing.handler, calling.handler
    learned = {"tools": False}

    async def list_tools(ctx: Any, params: Any) -> Any:
        result = await list_handler(ctx, params)
        text, warnings = session.list_tools(_dump(result))
        learned["tools"] = True
        for w in warnings:
            log.warning("%s", w)
        return type(result).model_validate_json(text)

    async def learn_tools(ctx: Any) -> None:
        """What pare adds to each tool (``detail``, parameters), learned from the server's own
        list when a call comes before any ``tools/list`` in this process (a restarted server,
        one of several workers): otherwise the tool would get arguments it does not take."""
        cursor = None
        while True:
            page_params = None if cursor is None else listing.params_type(cursor=cursor)
            result = await list_handler(ctx, page_params)
            session.list_tools(_dump(result))
            cursor = getattr(result, "next_cursor", None)
            if not cursor:
                break
        learned["tools"] = True

    async def call_tool(ctx: Any, params: Any) -> Any:
        if not learned["tools"]:
            await learn_tools(ctx)
        arguments = None if params.arguments is None else json.dumps(params.arguments)
        kind, text, handle = session.call_request(params.name, arguments)
        if kind == "more":
            from mcp_types import CallToolResult

            return CallToolResult.model_validate_json(text)
        if kind == "invalid":
            from mcp_types.jsonrpc import INVALID_PARAMS

            raise MCPError(INVALID_PARAMS, text)
        if text is not None:
            params = params.model_copy(update={"arguments": json.loads(text)})
        try:
            result = await call_handler(ctx, params)
        except BaseException:
            if handle is not None:
                session.forget(handle)
            raise
        if handle is None or not hasattr(result, "content"):
            if handle is not None:
                session.forget(handle)
            return result
        kind, text, list_changed = session.call_result(handle, _dump(result))
        if kind == "unchanged":
            log.info("`%s` result sent unchanged: %s", params.name, text)
        if kind != "shaped":
            return result
        if list_changed:
            await _tell_list_changed(ctx)
        return type(result).model_validate_json(text)

    low.add_request_handler("tools/list", listing.params_type, list_tools)
    low.add_request_handler("tools/call", calling.params_type, call_tool)
    _advertise_list_changed(low)
    return server


async def _tell_list_changed(ctx: Any) -> None:
    """``notifications/tools/list_changed``: ``pare_more`` joined the list. A transport
    without a back-channel cannot carry it; the note still names ``pare_more``, which pare
    answers whether or not the client listed it again."""
    try:
        await ctx.session.send_tool_list_changed()
    except Exception as e:  # noqa: BLE001  (the call's result matters more)
        log.debug("could not send tools/list_changed: %s", e)


def _advertise_list_changed(low: Any) -> None:
    """``capabilities.tools.listChanged: true``, as ``pare mcp`` sets it in ``initialize``,
    so clients list the tools again when ``pare_more`` joins."""
    original = low.get_capabilities

    def get_capabilities(*args: Any, **kwargs: Any) -> Any:
        caps = original(*args, **kwargs)
        if getattr(caps, "tools", None) is not None and not caps.tools.list_changed:
            caps = caps.model_copy(update={"tools": caps.tools.model_copy(update={"list_changed": True})})
        return caps

    low.get_capabilities = get_capabilities
