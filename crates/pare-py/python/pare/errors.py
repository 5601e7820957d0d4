"""pare's exceptions. Each is a ``PareError``; the ones about bad input are also ``ValueError``.

>>> try:
...     pare.Policy.from_str('[[ops]]\\nop = "prun"\\n')
... except pare.PolicyError as e:
...     (e.key, e.value, "prune" in e.allowed)
('ops[0].op', 'prun', True)
"""

from __future__ import annotations

from typing import List, Optional

__all__ = ["PareError", "PolicyError", "JsonError", "CursorError", "BudgetError"]


class PareError(Exception):
    """Anything pare refuses."""


class PolicyError(PareError, ValueError):
    """A policy, level or parameter that is not valid: ``key`` (``ops[0].op``), the bad
    ``value`` and the ``allowed`` values, when the check names them; ``kind`` says what sort
    of mistake (``unknown_key``, ``unknown_value``, ``missing_key``, ``wrong_type``,
    ``bad_value``, or ``syntax`` for a text that is not TOML or JSON, where ``line`` and
    ``column``, 1-based, say where)."""

    def __init__(
        self,
        message: str,
        key: Optional[str] = None,
        value: Optional[str] = None,
        allowed: Optional[List[str]] = None,
        kind: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.key = key
        self.value = value
        self.allowed = list(allowed or [])
        self.kind = kind
        self.line = line
        self.column = column


class JsonError(PareError, ValueError):
    """Input that is not JSON: 1-based ``line`` and ``column`` (in characters), byte ``offset``."""

    def __init__(
        self,
        message: str,
        line: Optional[int] = None,
        column: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.offset = offset


class CursorError(PareError, ValueError):
    """A cursor that is not pare's, or that belongs to another input or other options."""


class BudgetError(PareError, ValueError):
    """A budget no page can be made under."""
