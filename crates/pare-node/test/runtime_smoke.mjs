// The same addon under another runtime (Bun, an older Node): loaded through both module
// faces, shaped sync and async, typed errors, the conversion rules. scripts/test runs it
// with the runtimes .ci/run installs; it exits non-zero on the first difference.
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { JsonError, Policy, PolicyError, countTokens, countTokensAsync, encode, expand } from "../index.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");
const cjs = createRequire(import.meta.url)("../index.js");
assert.equal(cjs.Policy, Policy);
const text = fs.readFileSync(path.join(repo, "examples/payloads/entities_systems.json"), "utf8");
const policy = Policy.fromFile(path.join(repo, "examples/policies/entities.toml"));
const want = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const got = {
  text: policy.shape(text).text,
  object: policy.shape(JSON.parse(text)).text,
  paged: policy.pages(text, { budget: 1500, format: "toon" }).map((p) => p.text),
  asyncText: (await policy.shapeAsync(text)).text,
  tokens: countTokens(text),
  tokensAsync: await countTokensAsync(text),
  toon: encode({ rows: [{ a: 1, d: new Date(0), u: undefined }] }, { format: "toon" }),
  expand: expand("rows[2]{a}:\n  1\n  2"),
};
assert.deepEqual(got, want);
assert.throws(() => policy.shape("{"), (e) => e instanceof JsonError && e.line === 1);
assert.throws(() => policy.shape("{}", { level: "x" }), (e) => e instanceof PolicyError && e.key === "level");
assert.throws(() => policy.shape({ a: [NaN] }), /NaN at \$\.a\[0\]/);
console.log(`runtime_smoke: ${typeof Bun === "undefined" ? `node ${process.version}` : `bun ${Bun.version}`}: ok`);
