#!/usr/bin/env node
// The Node package's speed, side by side in one run, against the peers issue 31 names.
//
//   node bench/node_speed.mjs [--pare-bin target/release/pare] [--runs 7]
//
// Needs a *release* addon (`npm run build` in crates/pare-node; scripts/test builds a debug
// one, which this refuses unless PARE_ALLOW_DEBUG=1) and the package's dev dependencies
// (`npm ci --ignore-scripts` there: gpt-tokenizer, js-tiktoken, @toon-format/toon). One
// table; each ratio is from this run (best of --runs):
//
// 1. ~1 MB entities object: `policy.shape(obj).text` with bench/adr010.toml (ADR-010's rules)
//    against the seed's `compactEntity(obj)` + `JSON.stringify` written in JS (the port of
//    bench/compact_entity.py); the outputs are checked equal as values first. Also the
//    same payload as JSON text, the package's fastest path.
// 2. ~1 KB payload: the same call in-process against spawning `pare compact` per call.
// 3. countTokens on 7 MB against gpt-tokenizer and js-tiktoken in-process (counts equal).
// 4. encode(format: "toon") against @toon-format/toon's encode (byte-identical).
// 5. The event loop's delay (monitorEventLoopDelay, p99) while shapeAsync (text and
//    object) and countTokensAsync work on 7 MB, one call at a time.
// 6. Memory: RSS of a fresh node after importing the package and after the first call.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PKG = path.join(REPO, "crates", "pare-node");
const require = createRequire(path.join(PKG, "index.js"));
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const pareBin = opt("--pare-bin", path.join(REPO, "target", "release", "pare"));
const runs = Number(opt("--runs", "7"));
const work = opt("--dir", process.env.PARE_BENCH_DIR || "/tmp/pare-bench");

const pare = require("./index.js");
if (pare.build !== "release" && !process.env.PARE_ALLOW_DEBUG) {
  console.error(`${PKG}/pare.node is a ${pare.build} build (npm run build in crates/pare-node makes a release one); PARE_ALLOW_DEBUG=1 runs anyway`);
  process.exit(2);
}
const { countTokens: gptCount } = require("gpt-tokenizer");
const { getEncoding } = require("js-tiktoken");
const { encode: toonEncode } = require("@toon-format/toon");

function best(fn, n = runs) {
  let b = Infinity;
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    fn();
    b = Math.min(b, Number(process.hrtime.bigint() - t) / 1e9);
  }
  return b;
}

function payload(mb) {
  const out = path.join(work, `entities_${mb}mb.json`);
  if (!fs.existsSync(out)) {
    fs.mkdirSync(work, { recursive: true });
    execFileSync("python3", [path.join(REPO, "bench", "gen_payload.py"), "--mb", String(mb), "--out", out]);
  }
  return fs.readFileSync(out, "utf8");
}

// The seed's compact_entity (ADR-010), as a JS team writes it: bench/compact_entity.py's rules.
const SKIP = new Set(["created_at", "updated_at", "valid_from", "valid_until", "version", "metadata"]);
function compactEntity(v) {
  if (Array.isArray(v)) return v.map((x) => (x !== null && typeof x === "object" ? compactEntity(x) : x));
  if (v === null || typeof v !== "object") return v;
  const out = {};
  for (const k of Object.keys(v)) {
    let x = v[k];
    if (SKIP.has(k) || x === null) continue;
    if (typeof x === "object") {
      x = compactEntity(x);
      if (Array.isArray(x) ? x.length === 0 : Object.keys(x).length === 0) continue;
    } else if (x === "") continue;
    out[k] = x;
  }
  return out;
}

const rows = [];
const policy = pare.Policy.fromFile(path.join(REPO, "bench", "adr010.toml"));

// 1. ~1 MB object.
const bigText = payload(1);
const big = JSON.parse(bigText);
const seed = () => JSON.stringify(compactEntity(big));
const ours = () => policy.shape(big).text;
if (JSON.stringify(JSON.parse(seed())) !== JSON.stringify(JSON.parse(ours()))) throw new Error("pare and compactEntity disagree");
const tSeed = best(seed);
rows.push(["~1 MB object: compactEntity + JSON.stringify", tSeed, "policy.shape(object)", best(ours)]);
rows.push(["~1 MB: JSON.parse + compactEntity + JSON.stringify", best(() => JSON.stringify(compactEntity(JSON.parse(bigText)))), "policy.shape(text)", best(() => policy.shape(bigText).text)]);

// 2. ~1 KB payload: in-process vs a process per call.
const smallDoc = { entities: [structuredClone(big.entities[0])], total: 1, entity_type: "System" };
let small = JSON.stringify(smallDoc, null, 2);
while (small.length > 1100) {
  const ent = smallDoc.entities[0];
  delete ent[Object.keys(ent)[0]];
  small = JSON.stringify(smallDoc, null, 2);
}
const cmd = ["compact", "--policy", path.join(REPO, "bench", "adr010.toml")];
const spawn = () => spawnSync(pareBin, cmd, { input: small }).stdout.toString();
if (spawn().slice(0, -1) !== policy.shape(small).text) throw new Error("the CLI and the package disagree on the 1 KB payload");
rows.push([`${small.length} B payload: spawn pare compact`, best(spawn, runs * 3), "policy.shape(text)", best(() => policy.shape(small).text, runs * 300)]);

// 3. countTokens, 7 MB.
const text7 = payload(7);
const n = pare.countTokens(text7);
const gpt = gptCount(text7);
const tiktoken = getEncoding("o200k_base");
const tik = tiktoken.encode(text7).length;
if (gpt !== n || tik !== n) throw new Error(`counts differ: pare ${n}, gpt-tokenizer ${gpt}, js-tiktoken ${tik}`);
const tOurs = best(() => pare.countTokens(text7));
rows.push([`7 MB count (${n} tokens, all equal): gpt-tokenizer`, best(() => gptCount(text7)), "countTokens", tOurs]);
rows.push(["7 MB count: js-tiktoken encode().length", best(() => tiktoken.encode(text7).length, Math.min(runs, 3)), "countTokens", tOurs]);

// 4. TOON.
for (const [name, value] of [
  ["~1 MB entities", big],
  ["7 MB entities", JSON.parse(text7)],
]) {
  const ref = toonEncode(value);
  const mine = pare.encode(value, { format: "toon" });
  if (ref !== mine) throw new Error(`TOON differs from @toon-format/toon on ${name}`);
  rows.push([`${name} → TOON (byte-identical): @toon-format/toon`, best(() => toonEncode(value)), "encode(toon)", best(() => pare.encode(value, { format: "toon" }))]);
}

console.log(`${"peer".padEnd(58)} ${"s".padStart(9)}   ${"pare".padEnd(22)} ${"s".padStart(9)}  ratio`);
for (const [name, tp, oursName, to] of rows) {
  console.log(`${name.padEnd(58)} ${tp.toFixed(5).padStart(9)}   ${oursName.padEnd(22)} ${to.toFixed(5).padStart(9)}  ${(tp / to).toFixed(1).padStart(6)}x`);
}

// 5. Event-loop delay while the async variants work on 7 MB: one call at a time, five times.
const entities = pare.Policy.fromFile(path.join(REPO, "examples", "policies", "entities.toml"));
const obj7 = JSON.parse(text7);
for (const [name, work7] of [
  ["shapeAsync(7 MB text)", () => entities.shapeAsync(text7)],
  ["shapeAsync(7 MB object)", () => entities.shapeAsync(obj7)],
  ["countTokensAsync(7 MB)", () => pare.countTokensAsync(text7)],
]) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  const ticker = setInterval(() => {}, 1);
  h.enable();
  const t = process.hrtime.bigint();
  for (let i = 0; i < 5; i++) await work7();
  const took = Number(process.hrtime.bigint() - t) / 1e9 / 5;
  // Let a timer that was held up fire, so a blocked loop is measured.
  await new Promise((r) => setTimeout(r, 20));
  h.disable();
  clearInterval(ticker);
  console.log(`event loop during ${name}: p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms, max ${(h.max / 1e6).toFixed(1)} ms (${took.toFixed(3)} s a call)`);
}

// 6. Memory of a fresh process.
const rss = (code) =>
  Number(execFileSync(process.execPath, ["-e", `${code};console.log(fs.readFileSync('/proc/self/status','utf8').match(/VmHWM:\\s+(\\d+)/)[1])`], { cwd: PKG, env: { ...process.env, NODE_OPTIONS: "" } }).toString().trim().split("\n").pop()) / 1024;
const base = rss("const fs=require('fs')");
const imported = rss("const fs=require('fs');require('./index.js')");
const first = rss("const fs=require('fs');const p=require('./index.js');p.Policy.builtin().shape({a:[1,null]},{budget:100}).tokensAfter");
console.log(`RSS: node ${base.toFixed(1)} MiB, after require("pare-llm") ${imported.toFixed(1)} MiB, after the first call (o200k tables) ${first.toFixed(1)} MiB`);
