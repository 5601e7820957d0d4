// The package's API as a stranger uses it: conversion by JSON.stringify's rules, typed
// errors with their fields, options checked by name, lazy counts, async variants that
// keep the event loop free, and the functions beside `shape`.
import assert from "node:assert/strict";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { test } from "node:test";
import { createRequire } from "node:module";

import pare, {
  BudgetError,
  CursorError,
  JsonError,
  PareError,
  Policy,
  PolicyError,
  countTokens,
  countTokensAsync,
  encode,
  expand,
  pack,
  stats,
} from "../index.mjs";
import { POLICIES, compact, read } from "./support.mjs";

const entities = () => Policy.fromFile(path.join(POLICIES, "entities.toml"));

test("CommonJS and ES modules give the same objects", () => {
  const cjs = createRequire(import.meta.url)("../index.js");
  assert.equal(cjs.Policy, Policy);
  assert.equal(pare.encode, encode);
});

test("values convert by JSON.stringify's rules", () => {
  class Point {
    constructor() {
      this.x = 1;
    }
    get hidden() {
      return 2;
    }
  }
  const sym = Symbol("s");
  const cases = [
    { a: 1.0, b: -0, c: 1e21, d: 1.5e-7, e: 0.1 + 0.2, f: 2 ** 53, g: -(2 ** 60), h: 5e-324 },
    { skip: undefined, fn() {}, [sym]: 1, keep: [undefined, () => 1, sym] },
    { when: new Date(Date.UTC(2020, 1, 3, 4, 5, 6, 7)), buf: Buffer.from("hi") },
    { custom: { toJSON: (key) => `key=${key}` }, list: [{ toJSON: (k) => k }] },
    { point: new Point(), map: new Map([[1, 2]]), set: new Set([1]), typed: new Uint8Array([1, 2]) },
    { 2: "two", b: "b", 1: "one", a: "a" },
    Object.assign([1, , 3], { extra: "ignored" }), // a hole is null; non-index keys are not elements
    { text: 'é ✓ \u2028 "q" \\ \u0000 \ud83d\ude00' },
    [],
    {},
    "plain string as a value is JSON text, so this is tested below",
  ].slice(0, -1);
  for (const v of cases) {
    assert.equal(encode(v, { format: "json" }), JSON.stringify(v), JSON.stringify(v));
  }
  // A string is JSON text; a value that is a string is given as JSON text.
  assert.equal(encode('"x"', { format: "json" }), '"x"');
});

test("what has no JSON form is refused, naming where", () => {
  const p = Policy.builtin();
  assert.throws(() => p.shape({ a: [1, NaN] }), { name: "TypeError", message: /NaN at \$\.a\[1\] is not a JSON number/ });
  assert.throws(() => p.shape({ "x y": { b: Infinity } }), { message: /Infinity at \$\['x y'\]\.b/ });
  assert.throws(() => p.shape({ big: 10n }), { name: "TypeError", message: /BigInt at \$\.big/ });
  assert.throws(() => p.shape(undefined), { name: "TypeError", message: /cannot shape undefined/ });
  assert.throws(() => p.shape(() => 1), { name: "TypeError", message: /cannot shape a function/ });
  const cycle = { a: {} };
  cycle.a.back = cycle;
  assert.throws(() => p.shape(cycle), { name: "TypeError", message: /nests deeper than 256 levels, the most pare's JSON parser reads \(a circular structure\?\)/ });
  assert.throws(() => p.shape({ t: { toJSON: () => 1n } }), { message: /BigInt at \$\.t/ });
  assert.throws(() => p.shape({ s: ["ok \ufffd", "x\ud800"] }), { message: /lone surrogate \\ud800 in a string at \$\.s\[1\]/ });
  assert.throws(() => p.shape({ ["k\udc00"]: 1 }), { message: /lone surrogate \\udc00/ });
  assert.equal(p.shape({ s: "real \ufffd" }).text, '{"s":"real \ufffd"}');
});

test("regression: a toJSON that throws reaches the caller as its own error", () => {
  const boom = new Error("boom");
  assert.throws(
    () =>
      Policy.builtin().shape({
        x: {
          toJSON() {
            throw boom;
          },
        },
      }),
    (e) => e === boom,
  );
});

test("bad policies raise PolicyError with key, value and allowed values", () => {
  assert.throws(
    () => Policy.fromString('[[ops]]\nop = "prun"\n'),
    (e) =>
      e instanceof PolicyError &&
      e instanceof PareError &&
      e.key === "ops[0].op" &&
      e.value === "prun" &&
      e.allowed.includes("prune") &&
      e.kind === "unknown_value",
  );
  assert.throws(() => Policy.fromString("[[ops]\n"), (e) => e instanceof PolicyError && e.kind === "syntax" && e.line === 1);
  assert.throws(() => entities().shape("{}", { level: "nope" }), (e) => e instanceof PolicyError && e.key === "level" && e.allowed.includes("full"));
  assert.throws(() => Policy.builtin().shape("{}", { format: "yaml" }), (e) => e instanceof PolicyError && e.key === "format" && e.allowed.includes("toon"));
  assert.throws(() => countTokens("x", { tokenizer: "gpt2" }), (e) => e instanceof PolicyError && e.key === "tokenizer");
  assert.throws(() => Policy.fromFile("/nonexistent/p.toml"), (e) => e instanceof PareError && /nonexistent/.test(e.message));
  const fromObject = Policy.fromObject({ ops: [{ op: "drop", paths: ["$..secret"] }] });
  assert.equal(fromObject.shape({ a: 1, secret: 2 }).text, '{"a":1}');
  assert.throws(() => Policy.fromObject({ ops: [{ op: "drop", pths: [] }] }), PolicyError);
});

test("input that is not JSON raises JsonError with line, column and offset", () => {
  assert.throws(
    () => Policy.builtin().shape('{\n  "a": tru\n}'),
    (e) => e instanceof JsonError && e.line === 2 && e.column === 8 && e.offset === 9,
  );
  assert.throws(() => Policy.builtin().shape(Buffer.from([0x7b, 0xff])), (e) => e instanceof JsonError && e.offset === 1);
  assert.equal(Policy.builtin().shape(Buffer.from('{"a": 1}')).text, '{"a":1}');
  assert.equal(Policy.builtin().shape(new TextEncoder().encode("[1, 2]")).text, "[1,2]");
});

test("regression: a lone surrogate in JSON text became U+FFFD", async () => {
  const lone = '["a\ud800"]';
  assert.throws(() => Policy.builtin().shape(lone), (e) => e instanceof JsonError && e.offset === 3 && /lone surrogate/.test(e.message));
  await assert.rejects(Policy.builtin().shapeAsync(lone), (e) => e instanceof JsonError && e.offset === 3);
  assert.throws(() => countTokens("x\udc00"), JsonError);
  await assert.rejects(countTokensAsync("x\udc00"), JsonError);
  // A real U+FFFD is text like any other.
  assert.equal(Policy.builtin().shape('["\ufffd"]').text, '["\ufffd"]');
  assert.equal((await Policy.builtin().shapeAsync('["\ufffd"]')).text, '["\ufffd"]');
});

test("cursors and budgets have their own errors", () => {
  const text = read("entities_systems.json");
  assert.throws(() => entities().shape(text, { budget: 1500, cursor: "nonsense" }), CursorError);
  const first = entities().shape(text, { budget: 1500 });
  assert.throws(() => entities().shape(read("entities.json"), { budget: 1500, cursor: first.nextCursor }), CursorError);
  assert.throws(() => entities().shape(text, { budget: 3 }), BudgetError);
});

test("options are checked by name", () => {
  const p = Policy.builtin();
  assert.throws(() => p.shape("{}", { budgte: 10 }), { name: "TypeError", message: /unknown option "budgte"; allowed: level, params/ });
  assert.throws(() => p.shape("{}", { budget: 0 }), { message: /budget must be a whole number of tokens >= 1/ });
  assert.throws(() => p.shape("{}", { budget: 2.5 }), TypeError);
  assert.throws(() => p.shape("{}", { params: { x: {} } }), { message: /params\["x"\] must be a string, finite number or boolean/ });
  assert.throws(() => p.pages("{}", {}), { message: /budget is required/ });
  assert.throws(() => p.shapeValue("{}", { format: "toon" }), { message: /unknown option "format"/ });
  assert.throws(() => new Policy({}), TypeError);
});

test("a Shaped page reads like the CLI's report, counting lazily", () => {
  const text = read("entities.json");
  const out = entities().shape(text);
  assert.equal(out.text, compact(text, ["--policy", path.join(POLICIES, "entities.toml")]));
  assert.equal(String(out), out.text);
  assert.equal(out.tokensBefore, countTokens(text));
  assert.equal(out.tokensAfter, countTokens(out.text));
  assert.equal(out.level, "standard");
  assert.equal(out.page, 1);
  assert.equal(out.pages, 1);
  assert.equal(out.nextCursor, null);
  assert.ok(out.omitted.empty > 0);
  const r = out.record();
  assert.equal(r.tokens_before, out.tokensBefore);
  assert.equal(r.level, "standard");
  // An object's tokensBefore counts it as minified JSON.
  const obj = JSON.parse(text);
  assert.equal(entities().shape(obj).tokensBefore, countTokens(JSON.stringify(obj)));
});

test("params reach the policy's ops, as --param does", () => {
  const policyPath = path.join(POLICIES, "narrative.toml");
  const text = read("narrative_day.json");
  const p = Policy.fromFile(policyPath);
  assert.deepEqual(p.params, { maxGapMinutes: 2.0 });
  const texts = new Set();
  for (const v of [0, 5, "30", 2.5]) {
    const got = p.shape(text, { params: { maxGapMinutes: v } }).text;
    assert.equal(got, compact(text, ["--policy", policyPath, "--param", `maxGapMinutes=${v}`]));
    texts.add(got);
  }
  assert.ok(texts.size > 1, "the parameter changed nothing");
  assert.throws(() => p.shape(text, { params: { nope: 1 } }), PolicyError);
});

test("encode, expand, stats and pack are the commands' own", () => {
  const rows = { rows: [{ a: 1, b: "x" }, { a: 2, b: "y" }] };
  const toon = encode(rows, { format: "toon" });
  assert.equal(toon, "rows[2]{a,b}:\n  1,x\n  2,y");
  assert.deepEqual(expand(toon), rows);
  const warnings = [];
  encode({ big: 12345678901234567890 }, { format: "toon", onWarning: (w) => warnings.push(w) });
  assert.equal(warnings.length, 0, "a JS number is a double: TOON carries it exactly");
  encode('{"big": 12345678901234567890123}', { format: "toon", onWarning: (w) => warnings.push(w) });
  assert.equal(warnings.length, 1);
  const s = stats(read("entities.json"), { top: 3 });
  assert.equal(s.tokens, countTokens(read("entities.json")));
  const search = read("semantic_search_full.json");
  const packed = pack(search, { budget: 400, policy: Policy.fromFile(path.join(POLICIES, "search.toml")) });
  const question = "release index embedding deploy nonexistentword";
  const asked = pack(search, { budget: 1500, policy: Policy.fromFile(path.join(POLICIES, "search.toml")), query: question });
  assert.deepEqual(asked.metrics.queryAnalysis.unmatched_terms, ["nonexistentword"]);
  assert.equal(`${asked.text}`, asked.text);
  assert.ok(packed.tokens <= 400 && packed.tokens === countTokens(packed.text));
  assert.equal(typeof packed.metrics, "object");
});

test("async variants give the sync bytes and errors", async () => {
  const text = read("entities_systems.json");
  const p = entities();
  assert.equal((await p.shapeAsync(text)).text, p.shape(text).text);
  assert.deepEqual(
    (await p.pagesAsync(text, { budget: 1500 })).map((s) => s.text),
    p.pages(text, { budget: 1500 }).map((s) => s.text),
  );
  assert.deepEqual(await p.shapeValueAsync(JSON.parse(text)), p.shapeValue(text));
  assert.equal(await countTokensAsync(text), countTokens(text));
  await assert.rejects(p.shapeAsync("{"), JsonError);
  await assert.rejects(p.shapeAsync(text, { cursor: "x", budget: 100 }), CursorError);
  await assert.rejects(p.shapeAsync({ x: NaN }), TypeError);
});

test("the async variants leave the event loop free while a large input is shaped", async () => {
  // About 7 MB of JSON: the corpus payload repeated.
  const one = JSON.parse(read("entities_systems.json"));
  const big = JSON.stringify({ pages: Array.from({ length: Math.ceil(7e6 / JSON.stringify(one).length) }, () => one) });
  assert.ok(big.length > 7e6);
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const ticks = setInterval(() => {}, 1);
  const [count, shaped] = await Promise.all([countTokensAsync(big), entities().shapeAsync(big)]);
  clearInterval(ticks);
  h.disable();
  assert.equal(count, countTokens(big));
  assert.ok(shaped.text.length > 0);
  // Not a timing assertion: the loop kept turning while the engine ran elsewhere.
  assert.ok(h.count > 0);
  console.log(`event-loop delay while counting and shaping ${big.length} bytes: p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms, max ${(h.max / 1e6).toFixed(1)} ms`);
});
