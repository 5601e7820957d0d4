// A real Fastify app for the REST tests, serving what test/express_app.mjs serves.
// `--shape POLICY` registers pare-llm's plugin; without it, the app is as its authors wrote
// it (for `pare http` in front). Prints its port on stdout.
import fs from "node:fs";
import path from "node:path";

import Fastify from "fastify";

import { Policy, fastify as pare } from "../index.mjs";
import { PAYLOADS } from "./support.mjs";

const args = process.argv.slice(2);
const at = args.indexOf("--shape");
const app = Fastify();
if (at >= 0) await app.register(pare(Policy.fromFile(args[at + 1])));

const payload = (name) => JSON.parse(fs.readFileSync(path.join(PAYLOADS, name), "utf8"));
const entities = payload("entities_systems.json");
app.get("/api/entities", async (req, reply) => {
  const limit = req.query.limit === undefined ? undefined : Number(req.query.limit);
  reply.header("x-app", "entities").header("link", '</api/entities?after=last>; rel="next", </docs>; rel="help"');
  return limit === undefined ? entities : { ...entities, entities: entities.entities.slice(0, limit) };
});
app.get("/api/entities/:id", async (req, reply) => {
  const e = entities.entities.find((x) => String(x.id) === req.params.id);
  if (!e) return reply.code(404).send({ error: "no such entity" });
  return e;
});
app.get("/api/paged", async () => entities);
const search = payload("semantic_search_full.json");
app.get("/api/search", async () => search);
app.get("/api/text", async (req, reply) => reply.type("text/plain").send("plain text stays"));
app.get("/api/streamed", async (req, reply) => reply.type("application/json").send(JSON.stringify(entities)));
app.get("/api/headers", async (req) => ({ seen: Object.keys(req.headers).filter((h) => h.startsWith("x-pare")), query: req.query }));
app.get("/other", async () => ({ untouched: null, empty: [] }));

await app.listen({ port: 0, host: "127.0.0.1" });
console.log(app.server.address().port);
