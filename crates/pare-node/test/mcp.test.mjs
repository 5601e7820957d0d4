// mcp.shape on the TypeScript SDK's McpServer, driven by the SDK's real client over stdio:
// the same tool list and the same result bytes as `pare mcp` in front of the same server
// (the server script unshaped, wrapped by the proxy), from the same engine code: the
// `detail` argument, budgets, pages by `pare_more`, the original handle, structuredContent,
// errors.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { Policy, mcp } from "../index.mjs";
import { POLICIES, REPO, pareBin } from "./support.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER = path.join(HERE, "mcp_server.mjs");

async function connect(command, args) {
  const client = new Client({ name: "pare-node-test", version: "1.0.0" });
  const transport = new StdioClientTransport({ command, args, stderr: "pipe", cwd: REPO });
  await client.connect(transport);
  return client;
}

/** The same conversation with a client: every tool listed, called, and paged to the end. */
async function conversation(client, { listings = true } = {}) {
  const said = [];
  const tools = await client.listTools();
  if (listings) said.push(JSON.stringify(tools));
  const calls = [
    ["list_entities", {}],
    ["list_entities", { limit: 2, detail: "full" }],
    ["list_entities", { detail: "nonsense" }],
    ["search_memory", {}],
    ["narrative", {}],
    ["ping", {}],
    ["fails", {}],
  ];
  for (const [name, args] of calls) {
    let r;
    try {
      r = await client.callTool({ name, arguments: args });
    } catch (e) {
      said.push(`error ${e.code}: ${e.message}`);
      continue;
    }
    said.push(JSON.stringify(r));
    // Every later page, as a model would ask for it.
    let cursor = r._meta?.pare?.nextCursor;
    let guard = 0;
    while (cursor && guard++ < 50) {
      const more = await client.callTool({ name: "pare_more", arguments: { cursor } });
      said.push(JSON.stringify(more));
      cursor = more._meta?.pare?.nextCursor;
    }
  }
  if (listings) said.push(JSON.stringify(await client.listTools()));
  return said;
}

for (const [policy, maxTokens] of [
  ["entities.toml", 20000],
  ["entities.toml", 1500],
  ["memory.toml", 2000],
]) {
  test(`mcp.shape gives pare mcp's bytes (${policy}, ${maxTokens} tokens)`, async () => {
    const policyPath = path.join(POLICIES, policy);
    const inProcess = await connect(process.execPath, [SERVER, "--shape", policyPath, "--max-tokens", String(maxTokens)]);
    const proxied = await connect(pareBin(), ["mcp", "--policy", policyPath, "--max-tokens", String(maxTokens), "--", process.execPath, SERVER]);
    try {
      const ours = await conversation(inProcess);
      const theirs = await conversation(proxied);
      assert.equal(ours.length, theirs.length);
      for (let i = 0; i < ours.length; i++) assert.equal(ours[i], theirs[i], `message ${i} differs`);
      assert.ok(ours.some((m) => m.includes('"detail"')), "no tool gained `detail`");
      if (maxTokens < 20000) assert.ok(ours.filter((m) => m.includes("\"page\":")).length > 10, "nothing was paged");
    } finally {
      await inProcess.close();
      await proxied.close();
    }
  });
}

for (const [policy, maxTokens] of [
  ["entities.toml", 20000],
  ["entities.toml", 1500],
]) {
  test(`mcp.tools handlers give pare mcp's result bytes (${policy}, ${maxTokens} tokens)`, async () => {
    const policyPath = path.join(POLICIES, policy);
    const handlers = await connect(process.execPath, [SERVER, "--tools", policyPath, "--max-tokens", String(maxTokens)]);
    const proxied = await connect(pareBin(), ["mcp", "--policy", policyPath, "--max-tokens", String(maxTokens), "--", process.execPath, SERVER]);
    try {
      // The listings differ in form (the SDK writes zod's JSON Schema, and pare_more is
      // registered from the start); every call's result is the same bytes.
      const ours = await conversation(handlers, { listings: false });
      const theirs = await conversation(proxied, { listings: false });
      assert.equal(ours.length, theirs.length);
      // A bad level: pare mcp answers a JSON-RPC error; here the tool's own schema (with
      // `detail`'s levels as an enum) refuses it first, as an isError result naming them.
      for (let i = 0; i < ours.length; i++) {
        if (theirs[i].startsWith("error -32602: ")) {
          assert.match(theirs[i], /`detail` must be one of: standard, full/);
          assert.match(ours[i], /"isError":true/);
          assert.match(ours[i], /standard.*full.*detail/);
          continue;
        }
        assert.equal(ours[i], theirs[i], `message ${i} differs`);
      }
      const listed = await handlers.listTools();
      const entities = listed.tools.find((t) => t.name === "list_entities");
      assert.deepEqual(entities.inputSchema.properties.detail.enum, ["standard", "full"]);
      assert.ok(listed.tools.some((t) => t.name === "pare_more"));
    } finally {
      await handlers.close();
      await proxied.close();
    }
  });
}

test("a tool's own query argument ranks its packed results, as through pare mcp", async () => {
  const policyPath = path.join(HERE, "fixtures", "search_mcp.toml");
  const inProcess = await connect(process.execPath, [SERVER, "--shape", policyPath, "--max-tokens", "1200"]);
  const proxied = await connect(pareBin(), ["mcp", "--policy", policyPath, "--max-tokens", "1200", "--", process.execPath, SERVER]);
  try {
    const texts = [];
    for (const query of ["region report timeout", "release index embedding deploy"]) {
      const ours = await inProcess.callTool({ name: "search_code", arguments: { query } });
      const theirs = await proxied.callTool({ name: "search_code", arguments: { query } });
      assert.equal(JSON.stringify(ours), JSON.stringify(theirs), query);
      texts.push(ours.content[0].text);
    }
    assert.notEqual(texts[0], texts[1], "the question changed nothing");
    // The argument is the tool's own: listed as the server lists it.
    const tool = (await proxied.listTools()).tools.find((t) => t.name === "search_code");
    assert.equal(tool.inputSchema.properties.query.type, "string");
  } finally {
    await inProcess.close();
    await proxied.close();
  }
});

test("a caller's fields give pare mcp's bytes, and a bad field is the same error", async () => {
  const policyPath = path.join(HERE, "fixtures", "fields_mcp.toml");
  const inProcess = await connect(process.execPath, [SERVER, "--shape", policyPath, "--max-tokens", "1500"]);
  const proxied = await connect(pareBin(), ["mcp", "--policy", policyPath, "--max-tokens", "1500", "--", process.execPath, SERVER]);
  const said = async (client, args) => {
    try {
      return JSON.stringify(await client.callTool({ name: "list_entities", arguments: args }));
    } catch (e) {
      return `error ${e.code}: ${e.message}`;
    }
  };
  try {
    assert.equal(JSON.stringify(await inProcess.listTools()), JSON.stringify(await proxied.listTools()));
    const listed = (await proxied.listTools()).tools.find((t) => t.name === "list_entities");
    assert.equal(listed.inputSchema.properties.fields.type, "array");
    for (const args of [{ fields: ["id", "name"] }, { fields: "id,name", detail: "full" }, { fields: ["$.entities[*].entity_type"] }, { fields: ["$.["] }]) {
      const ours = await said(inProcess, args);
      assert.equal(ours, await said(proxied, args), JSON.stringify(args));
      if (args.fields[0] === "$.[") assert.match(ours, /`fields`: `\$\.\[` is not a field/);
      else assert.match(ours, /showing only the fields/);
    }
  } finally {
    await inProcess.close();
    await proxied.close();
  }
});

test("mcp.shape refuses what is not an SDK server, or a server with no tools yet", async () => {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  assert.throws(() => mcp.shape({}, null), /not an MCP server of the TypeScript SDK/);
  const empty = new McpServer({ name: "x", version: "1" });
  assert.throws(() => mcp.shape(empty, null), /register its tools first/);
  empty.registerTool("t", {}, async () => ({ content: [] }));
  assert.throws(() => mcp.shape(empty, null, { maxTokens: 0 }), /maxTokens must be a whole number >= 1/);
  assert.throws(() => mcp.shape(empty, null, { budget: 10 }), /unknown option "budget"/);
  assert.throws(() => mcp.shape(empty, "policy.toml"), /must be a Policy/);
  assert.equal(mcp.shape(empty, Policy.builtin()), empty);
});
