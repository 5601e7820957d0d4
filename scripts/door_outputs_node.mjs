#!/usr/bin/env node
// The Node door's side of scripts/door_outputs.py: reads cases (JSON lines: payload, policy
// or null, level or null, format, budget or null) on stdin and writes, per case, one JSON
// line: the shaped text for JSON text input and for the parsed object, or the error.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { Policy } = createRequire(import.meta.url)(path.join(root, "crates/pare-node/index.js"));
const policies = new Map();
const texts = new Map();
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (!line) continue;
  const c = JSON.parse(line);
  if (!policies.has(c.policy)) policies.set(c.policy, c.policy ? Policy.fromFile(c.policy) : Policy.builtin());
  if (!texts.has(c.payload)) texts.set(c.payload, fs.readFileSync(c.payload, "utf8"));
  const text = texts.get(c.payload);
  const opts = { format: c.format, ...(c.level ? { level: c.level } : {}), ...(c.budget ? { budget: c.budget } : {}) };
  const out = {};
  for (const [kind, input] of [["text", text], ["object", JSON.parse(text)]]) {
    try {
      out[kind] = policies.get(c.policy).shape(input, opts).text;
    } catch (e) {
      out[kind] = { error: e.message };
    }
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
