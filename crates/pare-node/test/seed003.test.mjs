// Seed 003's guide (examples/seed003.mts, docs/node.md) compiles with `tsc --strict`, runs,
// logs the ADR's metrics keys, and packs exactly what `pare pack` packs with the same policy.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { PAYLOADS, pareBin } from "./support.mjs";

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

test("the seed 003 guide's TypeScript compiles, runs, and packs as pare pack does", () => {
  execFileSync(path.join(PKG, "node_modules", ".bin", "tsc"), ["-p", "examples/tsconfig.json"], { cwd: PKG, stdio: "inherit" });
  const response = path.join(PAYLOADS, "semantic_search_full.json");
  const run = spawnSync(process.execPath, [path.join(PKG, "test/.build/examples/seed003.mjs"), response, "1500"], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const logged = JSON.parse(run.stderr.split("\n")[0]);
  for (const key of ["totalChunks", "metadataOnlyChunks", "tokensBeforeCompression", "tokensAfterCompression", "tokensSaved", "compressionRate"]) {
    assert.ok(key in logged, `the metrics lack ${key}`);
  }
  assert.ok(logged.tokensAfterCompression <= 1500);
  assert.equal(logged.totalChunks, 20);
  // The same [pack] section, as a policy file for the CLI.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pare-seed003-"));
  const policy = path.join(dir, "adr0015.json");
  fs.writeFileSync(policy, JSON.stringify({
    pack: { items: "results", id: "chunk_id", score: "hybrid_score", text: "chunk_text", path: "source_file", header: "context_header", score_threshold: 0.4, max_chars: 2000 },
  }));
  const cli = spawnSync(pareBin(), ["pack", response, "--policy", policy, "--budget", "1500"], { encoding: "utf8" });
  assert.equal(cli.status, 0, cli.stderr);
  assert.equal(run.stdout, cli.stdout);
  fs.rmSync(dir, { recursive: true });
});
