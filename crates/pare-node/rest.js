// What the REST integrations (express.js, fastify.js) share: which of the handler's headers
// a shaped body keeps, and how pare's headers join them — as `pare http` does
// (crates/pare-http/src/proxy/respond.rs).
"use strict";

/** The handler's headers that describe its body, not the shaped one. */
const NOT_OF_THE_SHAPED_BODY = new Set([
  "content-length",
  "content-encoding",
  "content-type",
  "etag",
  "content-md5",
  "digest",
  "content-digest",
  "repr-digest",
  "accept-ranges",
]);

const tooLong = (maxBody) => `not shaped: the body is longer than the middleware's maxBody (${maxBody} bytes)`;

function checkMaxBody(options, who) {
  for (const k of Object.keys(options ?? {})) {
    if (k !== "maxBody") throw new TypeError(`${who}: unknown option ${JSON.stringify(k)}; allowed: maxBody`);
  }
  const maxBody = options?.maxBody ?? 64 * 1024 * 1024;
  if (!Number.isSafeInteger(maxBody) || maxBody < 0) throw new TypeError(`${who}: maxBody must be a whole number of bytes`);
  return maxBody;
}

/**
 * Set a shaped body's headers on `h` (`names()`, `get(k)`, `set(k, v)`, `remove(k)`):
 * the handler's own minus those of its body, pare's `X-Pare-*`, `Link` (pare's `next` while
 * its pages go on, the handler's own links kept), the shaped body's type, `Vary`.
 */
function setShapedHeaders(h, out, native, vary) {
  for (const name of h.names()) {
    if (NOT_OF_THE_SHAPED_BODY.has(name.toLowerCase())) h.remove(name);
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

module.exports = { NOT_OF_THE_SHAPED_BODY, tooLong, checkMaxBody, setShapedHeaders, headerPairs, splitUrl };
