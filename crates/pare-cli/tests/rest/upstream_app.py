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


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
