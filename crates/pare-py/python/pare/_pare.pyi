"""Type stubs of the extension module (``pare._pare``); ``pare`` re-exports these names."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

JsonValue = Union[None, bool, int, float, str, List[Any], Dict[str, Any]]
#: A Python value, or JSON text as ``str`` / ``bytes``.
Input = Union[Mapping[str, Any], List[Any], tuple, str, bytes, bytearray, int, float, bool, None]
Format = Literal["json", "pretty", "toon", "auto"]
TokenizerName = Literal["o200k_base", "cl100k_base", "chars4"]
ParamValue = Union[str, int, float, bool]
#: Called for an object of no type pare writes; its result is written in its place.
Default = Optional[Callable[[Any], Any]]

__version__: str
NOT_OF_THE_SHAPED_BODY: Tuple[str, ...]
"""The handler's headers a shaped body does not keep (`pare::rest::response::NOT_OF_THE_SHAPED_BODY`)."""
#: ``"release"`` or ``"debug"`` (benchmarks refuse a debug build).
__build__: str

class Policy:
    """A compiled pare policy: which ops shape a payload, at which detail levels.

    Pickles by its source text (and path), so Dask or Ray workers need no file."""

    @staticmethod
    def from_file(path: Union[str, os.PathLike[str]]) -> Policy:
        """Read and compile a policy file (TOML, or JSON when it starts with ``{``).

        Raises ``OSError`` when the file cannot be read, ``PolicyError`` when it is invalid."""
    @staticmethod
    def from_str(text: str) -> Policy:
        """Compile a policy from its TOML or JSON text."""
    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> Policy:
        """Compile a policy from a dict (the JSON form of a policy file)."""
    @staticmethod
    def builtin() -> Policy:
        """The built-in policy: no ops, every level lossless."""
    @property
    def levels(self) -> List[str]:
        """Detail levels, least detail first; the last is ``full`` (the input unchanged)."""
    @property
    def default_level(self) -> str: ...
    @property
    def description(self) -> Optional[str]: ...
    @property
    def params(self) -> Dict[str, ParamValue]:
        """The parameters a caller may set, with their defaults."""
    @property
    def source(self) -> Optional[str]:
        """The text the policy was compiled from (``None`` for the built-in policy)."""
    @property
    def path(self) -> Optional[str]: ...
    def shape(
        self,
        value: Input,
        level: Optional[str] = None,
        params: Optional[Mapping[str, ParamValue]] = None,
        format: Format = "json",
        tokenizer: TokenizerName = "o200k_base",
        budget: Optional[int] = None,
        cursor: Optional[str] = None,
        omitted: Optional[bool] = None,
        query: Optional[str] = None,
        fields: Union[Sequence[str], str, None] = None,
        default: Default = None,
    ) -> Shaped:
        """Shape a response through the engine's response pipeline.

        ``value`` is a Python value (converted natively, as ``json.dumps`` would write it;
        ``datetime``/``date``/``time``, ``UUID``, ``Enum``, dataclasses and pydantic models as
        FastAPI's ``jsonable_encoder`` writes them, ``Decimal`` with its own digits) or JSON
        text (``str``/``bytes``). A ``level`` you name is never lowered; with none, the
        policy's default is lowered to fit ``budget``. Over the budget the output is paged:
        pass ``next_cursor`` back as ``cursor`` (same input and options) for the next page.
        ``Shaped.text`` is exactly what ``pare compact`` prints with the same options,
        without the final newline.

        ``query``: the caller's question; a policy with a ``[pack]`` section ranks the results
        by their relevance to it (as ``pare compact --query``).

        ``fields``: show only these fields of the shaped value, and what leads to them —
        member names found at any depth (``"id"``, ``"user.login"``) or JSONPath
        (``"$.items[*].id"``), as a list or one comma-separated string (as
        ``pare compact --fields``). The note says which fields were shown.

        ``default``: called, as ``json.dumps(default=...)`` calls it, for an object of no type
        pare writes; what it returns is written in the object's place.

        Raises ``JsonError`` (line, column), ``PolicyError`` (a bad level or parameter),
        ``CursorError``, ``BudgetError``, ``TypeError`` (a value that is not JSON-like)."""
    def pages(
        self,
        value: Input,
        budget: int,
        level: Optional[str] = None,
        params: Optional[Mapping[str, ParamValue]] = None,
        format: Format = "json",
        tokenizer: TokenizerName = "o200k_base",
        omitted: Optional[bool] = None,
        query: Optional[str] = None,
        fields: Union[Sequence[str], str, None] = None,
        default: Default = None,
    ) -> List[Shaped]:
        """Every page under ``budget``, page 1 first; each decodes alone, and they merge back."""
    def shape_lines(
        self,
        lines: List[str],
        level: Optional[str] = None,
        params: Optional[Mapping[str, ParamValue]] = None,
        format: Format = "json",
        tokenizer: TokenizerName = "o200k_base",
        omitted: Optional[bool] = None,
        strict: bool = False,
    ) -> List[str]:
        """JSONL lines (blank ones skipped), each shaped as ``pare compact --jsonl`` writes it,
        without newlines: a Dask/Ray partition in one call. A key repeated within an object
        keeps its last value with a ``UserWarning``; ``strict=True`` raises ``JsonError``."""
    def shape_jsonl(
        self,
        data: Union[bytes, bytearray, memoryview, str],
        level: Optional[str] = None,
        params: Optional[Mapping[str, ParamValue]] = None,
        tokenizer: TokenizerName = "o200k_base",
        omitted: Optional[bool] = None,
        strict: bool = False,
    ) -> bytes:
        """A block of whole JSONL lines shaped line by line as ``pare compact --jsonl`` writes
        them, returned as bytes with a newline after each line (blank lines skipped): a Dask
        ``read_bytes`` block or a Ray range in, the bytes to write out back. A bad line raises
        ``JsonError`` with its ``line`` and ``offset`` in the block; a repeated key warns
        (``strict=True``: raises). One core per call, the GIL released."""
    def shape_value(
        self,
        value: Input,
        level: Optional[str] = None,
        params: Optional[Mapping[str, ParamValue]] = None,
        default: Default = None,
    ) -> JsonValue:
        """The shaped value as Python objects, for callers that serialise it themselves."""

class Shaped:
    """One page of a shaped response, and the record of what happened."""

    text: str
    note: Optional[str]
    tokens_before: Optional[int]
    tokens_after: Optional[int]
    note_tokens: Optional[int]
    tokenizer: str
    format: str
    level: str
    lowered_from: Optional[str]
    page: int
    pages: int
    next_cursor: Optional[str]
    kind: Literal["input", "value", "text", "packed"]
    omitted: Dict[str, int]
    warnings: List[str]
    def record(self) -> Dict[str, Any]:
        """The whole record as a dict."""

class Packed:
    """Search results packed under a budget."""

    text: str
    tokens: int
    next_cursor: Optional[str]
    @property
    def metrics(self) -> Dict[str, Any]: ...

def count_tokens(text: str, tokenizer: TokenizerName = "o200k_base") -> int:
    """Exact tokens of ``text`` by a real tokenizer."""

def dumps(value: Any, default: Default = None) -> bytes:
    """A Python value as compact JSON bytes, as the engine reads it when ``Policy.shape`` is
    given the value: ``json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()``
    for the types ``json.dumps`` takes, plus the types ``Policy.shape`` takes (datetime, UUID,
    Decimal, Enum, dataclasses, pydantic models) and ``default`` for anything else."""

def encode(value: Input, format: Format = "auto", tokenizer: TokenizerName = "o200k_base", default: Default = None) -> str:
    """A value (or JSON text) as json, pretty, toon, or auto (the cheapest lossless text).

    With ``format="toon"``, a ``UserWarning`` names every number TOON cannot carry exactly.
    """

def expand(text: str, reader: Literal["detect", "json", "toon"] = "detect") -> JsonValue:
    """Any of pare's encodings (JSON, TOON, auto text) back to the value.

    ``reader="detect"`` refuses text that begins like JSON but is not valid JSON (``[1]]``);
    ``"toon"`` reads it as TOON, ``"json"`` reads JSON only.
    """

def pack(
    results: Input,
    budget: int,
    policy: Optional[Policy] = None,
    level: Optional[str] = None,
    tokenizer: TokenizerName = "o200k_base",
    cursor: Optional[str] = None,
    query: Optional[str] = None,
    default: Default = None,
) -> Packed:
    """Search results packed under a hard token budget, as ``pare pack`` packs them; with
    ``query``, ranked by relevance to it blended with the upstream score (``--query``)."""

def stats(value: Input, tokenizer: TokenizerName = "o200k_base", top: int = 20, default: Default = None) -> Dict[str, Any]:
    """Where a payload's tokens go, as ``pare stats --json`` reports it: ``top`` leaf paths
    (their tokens add up), then ``top`` container paths (each includes its children's)."""

class McpSession:
    """The engine's MCP mapping for one in-process server (used by :mod:`pare.mcp`)."""

    def __init__(
        self,
        policy: Optional[Policy] = None,
        max_tokens: int = 20000,
        max_chars4: int = 25000,
        tokenizer: TokenizerName = "o200k_base",
    ) -> None: ...
    def list_tools(self, result: str) -> Tuple[str, List[str]]: ...
    def call_request(self, name: str, arguments: Optional[str] = None) -> Tuple[str, Optional[str], Optional[int]]: ...
    def call_result(self, handle: int, result: str) -> Tuple[str, Optional[str], bool]: ...
    def forget(self, handle: int) -> None: ...

class RestCall:
    """One request on a shaped route (used by :mod:`pare.asgi`)."""

    query: str
    path: str
    @property
    def full(self) -> bool: ...
    def shapes(self, status: int, content_type: Optional[str], encoded: bool) -> bool: ...
    def finish(
        self, status: int, content_type: Optional[str], encoded: bool, body: bytes
    ) -> Union[None, Tuple[int, str], Tuple[bytes, str, List[Tuple[str, str]]]]: ...

class Rest:
    """The routes of a policy's ``[http]`` section (used by :mod:`pare.asgi`)."""

    def __init__(self, policy: Policy) -> None: ...
    def begin(
        self, method: str, path: str, query: str, headers: List[Tuple[str, str]]
    ) -> Union[None, Tuple[int, str], RestCall]: ...

def is_pare_header_name(name: str) -> bool: ...
def link_without_next(value: str) -> Optional[str]: ...
