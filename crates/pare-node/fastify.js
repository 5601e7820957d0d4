// Fastify plugin: JSON responses shaped per route by a policy's `[http]` section, with the
// rules of every REST door (the engine's `pare::rest`, the code `pare http` runs) — the same
// body and `X-Pare-*` headers as `pare http` in front of the app, like the Express
// middleware (express.js; its header comments say what passes untouched and why).
//
//   const Fastify = require("fastify");
//   const { Policy, fastify: pareFastify } = require("pare-llm");
//   const app = Fastify();
//   await app.register(pareFastify(Policy.fromFile("service.toml")));   // before the routes
//
// It hooks the whole app (not only the plugin's own scope): `onRequest` takes pare's
// parameters and headers out (the handler's `request.url`, `request.query` and
// `request.headers` do not have them) and `onSend` shapes the serialized body. A body sent
// as a stream passes untouched.
"use strict";

const { makeRest } = require("./rest.js");

function makeFastify(deps) {
  const shared = makeRest(deps);
  const { tooLong, headerPairs, splitUrl } = shared;

  /** A Fastify plugin shaping the app's JSON responses by `policy`'s `[http]` routes. */
  function plugin(policy, options = {}) {
    const { rest, maxBody } = shared.routes(policy, options, "fastify(policy, options)");
    const calls = new WeakMap();

    function pare(app, _opts, done) {
      app.addHook("onRequest", (request, reply, next) => {
        const raw = request.raw;
        const [pathname, query] = splitUrl(raw.url);
        const call = rest.begin(raw.method, pathname, query, headerPairs(raw.rawHeaders));
        if (!call) return next();
        if (call.errorStatus != null) {
          // A Buffer: Fastify adds a charset to a string body's type, which pare http does not send.
          reply.code(call.errorStatus).header("content-type", "application/json").send(Buffer.from(call.errorBody));
          return;
        }
        const own = call.query;
        raw.url = pathname + (own ? `?${own}` : "");
        // Fastify parsed the query when it routed the request: take pare's names out of it.
        const kept = new Set(new URLSearchParams(own).keys());
        if (request.query && typeof request.query === "object") {
          for (const k of Object.keys(request.query)) if (!kept.has(k)) delete request.query[k];
        }
        for (const name of Object.keys(raw.headers)) {
          if (shared.isPareHeader(name)) delete raw.headers[name];
        }
        if (!call.full) calls.set(request, call);
        next();
      });

      app.addHook("onSend", (request, reply, payload, next) => {
        const call = calls.get(request);
        if (!call || (typeof payload !== "string" && !Buffer.isBuffer(payload))) return next(null, payload);
        const encoding = String(reply.getHeader("content-encoding") ?? "").trim().toLowerCase();
        const type = reply.getHeader("content-type");
        const contentType = type === undefined ? undefined : String(type);
        if (!call.shapes(reply.statusCode, contentType, encoding !== "" && encoding !== "identity")) return next(null, payload);
        const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
        if (body.length > maxBody) {
          reply.header("x-pare-note", tooLong(maxBody));
          return next(null, payload);
        }
        const out = call.finish(reply.statusCode, contentType, false, body);
        if (out.kind === "pass") return next(null, payload);
        if (out.kind === "refuse") {
          for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name);
          reply.code(out.status).header("content-type", out.contentType);
          return next(null, out.body);
        }
        shared.setShapedHeaders(
          {
            names: () => Object.keys(reply.getHeaders()),
            get: (k) => reply.getHeader(k),
            set: (k, v) => reply.header(k, v),
            remove: (k) => reply.removeHeader(k),
          },
          out,
        );
        next(null, out.body);
      });
      done();
    }
    // Hooks for the whole app, not an encapsulated child (what `fastify-plugin` marks).
    pare[Symbol.for("skip-override")] = true;
    pare[Symbol.for("fastify.display-name")] = "pare-llm";
    return pare;
  }
  return plugin;
}

module.exports = { makeFastify };
