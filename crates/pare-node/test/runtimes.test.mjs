// One build serves every Node >= 18 and Bun: test/runtime_smoke.mjs under the runtimes in
// $PARE_NODE_RUNTIMES (default /tmp/pare-node-runtimes, which .ci/run fills: Node 18, Bun),
// against what this node makes of the same calls. Without them the test says it did not run
// (and fails under CI=true).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { Policy, countTokens, encode, expand } from "../index.mjs";
import { PAYLOADS, POLICIES } from "./support.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const dir = process.env.PARE_NODE_RUNTIMES || "/tmp/pare-node-runtimes";
const RUNTIMES = [
  ["node 18", path.join(dir, "node_modules", "node", "bin", "node")],
  ["bun", path.join(dir, "node_modules", ".bin", "bun")],
];
const ci = ["true", "1"].includes(process.env.CI ?? "");

async function expected() {
  const text = fs.readFileSync(path.join(PAYLOADS, "entities_systems.json"), "utf8");
  const policy = Policy.fromFile(path.join(POLICIES, "entities.toml"));
  return {
    text: policy.shape(text).text,
    object: policy.shape(JSON.parse(text)).text,
    paged: policy.pages(text, { budget: 1500, format: "toon" }).map((p) => p.text),
    asyncText: (await policy.shapeAsync(text)).text,
    tokens: countTokens(text),
    tokensAsync: countTokens(text),
    toon: encode({ rows: [{ a: 1, d: new Date(0), u: undefined }] }, { format: "toon" }),
    expand: expand("rows[2]{a}:\n  1\n  2"),
  };
}

for (const [name, bin] of RUNTIMES) {
  test(`the addon under ${name} gives this node's results`, async (t) => {
    if (!fs.existsSync(bin)) {
      const why = `${name} is not in ${dir} (.ci/run installs it: npm install --prefix ${dir} node@18 bun@1)`;
      if (ci) assert.fail(why);
      t.skip(why);
      return;
    }
    const wantFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pare-rt-")), "want.json");
    fs.writeFileSync(wantFile, JSON.stringify(await expected()));
    const r = spawnSync(bin, [path.join(HERE, "runtime_smoke.mjs"), wantFile], { encoding: "utf8" });
    assert.equal(r.status, 0, `${name}: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /runtime_smoke: .*: ok/);
  });
}
