"""The REST API the `pare http` tests put pare in front of: a FastAPI app under uvicorn.

    python upstream_app.py PORT

Every route is deterministic except /api/changing, which changes on every call (so a
cursor made on one call does not fit the next). The entities are the checked-in payload
examples/payloads/entities_systems.json, served as its exact bytes.
"""

import asyncio
import gzip
import hashlib
import itertools
import json
import pathlib
import sys
import zlib

import brotli
import uvicorn
import zstandard
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse

ROOT = pathlib.Path(__file__).resolve().parents[4]
ENTITIES_BYTES = (ROOT / "examples/payloads/entities_systems.json").read_bytes()
ENTITIES = json.loads(ENTITIES_BYTES)
BY_ID = {e["id"]: e for e in ENTITIES["entities"]}
ETAG = '"' + hashlib.sha256(ENTITIES_BYTES).hexdigest()[:16] + '"'
JSON = "application/json"
calls = itertools.count(1)

app = FastAPI()


def raw(body: bytes, **headers: str) -> Response:
    return Response(content=body, media_type=JSON, headers=headers)


@app.api_route("/api/entities", methods=["GET", "HEAD"])
def entities() -> Response:
    return raw(ENTITIES_BYTES)


@app.api_route("/api/entities/{entity_id}", methods=["GET", "HEAD"])
def entity(entity_id: str) -> Response:
    if entity_id not in BY_ID:
        return JSONResponse({"detail": f"no entity {entity_id}", "id": None}, status_code=404)
    return raw(json.dumps(BY_ID[entity_id]).encode())


@app.get("/api/changing")
def changing() -> Response:
    n = next(calls)
    rows = [{"row": i, "call": n, "note": None, "text": f"row {i} of call {n} " + "word " * 12} for i in range(60)]
    return JSONResponse({"call": n, "rows": rows})


@app.get("/api/etag")
def etag(request: Request) -> Response:
    if request.headers.get("if-none-match") == ETAG:
        return Response(status_code=304, headers={"ETag": ETAG})
    return raw(ENTITIES_BYTES, ETag=ETAG)


@app.get("/api/gzip")
def gzipped() -> Response:
    return raw(gzip.compress(ENTITIES_BYTES), **{"Content-Encoding": "gzip"})


@app.get("/api/br")
def brotlied() -> Response:
    return raw(brotli.compress(ENTITIES_BYTES), **{"Content-Encoding": "br"})


@app.get("/api/zstd")
def zstded() -> Response:
    return raw(zstandard.ZstdCompressor().compress(ENTITIES_BYTES), **{"Content-Encoding": "zstd"})


@app.get("/api/deflate")
def deflated() -> Response:
    return raw(zlib.compress(ENTITIES_BYTES), **{"Content-Encoding": "deflate"})


async def slowly(lines):
    for line in lines:
        yield line
        await asyncio.sleep(0.4)


@app.get("/events")
def events() -> StreamingResponse:
    return StreamingResponse(slowly(f'data: {{"n": {i}}}\n\n' for i in range(5)), media_type="text/event-stream")


@app.get("/api/ndjson")
def ndjson() -> StreamingResponse:
    return StreamingResponse(slowly(json.dumps({"n": i, "x": None}) + "\n" for i in range(5)), media_type="application/x-ndjson")


def echo(request: Request, body: bytes) -> dict:
    return {
        "bytes": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
        "method": request.method,
        "query": request.url.query,
        "headers": {k: v for k, v in request.headers.items()},
        "empty": None,
    }


@app.post("/api/echo")
async def post_echo(request: Request) -> Response:
    return JSONResponse(echo(request, await request.body()))


@app.get("/api/headers")
async def get_headers(request: Request) -> Response:
    return JSONResponse(echo(request, b""))


@app.get("/api/slow")
async def slow(seconds: float = 5) -> Response:
    await asyncio.sleep(seconds)
    return JSONResponse({"slept": seconds})


@app.get("/api/error")
def error() -> Response:
    return JSONResponse({"error": "boom", "at": None}, status_code=500)


@app.get("/api/text")
def text() -> Response:
    return PlainTextResponse("plain text, not JSON: {\"a\": null}\n")


NARRATIVE_BYTES = (ROOT / "examples/payloads/narrative_day.json").read_bytes()


@app.get("/api/narrative")
def narrative(request: Request) -> Response:
    """Seed 002's activity narrative, with the query it was asked with in a header (so a
    test sees that pare's parameters never reach the upstream)."""
    return raw(NARRATIVE_BYTES, **{"X-Query-Seen": request.url.query or "-"})


TOKENS = {"alice-token": "alice", "bob-token": "bob"}


@app.get("/api/private")
def private(request: Request) -> Response:
    """A user's own rows, by a credential in a header other than Authorization (GitLab's
    PRIVATE-TOKEN, or X-Auth-Token), with a session cookie set for that user; 401 without."""
    token = request.headers.get("private-token") or request.headers.get("x-auth-token")
    user = TOKENS.get(token or "")
    if user is None:
        return JSONResponse({"message": "401 Unauthorized"}, status_code=401)
    rows = [{"row": i, "owner": user, "secret": f"{user}'s note {i} " + "word " * 10} for i in range(40)]
    r = JSONResponse({"user": user, "rows": rows})
    r.set_cookie("session", f"{user}-session")
    return r


shrinking_calls = itertools.count(1)


@app.get("/api/shrinking")
def shrinking() -> Response:
    """Sixty rows on the first call, one on every later one: a cursor from the first does
    not fit the later ones, which fit one page."""
    n = 60 if next(shrinking_calls) == 1 else 1
    return JSONResponse({"rows": [{"row": i, "text": "word " * 12} for i in range(n)]})


ISSUE_PAGES = 3
PER_PAGE = 30


@app.get("/api/issues")
def issues(request: Request, page: int = 1) -> Response:
    """GitHub-style pagination: a JSON array per page and `Link: rel="next"`/`rel="last"`,
    built from the host the client asked (X-Forwarded-Host behind a proxy), as APIs behind
    a reverse proxy do."""
    host = request.headers.get("x-forwarded-host") or request.headers.get("host")
    base = f"http://{host}/api/issues"
    rows = [{"number": (page - 1) * PER_PAGE + i, "title": f"issue {(page - 1) * PER_PAGE + i} " + "word " * 8,
             "state": "open"} for i in range(PER_PAGE)]
    links = []
    if page < ISSUE_PAGES:
        links.append(f'<{base}?page={page + 1}>; rel="next"')
    links.append(f'<{base}?page={ISSUE_PAGES}>; rel="last"')
    return JSONResponse(rows, headers={"Link": ", ".join(links)})


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
