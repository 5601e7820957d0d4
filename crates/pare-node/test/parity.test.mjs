// The package's output is byte for byte what `pare compact` prints (minus the final
// newline) with the same policy, level, format and budget: for JSON text, and for an
// object, whose output is `pare compact` of `JSON.stringify(object)` (a JS number has lost
// its lexeme: `1.0` is `1`).
//
// Every payload with every example policy at its default level; the scenario pairs at every
// level in every format; budgets with every page by cursor; generated payloads of the same
// shapes.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { Policy, PareError } from "../index.mjs";
import { POLICIES, PAYLOADS, Refused, compact, read } from "./support.mjs";

const PAIRS = {
  "entities.toml": ["entities.json", "entities_systems.json", "s1_entity.json"],
  "meta_relations.toml": ["search_memory.json", "s2_meta_relations.json"],
  "narrative.toml": ["narrative_day.json", "s3_narrative.json"],
  "website_usage.toml": ["website_usage.json"],
  "memory.toml": ["vendor_graph_full.json"],
  "search.toml": ["semantic_search_full.json"],
};
const FORMATS = ["json", "pretty", "toon", "auto"];

function cliArgs(policyPath, { level, format, budget, cursor } = {}) {
  const a = ["--policy", policyPath];
  if (format) a.push("--format", format);
  if (level) a.push("--level", level);
  if (budget) a.push("--budget", String(budget));
  if (cursor) a.push("--cursor", cursor);
  return a;
}

/** Text and object input against the CLI; a refusal must be the CLI's, word for word. */
function check(policyName, text, opts, where) {
  const policyPath = path.join(POLICIES, policyName);
  const policy = Policy.fromFile(policyPath);
  const object = JSON.parse(text);
  for (const [given, cliInput, kind] of [
    [text, text, "text"],
    [object, JSON.stringify(object), "object"],
  ]) {
    let want;
    try {
      want = compact(cliInput, cliArgs(policyPath, opts));
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      assert.throws(() => policy.shape(given, opts), (err) => err instanceof PareError && err.message === e.message, `${where} (${kind})`);
      continue;
    }
    assert.equal(policy.shape(given, opts).text, want, `${kind} input differs: ${where}`);
  }
}

test("every payload with every policy at its default level", () => {
  const payloads = fs.readdirSync(PAYLOADS).filter((f) => f.endsWith(".json")).sort();
  const policies = fs.readdirSync(POLICIES).filter((f) => f.endsWith(".toml")).sort();
  let n = 0;
  for (const policy of policies) {
    for (const payload of payloads) {
      check(policy, read(payload), {}, `${payload} ${policy}`);
      n++;
    }
  }
  assert.ok(n >= 70, `only ${n} cases`);
});

test("scenario pairs at every level in every format", () => {
  let n = 0;
  for (const [policy, payloads] of Object.entries(PAIRS)) {
    const levels = Policy.fromFile(path.join(POLICIES, policy)).levels;
    for (const payload of payloads) {
      const text = read(payload);
      for (const level of levels) {
        for (const format of FORMATS) {
          check(policy, text, { level, format }, `${payload} ${policy} level=${level} format=${format}`);
          n++;
        }
      }
    }
  }
  assert.ok(n > 100, `only ${n} cases`);
});

for (const format of FORMATS) {
  test(`budgets, pages and cursors match the CLI (${format})`, () => {
    const policyPath = path.join(POLICIES, "entities.toml");
    const policy = Policy.fromFile(policyPath);
    const text = read("entities_systems.json");
    const opts = { format, budget: 1500, level: "standard" };
    const first = policy.shape(text, opts);
    assert.ok(first.pages > 1);
    assert.equal(first.text, compact(text, cliArgs(policyPath, opts)));
    const pages = policy.pages(text, opts);
    assert.equal(pages[0].text, first.text);
    let cursor = first.nextCursor;
    let n = 1;
    while (cursor) {
      n++;
      const want = compact(text, cliArgs(policyPath, { ...opts, cursor }));
      const page = policy.shape(text, { ...opts, cursor });
      assert.equal(page.text, want);
      assert.equal(pages[n - 1].text, want);
      assert.equal(page.page, n);
      assert.ok(page.tokensAfter + page.noteTokens <= opts.budget);
      cursor = page.nextCursor;
    }
    assert.equal(n, first.pages);
    assert.equal(n, pages.length);
  });
}

test("a default level is lowered to fit, as the CLI lowers it", () => {
  const policyPath = path.join(POLICIES, "meta_relations.toml");
  const text = read("search_memory.json");
  const out = Policy.fromFile(policyPath).shape(text, { budget: 1200 });
  assert.equal(out.loweredFrom, "standard");
  assert.notEqual(out.level, "standard");
  assert.equal(out.text, compact(text, cliArgs(policyPath, { budget: 1200 })));
  assert.ok(out.tokensAfter + out.noteTokens <= 1200);
});

test("generated payloads of the corpus shapes", () => {
  // A small seeded generator: the same payloads every run.
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  for (const n of [1, 7, 60]) {
    const entities = Array.from({ length: n }, (_, i) => ({
      id: `e${i}`,
      name: `System ${Math.floor(rnd() * 1e6)}`,
      type: pick(["service", "database", "team"]),
      score: rnd() * 10 ** Math.floor(rnd() * 24 - 6),
      ratio: pick([0.5, 1.0, 1e-7, 12345.678, -0, 2.5e16, 1e21, 5e-324]),
      tags: ["a", "b", "c", "d"].filter(() => rnd() < 0.5),
      notes: pick([null, "", 'é ✓ \u2028 "quoted" \ud83d\ude00', "x".repeat(1 + Math.floor(rnd() * 80)), undefined]),
      created_at: "2024-01-01T00:00:00Z",
      metadata: { source: null, when: new Date(Date.UTC(2024, 0, 1 + i)) },
    }));
    const doc = {
      entities,
      relationships: entities.map((_, i) => ({ source: "e0", target: `e${i}`, type: "DEPENDS_ON", weight: i / 3 })),
    };
    const text = JSON.stringify(doc, null, pick([undefined, 2]));
    for (const format of FORMATS) {
      check("entities.toml", text, { format }, `generated n=${n} format=${format}`);
      // The object itself (Dates, undefined, -0) gives what JSON.stringify of it gives.
      const want = compact(JSON.stringify(doc), cliArgs(path.join(POLICIES, "entities.toml"), { format }));
      assert.equal(Policy.fromFile(path.join(POLICIES, "entities.toml")).shape(doc, { format }).text, want);
    }
  }
});

test("a question reaches a [pack] policy as pare compact --query gives it", () => {
  const policyPath = path.join(POLICIES, "search.toml");
  const policy = Policy.fromFile(policyPath);
  const text = read("semantic_search_full.json");
  for (const query of ["release index embedding deploy", "region report timeout"]) {
    for (const opts of [{ query }, { query, budget: 700 }, { query, format: "json" }]) {
      const args = ["--policy", policyPath, "--query", query];
      if (opts.budget) args.push("--budget", String(opts.budget));
      if (opts.format) args.push("--format", opts.format);
      const want = compact(text, args);
      assert.equal(policy.shape(text, opts).text, want, JSON.stringify(opts));
      assert.equal(policy.shape(JSON.parse(text), opts).text, want, JSON.stringify(opts));
    }
  }
  assert.notEqual(policy.shape(text, { query: "region report timeout" }).text, policy.shape(text).text);
});

test("fields give what pare compact --fields gives", () => {
  const policyPath = path.join(POLICIES, "entities.toml");
  const policy = Policy.fromFile(policyPath);
  const text = read("entities.json");
  const fields = ["id,name", "$.entities[*].entity_type"];
  for (const budget of [undefined, 400]) {
    const args = ["--policy", policyPath, "--fields", fields[0], "--fields", fields[1]];
    if (budget) args.push("--budget", String(budget));
    const want = compact(text, args);
    assert.equal(policy.shape(text, { fields, budget }).text, want);
    assert.equal(policy.shape(JSON.parse(text), { fields, budget }).text, want);
    assert.equal(policy.shape(text, { fields: fields.join(","), budget }).text, want);
  }
  assert.throws(() => Policy.builtin().shape({ a: 1 }, { fields: ["$.["] }), /^.*fields: `\$\.\[` is not a field/);
  assert.throws(() => Policy.builtin().shape({ a: 1 }, { fields: [1] }), TypeError);
});
