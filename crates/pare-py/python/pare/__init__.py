"""pare: make structured tool and API responses cheap for language models to read.

The engine runs in-process (a Rust extension): a policy shapes a response at a detail
level, counts tokens with a real tokenizer, fits a hard budget in pages, and says what it
removed. The same policy file drives ``pare compact``, ``pare mcp``, ``pare http`` and this
package, with the same bytes.

>>> import pare
>>> policy = pare.Policy.from_str('[[ops]]\\nop = "prune"\\n')
>>> out = policy.shape({"id": 1, "note": None, "tags": []})
>>> out.text
'{"id":1}'
>>> (out.tokens_before, out.tokens_after)
(13, 5)

Integrations (imported on use): :mod:`pare.mcp` (FastMCP / MCPServer tool results, as
``pare mcp`` shapes them) and :mod:`pare.asgi` (FastAPI / Starlette middleware).
"""

from __future__ import annotations

from ._pare import (
    Packed,
    Policy,
    Shaped,
    __version__,
    count_tokens,
    dumps,
    encode,
    expand,
    pack,
    stats,
)
from .errors import BudgetError, CursorError, JsonError, PareError, PolicyError

__all__ = [
    "Policy",
    "Shaped",
    "Packed",
    "count_tokens",
    "dumps",
    "encode",
    "expand",
    "pack",
    "stats",
    "PareError",
    "PolicyError",
    "JsonError",
    "CursorError",
    "BudgetError",
    "__version__",
]
