// Seed 003 (ADR-0015, search result compression) in its own stack: the ADR's
// `CompressionOptions` as a pare policy, and `pack` under a hard token budget, from
// TypeScript. docs/node.md walks through it; the package's tests compile it with
// `tsc --strict` and run it.
//
//   node test/.build/examples/seed003.mjs RESPONSE.json [BUDGET]
import fs from "node:fs";

import { pack, Policy } from "pare-llm";

/** The ADR's options, as its `kb.config.json` writes them. */
interface CompressionOptions {
  enabled: boolean;
  smartTruncation: { enabled: boolean; maxLength: number; preserveStructure: boolean };
  metadataOnly: { enabled: boolean; scoreThreshold: number };
}

const adrDefaults: CompressionOptions = {
  enabled: true,
  smartTruncation: { enabled: true, maxLength: 2000, preserveStructure: true },
  metadataOnly: { enabled: true, scoreThreshold: 0.4 },
};

/**
 * The same choices as a pare policy. `max_chars`: a chunk longer than this starts at the
 * structure-preserving preview (signatures, types, exports and doc comments kept, by
 * tree-sitter, with `// … N lines omitted` markers), which is what smart truncation with
 * `preserveStructure` did. `score_threshold`: a chunk scoring under it starts at the
 * metadata-only line. The budget then decides, by exact o200k_base counts, not ~4 chars per
 * token.
 */
function policyFor(o: CompressionOptions): Policy {
  const off = !o.enabled;
  return Policy.fromObject({
    description: "ADR-0015 CompressionOptions as a pare policy",
    pack: {
      // The search response's field names.
      items: "results",
      id: "chunk_id",
      score: "hybrid_score",
      text: "chunk_text",
      path: "source_file",
      header: "context_header",
      score_threshold: off || !o.metadataOnly.enabled ? 0 : o.metadataOnly.scoreThreshold,
      // Without smart truncation a chunk is shown whole or not at all: no preview tier.
      max_chars: off || !o.smartTruncation.enabled ? Number.MAX_SAFE_INTEGER : o.smartTruncation.maxLength,
    },
  });
}

/** The metrics the ADR logged for each query, plus where each chunk went and why. */
interface Metrics {
  totalChunks: number;
  metadataOnlyChunks: number;
  tokensBeforeCompression: number;
  tokensAfterCompression: number;
  tokensSaved: number;
  compressionRate: string;
  items: { id: string; tier: string; reason: string }[];
}

const [file, budgetArg] = process.argv.slice(2);
if (!file) {
  console.error("usage: seed003.mjs RESPONSE.json [BUDGET]");
  process.exit(2);
}
const response = fs.readFileSync(file, "utf8");
const packed = pack(response, { budget: Number(budgetArg ?? 1500), policy: policyFor(adrDefaults) });
const metrics = packed.metrics as unknown as Metrics;
const { items, ...logged } = metrics;
// What the ADR's dashboards read, then the context the model gets.
console.error(JSON.stringify(logged));
console.error(`tiers: ${items.map((i) => i.tier).join(" ")}`);
process.stdout.write(packed.text);
