// A real MCP server on the TypeScript SDK, over stdio, for the MCP tests: tools that return
// the corpus payloads. `--shape POLICY` shapes it in-process with pare-llm's mcp.shape
// (`--max-tokens N`); without it, the server is as its authors wrote it (for `pare mcp`).
import fs from "node:fs";
import path from "node:path";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

import { Policy, mcp } from "../index.mjs";
import { PAYLOADS } from "./support.mjs";

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

const server = new McpServer({ name: "corpus", version: "1.0.0" });
const payload = (name) => fs.readFileSync(path.join(PAYLOADS, name), "utf8");
server.registerTool(
  "list_entities",
  { description: "Every entity and relationship.", inputSchema: { limit: z.number().optional() } },
  async ({ limit }) => {
    const doc = JSON.parse(payload("entities_systems.json"));
    if (limit !== undefined) doc.entities = doc.entities.slice(0, limit);
    return { content: [{ type: "text", text: JSON.stringify(doc) }] };
  },
);
server.registerTool("search_memory", { description: "Search the memory graph." }, async () => ({
  content: [{ type: "text", text: payload("search_memory.json") }],
}));
server.registerTool("narrative", { description: "A day's narrative." }, async () => {
  const doc = JSON.parse(payload("narrative_day.json"));
  return { content: [{ type: "text", text: JSON.stringify(doc, null, 2) }], structuredContent: doc };
});
server.registerTool("ping", { description: "Plain text." }, async () => ({ content: [{ type: "text", text: "pong" }] }));
server.registerTool("fails", { description: "Always an error." }, async () => {
  throw new Error("upstream is down");
});

const policyPath = opt("--shape");
if (policyPath) {
  mcp.shape(server, Policy.fromFile(policyPath), { maxTokens: Number(opt("--max-tokens") ?? 20000) });
}
await server.connect(new StdioServerTransport());
