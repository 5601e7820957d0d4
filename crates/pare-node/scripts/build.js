#!/usr/bin/env node
// Builds the addon from this clone with the Rust toolchain (no prebuilt download) and puts
// it beside index.js as pare.node. `npm install ./crates/pare-node` runs it; so does
// `npm run build`.
//
//   node scripts/build.js [--profile release|dev]      (env PARE_NODE_PROFILE; default release)
//
// scripts/test builds with the dev profile, so the engine the Rust tests just built is
// reused. The artifact's path comes from cargo itself (CARGO_TARGET_DIR and profiles are
// honoured), not guessed.
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const here = path.resolve(__dirname, "..");
const args = process.argv.slice(2);
const at = args.indexOf("--profile");
const profile = at >= 0 ? args[at + 1] : process.env.PARE_NODE_PROFILE || "release";
if (!["release", "dev"].includes(profile)) {
  console.error(`pare-llm build: unknown profile ${JSON.stringify(profile)}; allowed: release, dev`);
  process.exit(2);
}
const cargo = process.env.CARGO || "cargo";
const cargoArgs = ["build", "--profile", profile, "-p", "pare-node", "--message-format=json-render-diagnostics"];
if (process.env.PARE_NODE_LOCKED === "1") cargoArgs.push("--locked");
const r = spawnSync(cargo, cargoArgs, {
  cwd: here,
  stdio: ["ignore", "pipe", "inherit"],
  maxBuffer: 256 * 1024 * 1024,
  encoding: "utf8",
});
if (r.error) {
  console.error(`pare-llm build: could not run ${cargo} (${r.error.message}); install Rust: https://rustup.rs`);
  process.exit(1);
}
if (r.status !== 0) {
  console.error(`pare-llm build: cargo build failed (exit ${r.status})`);
  process.exit(r.status || 1);
}
let artifact = null;
for (const line of r.stdout.split("\n")) {
  if (!line.startsWith("{")) continue;
  const m = JSON.parse(line);
  if (m.reason === "compiler-artifact" && m.target && m.target.name === "pare_node" && m.target.kind.includes("cdylib")) {
    artifact = m.filenames.find((f) => /\.(so|dylib|dll)$/.test(f));
  }
}
if (!artifact) {
  console.error("pare-llm build: cargo built no pare_node library (see its output above)");
  process.exit(1);
}
// Copy, then rename: a process that has the old addon loaded keeps its mapping.
const dest = path.join(here, "pare.node");
const tmp = `${dest}.${process.pid}.tmp`;
fs.copyFileSync(artifact, tmp);
fs.renameSync(tmp, dest);
console.error(`pare-llm build: ${path.relative(process.cwd(), dest) || dest} (${profile}) from ${artifact}`);
