// What the REST integrations (express.js, fastify.js) share: a policy's routes with their
// options checked, which of the handler's headers a shaped body keeps, and how pare's
// headers join them — as `pare http` does (the engine's `pare::rest`, whose lists these are).
"use strict";

const tooLong = (maxBody) => `not shaped: the body is longer than the middleware's maxBody (${maxBody} bytes)`;

/** The request's `[name, value]` header pairs, as the client sent them. */
function headerPairs(raw) {
  const pairs = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i], raw[i + 1]]);
  return pairs;
}

function splitUrl(url) {
  const q = url.indexOf("?");
  return q < 0 ? [url, ""] : [url.slice(0, q), url.slice(q + 1)];
}

function makeRest({ native, Policy, typed }) {
  const notOfTheShapedBody = new Set(native.notOfTheShapedBody());
  const vary = native.shapedVary();

  /**
   * `policy`'s `[http]` routes and the checked `maxBody` for an integration `who` names in
   * its errors (`express(policy, options)`).
   */
  function routes(policy, options, who) {
    const name = who.slice(0, who.indexOf("("));
    if (!(policy instanceof Policy)) throw new TypeError(`${name}(policy): the policy must be a Policy (Policy.fromFile, …)`);
    for (const k of Object.keys(options ?? {})) {
      if (k !== "maxBody") throw new TypeError(`${who}: unknown option ${JSON.stringify(k)}; allowed: maxBody`);
    }
    const maxBody = options?.maxBody ?? 64 * 1024 * 1024;
    if (!Number.isSafeInteger(maxBody) || maxBody < 0) throw new TypeError(`${who}: maxBody must be a whole number of bytes`);
    try {
      return { rest: new native.Rest(policy._native), maxBody };
    } catch (e) {
      throw typed(e);
    }
  }

  /**
   * Set a shaped body's headers on `h` (`names()`, `get(k)`, `set(k, v)`, `remove(k)`):
   * the handler's own minus those of its body, pare's `X-Pare-*`, `Link` (pare's `next` while
   * its pages go on, the handler's own links kept), the shaped body's type, `Vary`.
   */
  function setShapedHeaders(h, out) {
    for (const name of h.names()) {
      if (notOfTheShapedBody.has(name.toLowerCase())) h.remove(name);
    }
    const paged = out.headers.some(([k]) => k.toLowerCase() === "link");
    let links = [];
    if (h.get("link") !== undefined) {
      links = [].concat(h.get("link")).map(String);
      // While pare's pages go on, pare's `next` is the next page; the handler's own follows pare's last.
      if (paged) links = links.map((v) => native.linkWithoutNext(v)).filter((v) => v != null);
      h.remove("link");
    }
    h.set("content-type", out.contentType);
    for (const [k, v] of out.headers) {
      if (k.toLowerCase() === "link") links.push(v);
      else h.set(k, v);
    }
    if (links.length) h.set("link", links.length === 1 ? links[0] : links);
    const before = h.get("vary");
    h.set("vary", before === undefined ? vary : [].concat(before, vary).join(", "));
  }

  /** Whether a request header is one of pare's (taken out before the handler runs). */
  const isPareHeader = (name) => native.isPareHeaderName(name);

  return { routes, setShapedHeaders, isPareHeader, tooLong, headerPairs, splitUrl };
}

module.exports = { makeRest };
