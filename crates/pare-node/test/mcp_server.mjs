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
// `--tools POLICY`: the handler-level integration, each tool's handler shaped by itself.
const toolsPolicy = opt("--tools");
const shaper = toolsPolicy ? mcp.tools(Policy.fromFile(toolsPolicy), { maxTokens: Number(opt("--max-tokens") ?? 20000) }) : null;
const own = (name, schema = {}) => (shaper ? { ...schema, ...shaper.arguments(name, z) } : schema);
const shaped = (name, handler) => (shaper ? shaper.handler(name, handler) : handler);
server.registerTool(
  "list_entities",
  { description: "Every entity and relationship.", inputSchema: own("list_entities", { limit: z.number().optional() }) },
  shaped("list_entities", async ({ limit }) => {
    const doc = JSON.parse(payload("entities_systems.json"));
    if (limit !== undefined) doc.entities = doc.entities.slice(0, limit);
    return { content: [{ type: "text", text: JSON.stringify(doc) }] };
  }),
);
server.registerTool(
  "search_memory",
  { description: "Search the memory graph.", inputSchema: own("search_memory") },
  shaped("search_memory", async () => ({
    content: [{ type: "text", text: payload("search_memory.json") }],
  })),
);
server.registerTool(
  "narrative",
  { description: "A day's narrative.", inputSchema: own("narrative") },
  shaped("narrative", async () => {
    const doc = JSON.parse(payload("narrative_day.json"));
    return { content: [{ type: "text", text: JSON.stringify(doc, null, 2) }], structuredContent: doc };
  }),
);
server.registerTool(
  "search_code",
  { description: "Search the code base.", inputSchema: own("search_code", { query: z.string() }) },
  shaped("search_code", async () => ({ content: [{ type: "text", text: payload("semantic_search_full.json") }] })),
);
if (shaper) shaper.registerMore(server, z);
server.registerTool("ping", { description: "Plain text." }, async () => ({ content: [{ type: "text", text: "pong" }] }));
server.registerTool("fails", { description: "Always an error." }, async () => {
  throw new Error("upstream is down");
});

const policyPath = opt("--shape");
if (policyPath) {
  mcp.shape(server, Policy.fromFile(policyPath), { maxTokens: Number(opt("--max-tokens") ?? 20000) });
}
await server.connect(new StdioServerTransport());
