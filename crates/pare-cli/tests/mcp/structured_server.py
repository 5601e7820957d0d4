#!/usr/bin/env python3
"""An MCP server on the official Python SDK (MCPServer, stdio) whose results test the budget
on every channel a client may show the model (tests/mcp_structured.rs):

- `report` returns a pydantic model: ~25k o200k tokens as text and again as
  `structuredContent`, with an `outputSchema` (the SDK's dual emit);
- `scan` returns a `list[str]` of 10,000 keys: 10,000 text items, and the list again as
  `{"result": [...]}` in `structuredContent`;
- `word` returns a `str`: one text item and `{"result": "..."}`.

    structured_server.py [--pare MAX_TOKENS]   # with --pare: pare.mcp.shape in-process
"""
import sys

from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer


class Row(BaseModel):
    id: int
    name: str
    kind: str
    note: str | None
    tags: list[str]


class Report(BaseModel):
    title: str
    rows: list[Row]


server = MCPServer("structured")


@server.tool()
def report() -> Report:
    """A large report."""
    rows = [
        Row(id=i, name=f"row {i}", kind="ledger entry", note=None if i % 3 else f"checked on day {i % 28}",
            tags=["alpha", "beta"][: i % 3])
        for i in range(900)
    ]
    return Report(title="quarterly", rows=rows)


@server.tool()
def scan() -> list[str]:
    """Every key."""
    return [f"session:{i:05d}:user" for i in range(10_000)]


@server.tool()
def word() -> str:
    """One word."""
    return "hello"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--pare":
        import pare
        import pare.mcp

        pare.mcp.shape(server, max_tokens=int(sys.argv[2]))
    server.run()
