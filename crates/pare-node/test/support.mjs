// Shared by the package's tests: where the repo's examples are, and the `pare` command the
// package's output is compared with ($PARE_BIN, else the workspace's debug or release build).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const PAYLOADS = path.join(REPO, "examples", "payloads");
export const POLICIES = path.join(REPO, "examples", "policies");

export function pareBin() {
  for (const c of [process.env.PARE_BIN, path.join(REPO, "target/debug/pare"), path.join(REPO, "target/release/pare")]) {
    if (c && fs.existsSync(c)) return c;
  }
  throw new Error("no pare binary: set PARE_BIN or run `cargo build` (scripts/test does)");
}

/** The CLI refused the input (exit 2); the package must refuse it with the same words. */
export class Refused extends Error {}

/** `pare compact` of `input` (text, given on stdin), without the final newline. */
export function compact(input, args) {
  const r = spawnSync(pareBin(), ["compact", "-", ...args], { input, maxBuffer: 1 << 28 });
  if (r.status === 2) throw new Refused(r.stderr.toString().replace(/^pare: error: /, "").trim());
  if (r.status !== 0) throw new Error(`pare compact ${args.join(" ")} failed: ${r.stderr}`);
  const out = r.stdout.toString();
  if (!out.endsWith("\n")) throw new Error("pare compact's output has no final newline");
  return out.slice(0, -1);
}

export const read = (name) => fs.readFileSync(path.join(PAYLOADS, name), "utf8");
