// Express middleware: JSON responses shaped per route by a policy's `[http]` section, with
// the rules of every REST door (the engine's `pare::rest`, the code `pare http` runs), so a
// route answers with the same body and `X-Pare-*` headers as `pare http` in front of the app.
//
//   const express = require("express");
//   const { Policy, express: pareExpress } = require("pare-llm");
//   const app = express();
//   app.use(pareExpress(Policy.fromFile("service.toml")));   // before the routes
//
// - Routes: `[[http.routes]] match = ["GET /api/entities", "GET /api/entities/{id}"]` with a
//   `policy`, default `level`, `format` (`json` by default) and `max_tokens`. Other routes
//   pass untouched (unless `[http] shape_unmatched = true`). A route is matched on the
//   request's whole path (`req.originalUrl`), as `pare http` sees it.
// - The caller chooses: `?pare_detail=LEVEL` (`full`: the handler's exact response),
//   `?pare_format=`, `?pare_max_tokens=`, `?pare_cursor=`, `?pare_param_<name>=`, or the
//   `X-Pare-*` request headers. They are taken out before the handler runs (it sees `req.url`
//   and `req.query` without them); a bad value is answered with 400 and a JSON body naming
//   the parameter and the allowed values.
// - What passes untouched, as it is written: bodies that are not JSON, statuses other than
//   200–203, content-encoded bodies (mount `compression()` before this middleware, so it
//   compresses the shaped body), and bodies over `maxBody` bytes (with `X-Pare-Note`).
// - Shaped responses carry `X-Pare-Tokens-Before`, `X-Pare-Tokens-After`, `X-Pare-Level`,
//   `X-Pare-Page`, `X-Pare-Pages` (and `X-Pare-Next-Cursor` with `Link: <…>; rel="next"` when
//   paged, `X-Pare-Note` with what was removed) and `Vary`; validators (`ETag`, digests) that
//   describe the handler's body go.
"use strict";

const { makeRest } = require("./rest.js");

function makeExpress(deps) {
  const shared = makeRest(deps);
  const { headerPairs, splitUrl } = shared;

  /** Middleware shaping the JSON responses of an Express (or plain `node:http`) app. */
  function middleware(policy, options = {}) {
    const { rest, maxBody } = shared.routes(policy, options, "express(policy, options)");

    return function pare(req, res, next) {
      const [pathname, query] = splitUrl(req.originalUrl ?? req.url);
      const call = rest.begin(req.method, pathname, query, headerPairs(req.rawHeaders));
      if (!call) return next();
      if (call.errorStatus != null) {
        const body = Buffer.from(call.errorBody);
        res.writeHead(call.errorStatus, { "content-type": "application/json", "content-length": body.length });
        res.end(body);
        return;
      }
      // The handler sees the request without pare's parameters and headers.
      const own = call.query;
      const mounted = req.url.indexOf("?");
      req.url = (mounted < 0 ? req.url : req.url.slice(0, mounted)) + (own ? `?${own}` : "");
      if (req.originalUrl !== undefined) req.originalUrl = pathname + (own ? `?${own}` : "");
      for (const name of Object.keys(req.headers)) {
        if (shared.isPareHeader(name)) delete req.headers[name];
      }
      if (!call.full) hold(shared, call, res, maxBody);
      next();
    };
  }
  return middleware;
}

/** Hold the response's head and body until its end, to shape it whole. */
function hold(shared, call, res, maxBody) {
  const { tooLong } = shared;
  const writeHead = res.writeHead;
  const write = res.write;
  const end = res.end;
  let state = "undecided"; // → "holding" | "passing"
  let chunks = [];
  let size = 0;

  const restore = () => {
    res.writeHead = writeHead;
    res.write = write;
    res.end = end;
  };
  const decide = () => {
    if (state !== "undecided") return;
    const encoding = String(res.getHeader("content-encoding") ?? "").trim().toLowerCase();
    const encoded = encoding !== "" && encoding !== "identity";
    const type = res.getHeader("content-type");
    state = call.shapes(res.statusCode, type === undefined ? undefined : String(type), encoded) ? "holding" : "passing";
  };
  const asBuffer = (chunk, encoding) =>
    chunk == null ? null : Buffer.isBuffer(chunk) ? chunk : typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? encoding : "utf8") : Buffer.from(chunk);
  // What was held goes on as it is, and so does the rest.
  const release = () => {
    state = "passing";
    restore();
    const held = Buffer.concat(chunks);
    chunks = [];
    if (held.length > 0) write.call(res, held);
  };

  res.writeHead = function (status, reason, headers) {
    if (typeof reason !== "string") [reason, headers] = [undefined, reason];
    res.statusCode = status;
    if (reason !== undefined) res.statusMessage = reason;
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2) res.setHeader(headers[i], headers[i + 1]);
    } else if (headers) {
      for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    }
    decide();
    if (state === "passing") {
      restore();
      return writeHead.call(res, res.statusCode, res.statusMessage);
    }
    return res;
  };

  res.write = function (chunk, encoding, cb) {
    decide();
    if (state === "passing") {
      restore();
      return write.call(res, chunk, encoding, cb);
    }
    const b = asBuffer(chunk, encoding);
    if (b) {
      chunks.push(b);
      size += b.length;
    }
    if (size > maxBody) {
      res.setHeader("x-pare-note", tooLong(maxBody));
      release();
    }
    const done = typeof encoding === "function" ? encoding : cb;
    if (typeof done === "function") process.nextTick(done);
    return true;
  };

  res.end = function (chunk, encoding, cb) {
    if (typeof chunk === "function") [chunk, encoding, cb] = [undefined, undefined, chunk];
    if (typeof encoding === "function") [encoding, cb] = [undefined, encoding];
    decide();
    if (state === "passing") {
      restore();
      return end.call(res, chunk, encoding, cb);
    }
    const b = asBuffer(chunk, encoding);
    if (b) chunks.push(b);
    restore();
    const body = Buffer.concat(chunks);
    chunks = [];
    if (body.length > maxBody) {
      // `res.send` hands the whole body to one `end`: the limit holds there too.
      res.setHeader("x-pare-note", tooLong(maxBody));
      return end.call(res, body, cb);
    }
    const type = res.getHeader("content-type");
    const out = call.finish(res.statusCode, type === undefined ? undefined : String(type), false, body);
    if (out.kind === "pass") return end.call(res, body, cb);
    if (out.kind === "refuse") {
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      res.statusCode = out.status;
      res.setHeader("content-type", out.contentType);
      res.setHeader("content-length", out.body.length);
      return end.call(res, out.body, cb);
    }
    shared.setShapedHeaders(
      {
        names: () => res.getHeaderNames(),
        get: (k) => res.getHeader(k),
        set: (k, v) => res.setHeader(k, v),
        remove: (k) => res.removeHeader(k),
      },
      out,
    );
    res.setHeader("content-length", out.body.length);
    return end.call(res, out.body, cb);
  };
}

module.exports = { makeExpress };
