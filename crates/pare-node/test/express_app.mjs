// A real Express app for the REST tests: the corpus payloads behind routes, the way an API
// serves them. `--shape POLICY` mounts pare-llm's middleware; without it, the app is as its
// authors wrote it (for `pare http` in front). Prints its port on stdout.
import fs from "node:fs";
import path from "node:path";

import express from "express";

import { Policy, express as pare } from "../index.mjs";
import { PAYLOADS } from "./support.mjs";

const args = process.argv.slice(2);
const at = args.indexOf("--shape");
const app = express();
if (at >= 0) app.use(pare(Policy.fromFile(args[at + 1])));

const payload = (name) => JSON.parse(fs.readFileSync(path.join(PAYLOADS, name), "utf8"));
const entities = payload("entities_systems.json");
app.get("/api/entities", (req, res) => {
  const limit = req.query.limit === undefined ? undefined : Number(req.query.limit);
  res.set("x-app", "entities").set("link", '</api/entities?after=last>; rel="next", </docs>; rel="help"');
  res.json(limit === undefined ? entities : { ...entities, entities: entities.entities.slice(0, limit) });
});
app.get("/api/entities/:id", (req, res) => {
  const e = entities.entities.find((x) => String(x.id) === req.params.id);
  if (!e) return res.status(404).json({ error: "no such entity" });
  res.json(e);
});
app.get("/api/paged", (req, res) => res.json(entities));
const search = payload("semantic_search_full.json");
app.get("/api/search", (req, res) => res.json(search));
app.get("/api/text", (req, res) => res.type("text/plain").send("plain text stays"));
app.get("/api/streamed", (req, res) => {
  // Written in pieces, as a handler that streams JSON does.
  res.setHeader("content-type", "application/json");
  const text = JSON.stringify(entities);
  for (let i = 0; i < text.length; i += 4096) res.write(text.slice(i, i + 4096));
  res.end();
});
app.get("/api/headers", (req, res) => res.json({ seen: Object.keys(req.headers).filter((h) => h.startsWith("x-pare")), query: req.query }));
app.get("/other", (req, res) => res.json({ untouched: null, empty: [] }));

const server = app.listen(0, "127.0.0.1", () => console.log(server.address().port));
