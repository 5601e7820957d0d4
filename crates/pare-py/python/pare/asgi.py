"""ASGI middleware for FastAPI / Starlette: JSON responses shaped per route by a policy's
``[http]`` section, with the rules of every REST door (the engine's ``pare::rest``).

>>> app = FastAPI()
>>> app.add_middleware(pare.asgi.PareMiddleware, policy=pare.Policy.from_file("service.toml"))  # doctest: +SKIP

- **Routes**: ``[[http.routes]] match = ["GET /api/entities", "GET /api/entities/{id}"]``
  with a ``policy``, default ``level``, ``format`` (``json`` by default: REST clients parse
  the body) and ``max_tokens``. Routes no entry matches pass untouched (unless
  ``[http] shape_unmatched = true``).
- **The caller chooses**: ``?pare_detail=LEVEL`` (``full``: the handler's exact bytes and
  headers), ``?pare_format=json|pretty|toon|auto`` (or ``Accept: text/toon``),
  ``?pare_max_tokens=N``, ``?pare_cursor=C``; or headers ``X-Pare-Detail``,
  ``X-Pare-Format``, ``X-Pare-Max-Tokens``. They are taken out before the handler runs; a
  bad value is answered with ``400`` and a JSON body naming the parameter and the allowed
  values.
- **What passes untouched**, streamed as it comes: non-JSON bodies, statuses other than
  200–203 (errors, redirects, ``204``, ``206``, ``304``), content-encoded bodies, and
  anything on an unmatched route. A JSON body is read whole (it is one document), up to
  ``max_body`` bytes; a longer one passes untouched.
- **Shaped responses** carry ``X-Pare-Tokens-Before``, ``X-Pare-Tokens-After``,
  ``X-Pare-Level``, ``X-Pare-Page``, ``X-Pare-Pages`` (and ``X-Pare-Next-Cursor`` with
  ``Link: <…>; rel="next"`` when paged, ``X-Pare-Note`` with what was removed). The body is
  byte for byte what ``pare compact`` prints for the handler's body.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable, List, MutableMapping, Optional, Tuple

from . import _pare
from ._pare import Policy

__all__ = ["PareMiddleware"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

log = logging.getLogger("pare.asgi")


def _header(headers: List[Tuple[bytes, bytes]], name: bytes) -> Optional[str]:
    for k, v in headers:
        if k.lower() == name:
            return v.decode("latin-1")
    return None


class PareMiddleware:
    """Shape the JSON responses of an ASGI app by ``policy``'s ``[http]`` section."""

    def __init__(self, app: Callable[..., Awaitable[None]], policy: Policy, *, max_body: int = 64 << 20) -> None:
        self.app = app
        self.rest = _pare.Rest(policy)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw: List[Tuple[bytes, bytes]] = list(scope.get("headers", []))
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]
        begun = self.rest.begin(scope["method"], scope["path"], scope.get("query_string", b"").decode("latin-1"), headers)
        if begun is None:
            await self.app(scope, receive, send)
            return
        if isinstance(begun, tuple):
            status, body = begun
            await _answer(send, status, body.encode())
            return
        call = begun
        scope = dict(scope)
        scope["query_string"] = call.query.encode("latin-1")
        scope["headers"] = [(k, v) for k, v in raw if not _pare.is_pare_header_name(k.decode("latin-1"))]
        if call.full:
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Shaper(call, send, self.max_body).send)


class _Shaper:
    """The app's ``send``, holding a JSON response until its last byte to shape it."""

    def __init__(self, call: Any, send: Send, max_body: int) -> None:
        self.call = call
        self.downstream = send
        self.max_body = max_body
        self.start: Optional[Message] = None
        self.chunks: List[bytes] = []
        self.size = 0
        self.passing = False

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            headers = list(message.get("headers", []))
            content_type = _header(headers, b"content-type")
            encoding = _header(headers, b"content-encoding")
            encoded = encoding is not None and encoding.strip().lower() not in ("", "identity")
            if self.call.shapes(message["status"], content_type, encoded):
                self.start = message
            else:
                self.passing = True
                await self.downstream(message)
            return
        if kind != "http.response.body" or self.passing:
            await self.downstream(message)
            return
        self.chunks.append(message.get("body", b""))
        self.size += len(self.chunks[-1])
        more = message.get("more_body", False)
        if self.size > self.max_body:
            # Too long to hold: what there is goes on as it is, and so does the rest.
            self.passing = True
            await self._send_held(more)
            return
        if more:
            return
        await self._finish()

    async def _send_held(self, more: bool) -> None:
        assert self.start is not None
        await self.downstream(self.start)
        await self.downstream({"type": "http.response.body", "body": b"".join(self.chunks), "more_body": more})

    async def _finish(self) -> None:
        assert self.start is not None
        start = self.start
        headers = list(start.get("headers", []))
        body = b"".join(self.chunks)
        out = self.call.finish(start["status"], _header(headers, b"content-type"), False, body)
        if out is None:
            await self._send_held(False)
            return
        if len(out) == 2:
            status, text = out
            await _answer(self.downstream, status, text.encode())
            return
        shaped, content_type, extra = out
        new_headers = [(k, v) for k, v in headers if k.lower() not in _NOT_OF_THE_SHAPED_BODY]
        if any(k.lower() == "link" for k, _ in extra):
            # pare's next page comes first; the handler's own `next` follows pare's last page.
            kept = []
            for k, v in new_headers:
                if k.lower() == b"link":
                    rest = _pare.link_without_next(v.decode("latin-1"))
                    if rest is None:
                        continue
                    v = rest.encode("latin-1")
                kept.append((k, v))
            new_headers = kept
        new_headers.append((b"content-type", content_type.encode("latin-1")))
        new_headers.append((b"content-length", str(len(shaped)).encode()))
        new_headers.extend((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra)
        await self.downstream({**start, "headers": new_headers})
        await self.downstream({"type": "http.response.body", "body": shaped, "more_body": False})


# What describes the handler's body as it was (length, type, validators, digests, ranges):
# the engine's list, as `pare http` drops it.
_NOT_OF_THE_SHAPED_BODY = frozenset(n.encode("latin-1") for n in _pare.NOT_OF_THE_SHAPED_BODY)


async def _answer(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})
