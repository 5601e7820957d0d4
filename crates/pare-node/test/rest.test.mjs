// The Express middleware against `pare http` in front of the same app (test/express_app.mjs,
// one dataset): the same status, body bytes and X-Pare-* headers (and Content-Type, Link,
// Vary) for every request, pages and cursors included; the handler never sees pare's
// parameters; what is not shaped passes untouched.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import readline from "node:readline";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { Policy, express as pareExpress } from "../index.mjs";
import { pareBin } from "./support.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const APPS = { express: path.join(HERE, "express_app.mjs"), fastify: path.join(HERE, "fastify_app.mjs") };
const POLICY = path.join(HERE, "fixtures", "service.toml");
const children = [];

function startApp(app, ...args) {
  const child = spawn(process.execPath, [app, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => reject(new Error(`the app exited (${code})`)));
    readline.createInterface({ input: child.stdout }).once("line", (line) => resolve(Number(line)));
  });
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(port) {
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise((resolve) => {
      const c = net.connect(port, "127.0.0.1", () => {
        c.end();
        resolve(true);
      });
      c.on("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

let viaProxy;
let viaMiddleware;
let viaFastifyProxy;
let viaFastify;
async function proxyFor(app) {
  const plain = await startApp(app);
  const port = await freePort();
  const proxy = spawn(pareBin(), ["http", "--upstream", `http://127.0.0.1:${plain}`, "--policy", POLICY, "--listen", `127.0.0.1:${port}`, "--quiet"], { stdio: "inherit" });
  children.push(proxy);
  await waitFor(port);
  return `http://127.0.0.1:${port}`;
}
before(async () => {
  viaProxy = await proxyFor(APPS.express);
  viaMiddleware = `http://127.0.0.1:${await startApp(APPS.express, "--shape", POLICY)}`;
  viaFastifyProxy = await proxyFor(APPS.fastify);
  viaFastify = `http://127.0.0.1:${await startApp(APPS.fastify, "--shape", POLICY)}`;
});
after(() => {
  for (const c of children) c.kill();
});

const COMPARED = ["content-type", "link", "vary"];
// `X-Pare-Cache` says whether pare http's page cache answered; the middleware has none.
const PROXY_ONLY = ["x-pare-cache"];
async function get(base, url, headers = {}) {
  const r = await fetch(base + url, { headers: { "accept-encoding": "identity", ...headers } });
  const body = Buffer.from(await r.arrayBuffer()).toString("utf8");
  const h = {};
  for (const [k, v] of r.headers) if ((k.startsWith("x-pare-") && !PROXY_ONLY.includes(k)) || COMPARED.includes(k)) h[k] = v;
  return { status: r.status, headers: h, body };
}

const REQUESTS = [
  ["/api/entities"],
  ["/api/entities?limit=3"],
  ["/api/entities?pare_detail=full"],
  ["/api/entities?pare_format=toon&limit=5"],
  ["/api/entities?pare_format=auto"],
  ["/api/entities", { accept: "text/toon" }],
  ["/api/entities?pare_max_tokens=900"],
  ["/api/entities", { "x-pare-max-tokens": "1200", "x-pare-format": "pretty" }],
  ["/api/entities?pare_detail=nope"],
  ["/api/entities?pare_max_tokens=zero"],
  ["/api/entities?pare_cursor=bogus&pare_max_tokens=900"],
  ["/api/entities/does-not-exist"],
  ["/api/streamed"],
  ["/api/paged"],
  ["/api/text"],
  ["/api/headers?pare_detail=standard&keep=1", { "x-pare-detail": "standard" }],
  ["/other"],
  ["/api/entities?pare_param_x=2"],
  ["/api/entities?pare_detail=full&pare_max_tokens=10"],
  ["/api/search"],
  ["/api/search?pare_query=release%20index%20embedding&pare_max_tokens=600"],
  ["/api/search", { "x-pare-query": "region report timeout", "x-pare-max-tokens": "500" }],
  ["/api/entities?pare_fields=id,name&pare_max_tokens=300"],
  ["/api/entities", { "x-pare-fields": "$.entities[*].entity_type" }],
  ["/api/entities?pare_fields=%24.%5B"],
];

test("every request gives pare http's status, body and X-Pare-* headers (Express)", async () => {
  for (const [url, headers] of REQUESTS) {
    const want = await get(viaProxy, url, headers);
    const got = await get(viaMiddleware, url, headers);
    assert.deepEqual(got, want, `${url} ${JSON.stringify(headers ?? {})}`);
  }
});

test("every request gives pare http's status, body and X-Pare-* headers (Fastify)", async () => {
  for (const [url, headers] of REQUESTS) {
    const want = await get(viaFastifyProxy, url, headers);
    const got = await get(viaFastify, url, headers);
    assert.deepEqual(got, want, `${url} ${JSON.stringify(headers ?? {})}`);
  }
  // The handler's own view, through the plugin.
  const r = await get(viaFastify, "/api/headers?pare_detail=full&keep=1&pare_format=toon", { "x-pare-detail": "full", "X-Pare-Max-Tokens": "300" });
  assert.deepEqual(JSON.parse(r.body), { seen: [], query: { keep: "1" } });
  let url = "/api/paged";
  let pages = 0;
  while (url) {
    const want = await get(viaFastifyProxy, url);
    const got = await get(viaFastify, url);
    assert.deepEqual(got, want, url);
    pages++;
    const next = /<([^>]+)>;\s*rel="next"/.exec(got.headers.link ?? "");
    url = next ? next[1] : null;
    assert.ok(pages < 50);
  }
  assert.ok(pages > 2);
});

test("pages and cursors of a question: every page is pare http's, and Link keeps the question", async () => {
  let url = "/api/search?pare_query=release%20index%20embedding&pare_max_tokens=400";
  let pages = 0;
  while (url) {
    const want = await get(viaProxy, url);
    const got = await get(viaMiddleware, url);
    assert.deepEqual(got, want, url);
    assert.equal(got.status, 200, url);
    pages++;
    const next = /<([^>]+)>;\s*rel="next"/.exec(got.headers.link ?? "");
    url = next ? next[1] : null;
    if (url) assert.match(url, /pare_query=release%20index%20embedding/);
    assert.ok(pages < 50);
  }
  assert.ok(pages > 2, `only ${pages} pages`);
});

test("pages and cursors: every page is pare http's, and Link walks them", async () => {
  let url = "/api/paged";
  let pages = 0;
  while (url) {
    const want = await get(viaProxy, url);
    const got = await get(viaMiddleware, url);
    assert.deepEqual(got, want, url);
    assert.equal(got.status, 200);
    pages++;
    const next = /<([^>]+)>;\s*rel="next"/.exec(got.headers.link ?? "");
    url = next ? next[1] : null;
    assert.ok(pages < 50);
  }
  assert.ok(pages > 2, `only ${pages} pages`);
});

test("the handler sees neither pare's parameters nor its headers", async () => {
  const r = await get(viaMiddleware, "/api/headers?pare_detail=full&keep=1&pare_format=toon", { "x-pare-detail": "full", "X-Pare-Max-Tokens": "300" });
  assert.deepEqual(JSON.parse(r.body), { seen: [], query: { keep: "1" } });
});

test("the middleware refuses what is not a policy and unknown options", () => {
  assert.throws(() => pareExpress("service.toml"), /must be a Policy/);
  assert.throws(() => pareExpress(Policy.builtin(), { maxbody: 1 }), /unknown option "maxbody"; allowed: maxBody/);
});

test("regression: a body sent in one end() call was shaped past maxBody", async () => {
  const { default: express } = await import("express");
  const app = express();
  app.use(pareExpress(Policy.fromFile(POLICY), { maxBody: 1000 }));
  const doc = { entities: Array.from({ length: 100 }, (_, i) => ({ id: i, empty: null })) };
  app.get("/api/entities", (req, res) => {
    if (!req.query.pieces) return res.json(doc);
    res.type("json");
    const t = JSON.stringify(doc);
    for (let i = 0; i < t.length; i += 100) res.write(t.slice(i, i + 100));
    res.end();
  });
  const server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  try {
    const r = await get(`http://127.0.0.1:${server.address().port}`, "/api/entities");
    assert.equal(r.body, JSON.stringify(doc));
    assert.match(r.headers["x-pare-note"], /not shaped: the body is longer than the middleware's maxBody \(1000 bytes\)/);
    assert.equal(r.headers["x-pare-level"], undefined);
    // Written in pieces, the same.
    const pieces = await get(`http://127.0.0.1:${server.address().port}`, "/api/entities?pieces=1");
    assert.equal(pieces.body, JSON.stringify(doc));
    assert.match(pieces.headers["x-pare-note"], /maxBody \(1000 bytes\)/);
  } finally {
    server.close();
  }
});

test("the Fastify plugin: maxBody and bad arguments", async () => {
  const { default: Fastify } = await import("fastify");
  const { fastify: pareFastify } = await import("../index.mjs");
  assert.throws(() => pareFastify("service.toml"), /must be a Policy/);
  assert.throws(() => pareFastify(Policy.builtin(), { max: 1 }), /unknown option "max"; allowed: maxBody/);
  const app = Fastify();
  await app.register(pareFastify(Policy.fromFile(POLICY), { maxBody: 1000 }));
  const doc = { entities: Array.from({ length: 100 }, (_, i) => ({ id: i, empty: null })) };
  app.get("/api/entities", async () => doc);
  await app.listen({ port: 0, host: "127.0.0.1" });
  try {
    const r = await get(`http://127.0.0.1:${app.server.address().port}`, "/api/entities");
    assert.equal(r.body, JSON.stringify(doc));
    assert.match(r.headers["x-pare-note"], /maxBody \(1000 bytes\)/);
    const small = await get(`http://127.0.0.1:${app.server.address().port}`, "/api/entities/x");
    assert.equal(small.status, 404);
  } finally {
    await app.close();
  }
});
