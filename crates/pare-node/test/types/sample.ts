// Compiled by `tsc --strict --noEmit` (scripts/test): the declarations in index.d.ts say
// what index.js does, for a caller that writes TypeScript.
import { BudgetError, countTokens, CursorError, encode, expand, JsonError, pack, PareError, Policy, PolicyError, Shaped, stats } from "pare-llm";

const policy: Policy = Policy.fromFile("examples/policies/entities.toml");
const out: Shaped = policy.shape({ entities: [] }, { level: "standard", budget: 2000, format: "toon", params: { n: 1 } });
const text: string = out.text;
const next: string | null = out.nextCursor;
const counts: number = out.tokensBefore - out.tokensAfter - out.noteTokens;
const omitted: Record<string, number> = out.omitted;
const pages: Shaped[] = policy.pages('{"a":1}', { budget: 100 });
const tokens: number = countTokens(text, { tokenizer: "cl100k_base" });
const toon: string = encode({ rows: [{ a: 1 }] }, { format: "toon" });
const back = expand(toon);
const packed = pack({ results: [] }, { budget: 100, policy });
const where = stats('{"a":1}', { top: 3 });

async function later(): Promise<number> {
  const s = await policy.shapeAsync(Buffer.from("{}"));
  const v = await policy.shapeValueAsync({ a: 1 }, { level: "full" });
  return s.page + (v === null ? 0 : 1);
}

function explain(e: unknown): string {
  if (e instanceof PolicyError) return `${e.key} ${e.value} ${(e.allowed ?? []).join(",")} ${e.kind}`;
  if (e instanceof JsonError) return `${e.line}:${e.column} @${e.offset}`;
  if (e instanceof CursorError || e instanceof BudgetError) return e.message;
  if (e instanceof PareError) return e.message;
  return String(e);
}

// @ts-expect-error a budget is required for pages
policy.pages("{}", {});
// @ts-expect-error formats are named
policy.shape("{}", { format: "yaml" });

export { back, counts, explain, later, next, omitted, packed, pages, tokens, where };

import { express as pareExpress, mcp } from "pare-llm";
import expressApp from "express";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

const app = expressApp();
app.use(pareExpress(policy, { maxBody: 1 << 20 }));
const server: McpServer = mcp.shape(new McpServer({ name: "s", version: "1" }), policy, { maxTokens: 5000, onWarning: (m: string) => void m });
import { z } from "zod";
const shaper = mcp.tools(policy, { maxTokens: 5000 });
server.registerTool(
  "search",
  { description: "Search.", inputSchema: { q: z.string(), ...shaper.arguments("search", z) } },
  shaper.handler("search", async ({ q }: { q: string }) => ({ content: [{ type: "text" as const, text: q }] })),
);
shaper.registerMore(server, z);
const detail: Record<string, unknown> = shaper.jsonSchema("search");
import Fastify from "fastify";
import { fastify as pareFastify } from "pare-llm";
const fapp = Fastify();
void fapp.register(pareFastify(policy, { maxBody: 1 << 20 }));
export { app, detail, fapp, server };
